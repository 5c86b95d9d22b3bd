/**
 * rpcstack smoke test: one relay per chain and interface through the public gateway, with the
 * client library and the first project key (RPCSTACK_SMOKE_KEY). Prints one JSON line of block
 * numbers; exits 1 naming every chain and interface that failed (0 with --report-only).
 */
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { createClient, type RpcClient } from "../client/index.js";
import { INTERFACES } from "../gateway/types.js";
import { COSMOS_LATEST_BLOCK, HEAD_METHOD, headOf, type SmokeCheck } from "./plan.js";
import { SMOKE_PREFIX, type SmokeResult } from "./result.js";


export async function runSmoke(base: string, key: string, plan: readonly SmokeCheck[], timeoutMs: number): Promise<SmokeResult> {
  // Relays run at once; the result lists them in the plan's order, so a failure reads the same every time.
  const outcomes = await Promise.all(
    plan.map(async (c): Promise<SmokeResult> => {
      const opts = { baseUrl: base, privateKey: key, chainIds: c.chainId, chainPaths: { [c.chainId]: c.path }, timeoutMs, WebSocket: WebSocket as any };
      try {
        let reply: unknown;
        if (c.iface === "rest") {
          reply = await createClient({ ...opts, rpcInterface: "rest" }).sendRelay({ method: "GET", url: COSMOS_LATEST_BLOCK });
        } else {
          const client: RpcClient = createClient({ ...opts, rpcInterface: c.kind === "cosmos" ? "tendermintrpc" : "jsonrpc" });
          const relay = { method: HEAD_METHOD[c.kind], params: c.kind === "cosmos" ? {} : [] };
          reply = c.iface === "rpc" ? await client.sendRelayWs(relay) : await client.sendRelay(relay);
        }
        const block = headOf(c.kind, c.iface, reply);
        if (block === undefined) throw new Error(`reply holds no block number: ${JSON.stringify(reply).slice(0, 200)}`);
        return { ok: [{ chainId: c.chainId, iface: c.iface, block }], failed: [] };
      } catch (e) {
        return { ok: [], failed: [{ chainId: c.chainId, iface: c.iface, error: (e as Error).message }] };
      }
    }),
  );
  return { ok: outcomes.flatMap((o) => o.ok), failed: outcomes.flatMap((o) => o.failed) };
}

const KINDS: readonly string[] = Object.keys(HEAD_METHOD);

/** The plan from RPCSTACK_SMOKE_PLAN, or why it is not one (plan/views.ts writes it). */
function parsePlan(text: string): SmokeCheck[] | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return "RPCSTACK_SMOKE_PLAN is not JSON";
  }
  if (!Array.isArray(v) || !v.length) return "RPCSTACK_SMOKE_PLAN must be a non-empty JSON list of {chainId, path, iface, kind}";
  const wrong = v.findIndex((c) => !(typeof c?.chainId === "string" && typeof c.path === "string" && (INTERFACES as readonly string[]).includes(c.iface) && KINDS.includes(c.kind)));
  if (wrong >= 0) return `RPCSTACK_SMOKE_PLAN[${wrong}] must be {chainId, path, iface: ${INTERFACES.join("|")}, kind: ${KINDS.join("|")}} (got ${JSON.stringify(v[wrong]).slice(0, 200)})`;
  return v as SmokeCheck[];
}

export const USAGE = `usage: RPCSTACK_SMOKE_BASE=URL RPCSTACK_SMOKE_KEY=KEY RPCSTACK_SMOKE_PLAN=JSON tsx smoke/cli.ts [options]
  One relay per chain and interface of the plan through the gateway at RPCSTACK_SMOKE_BASE, with
  the client library and the project key RPCSTACK_SMOKE_KEY (\`pulumi up\` runs it, bundled, after the gateway).
  RPCSTACK_SMOKE_INSECURE_LOCALHOST=1 trusts a self-signed certificate on localhost only.
  --report-only          print the results and exit 0 even when a relay failed
  --timeout-seconds N    per relay (20)
  --help                 this text
Prints one line ${SMOKE_PREFIX.trim()} {"ok":[...],"failed":[...]}.
Exit: 0 every relay answered (or --report-only), 1 a relay failed, 2 bad arguments or environment.`;

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { "report-only": { type: "boolean" }, "timeout-seconds": { type: "string" }, help: { type: "boolean" } } }));
  } catch (e) {
    const m = /^Unknown option '([^']+)'/.exec((e as Error).message);
    process.stderr.write(`rpcstack smoke: ${m ? `unknown option ${m[1]}` : (e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const timeout = Number(values["timeout-seconds"] ?? "20");
  if (!Number.isFinite(timeout) || timeout <= 0) {
    process.stderr.write(`rpcstack smoke: --timeout-seconds must be a positive number (got "${values["timeout-seconds"]}")\n`);
    return 2;
  }
  const missing = ["RPCSTACK_SMOKE_BASE", "RPCSTACK_SMOKE_KEY", "RPCSTACK_SMOKE_PLAN"].filter((v) => !env[v]);
  if (missing.length) {
    process.stderr.write(`rpcstack smoke: set ${missing.join(", ")}\n${USAGE}\n`);
    return 2;
  }
  const base = env.RPCSTACK_SMOKE_BASE!;
  const key = env.RPCSTACK_SMOKE_KEY!;
  const plan = parsePlan(env.RPCSTACK_SMOKE_PLAN!);
  const bad = !/^https?:\/\/[^\s/]+/.test(base) ? `RPCSTACK_SMOKE_BASE must be an http:// or https:// URL (got "${base}")` : typeof plan === "string" ? plan : undefined;
  if (bad) {
    process.stderr.write(`rpcstack smoke: ${bad}\n`);
    return 2;
  }
  // The local stack's certificate is self-signed; trusting it is allowed for loopback only.
  if (env.RPCSTACK_SMOKE_INSECURE_LOCALHOST === "1") {
    const host = new URL(base).hostname;
    if (host !== "localhost" && host !== "127.0.0.1") {
      process.stderr.write(`rpcstack smoke: refusing to skip certificate checks for ${host}\n`);
      return 2;
    }
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
  }
  const res = await runSmoke(base, key, plan as SmokeCheck[], timeout * 1000);
  process.stdout.write(`${SMOKE_PREFIX}${JSON.stringify(res)}\n`);
  for (const f of res.failed) process.stderr.write(`rpcstack smoke: ${f.chainId} ${f.iface} failed: ${f.error}\n`);
  return res.failed.length && !values["report-only"] ? 1 : 0;
}

if (require.main === module) main(process.argv.slice(2)).then((c) => process.exit(c));
