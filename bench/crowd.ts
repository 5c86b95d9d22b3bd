/**
 * What another client's calls take while many addresses attack the gateway at once (issue 51,
 * item 5): devtools/crowd.js holds, from each of --addresses loopback addresses, WebSockets with an
 * unfinished message, HTTP/2 streams with slow bodies and connections that never read, reopening
 * what the gateway closes. The gateway runs the generated config with the production limits and
 * the threads production gives HAProxy on a tier of that many cores (every core: 2 on the minimum
 * tier, 4 on the recommended one), before a fixed-reply node. Printed per thread count: the other
 * client's p50, p99 and max beside the machine's load, and whether HAProxy went back to idle once
 * the crowd was gone. A measurement, not a pass or fail: docs/gateway.md states the bound it shows.
 *
 *   npx tsx bench/crowd.ts --help   (bench/crowdArgs.ts)
 */
import { Agent, request } from "node:https";
import { join } from "node:path";
import { runtimeCommand } from "../gateway/runtimeApi.js";
import { GATEWAY_LIMIT_DEFAULTS } from "../gateway/build.js";
import { freePort } from "../devtools/net.js";
import { loadAverage, machine } from "./machine.js";
import { selfSignedCert, startBenchGateway } from "./gateway.js";
import { benchProcesses, runBench } from "./processes.js";
import { CROWD_USAGE, parseCrowdArgs } from "./crowdArgs.js";

const parsed = parseCrowdArgs(process.argv.slice(2));
if (parsed === "help") {
  console.log(CROWD_USAGE);
  process.exit(0);
}
if ("error" in parsed) {
  console.error(`bench/crowd.ts: ${parsed.error}\n${CROWD_USAGE}`);
  process.exit(2);
}
const args = parsed;
const PREFIX = "crowd_Key_q8W3e5R7t9Y1u3I5o7P9_";
const keyOf = (i: number) => `${PREFIX}${String(i).padStart(4, "0")}`;
const VICTIM = "127.0.0.250";
const CALL = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
/** How long the crowd builds up before the other client starts, and how long HAProxy gets to go idle after. */
const BUILD_UP_MS = 3000;
const SETTLE_MS = 15_000;

const procs = benchProcesses("rpcstack-crowd");

/** One call from the other address on its kept-alive connection: milliseconds, or what went wrong. */
const victimCall = (origin: string, agent: Agent) =>
  new Promise<number | string>((resolve) => {
    const t0 = process.hrtime.bigint();
    const u = new URL(`${origin}/gateway/eth/rpc-http/${keyOf(9999)}`);
    const r = request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST", agent, rejectUnauthorized: false, headers: { "Content-Type": "application/json" }, timeout: 10_000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode === 200 ? Number(process.hrtime.bigint() - t0) / 1e6 : `status ${res.statusCode}`));
    });
    r.on("timeout", () => r.destroy(new Error("no answer in 10 s")));
    r.on("error", (e) => resolve(e.message));
    r.end(CALL);
  });

const info = async (socket: string) => {
  const text = await runtimeCommand(socket, "show info");
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, "m").exec(text)?.[1]);
  return { currConns: field("CurrConns"), idlePct: field("Idle_pct") };
};

const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

runBench(procs, async () => {
  const m = machine();
  console.log(`crowd bench: ${m.haproxy}; ${m.cores} cores (${m.cpu ?? "?"}); ${args.addresses} addresses, ${args.calls} calls every ${args.intervalMs} ms; maxBodyKiB ${args.maxBodyKiB}`);
  selfSignedCert(procs.work);
  const [upPort, wsPort] = [await freePort(), await freePort()];
  procs.start("upstream", process.execPath, [join(__dirname, "upstream.js"), String(upPort), String(wsPort)]);
  await new Promise((r) => setTimeout(r, 500));
  const keys = [...Array.from({ length: args.addresses }, (_, i) => ({ name: `attacker${i}`, key: keyOf(i) })), { name: "victim", key: keyOf(9999) }];
  for (const threads of args.threads) {
    const gw = await startBenchGateway({
      work: procs.work, name: `gw${threads}`, threads, keys,
      chains: [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: `http://127.0.0.1:${upPort}`, rpcWs: `ws://127.0.0.1:${wsPort}` } }],
      // The production bounds per address and key (the bench's own lifts them for wrk's one address).
      over: { ...GATEWAY_LIMIT_DEFAULTS, maxConnections: 6000, wsMaxConnectionsPerKey: 64, rateLimitPerSecond: 100_000, maxBodyBytes: args.maxBodyKiB * 1024 },
    });
    procs.adopt(gw.proc);
    for (let i = 0; i < 50; i++) {
      try {
        await info(gw.adminSocket);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const crowd = procs.start("crowd", process.execPath, [join(__dirname, "../devtools/crowd.js"), new URL(gw.origin).port, String(args.addresses), PREFIX]);
    await new Promise((r) => setTimeout(r, BUILD_UP_MS));
    const loadBefore = loadAverage();
    const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: VICTIM } as never);
    const times: number[] = [];
    const failures: string[] = [];
    for (let k = 0; k < args.calls; k++) {
      const r = await victimCall(gw.origin, agent);
      if (typeof r === "number") times.push(r);
      else failures.push(r);
      await new Promise((res) => setTimeout(res, args.intervalMs));
    }
    const during = await info(gw.adminSocket);
    const loadAfter = loadAverage();
    crowd.kill("SIGTERM");
    agent.destroy();
    // Once the crowd is gone its sessions must end: connections back to none, HAProxy idle.
    const t0 = Date.now();
    let after = await info(gw.adminSocket);
    while ((after.currConns > 0 || after.idlePct < 90) && Date.now() - t0 < SETTLE_MS) {
      await new Promise((r) => setTimeout(r, 250));
      after = await info(gw.adminSocket);
    }
    // What is left, by frontend and backend, when the crowd's sessions did not all end.
    let left = "";
    if (after.currConns > 0) {
      const counts: Record<string, number> = {};
      for (const m of (await runtimeCommand(gw.adminSocket, "show sess")).matchAll(/ fe=(\S+) be=(\S+) srv=(\S+)/g)) counts[`${m[1]}/${m[2]}`] = (counts[`${m[1]}/${m[2]}`] ?? 0) + 1;
      left = ` (sessions left: ${JSON.stringify(counts)})`;
    }
    const sorted = [...times].sort((a, b) => a - b);
    const ms = (v: number | undefined) => (v === undefined ? "-" : `${Math.round(v)} ms`);
    console.log(`${threads} thread${threads > 1 ? "s" : ""}: other client ${times.length}/${args.calls} answered, p50 ${ms(pct(sorted, 0.5))}, p99 ${ms(pct(sorted, 0.99))}, max ${ms(sorted.at(-1))}` +
      `${failures.length ? `, failed: ${JSON.stringify(failures.slice(0, 5))}` : ""}; load average ${loadBefore.join(" ")} -> ${loadAfter.join(" ")}; ` +
      `during: ${during.currConns} connections, idle ${during.idlePct}%; after the crowd: ${after.currConns} connections${left}, idle ${after.idlePct}% within ${Math.round((Date.now() - t0) / 1000)} s`);
    process.kill(-gw.pid, "SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
  }
});
