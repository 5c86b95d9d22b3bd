/** What `npm run up` says at its end: the stack's endpoints and a relay to try, or the program's own errors. */
import type { OutputMap } from "@pulumi/pulumi/automation";
import { NETWORKS, type ChainKind, type NetworkName } from "../config/networks/index.js";
import { headProbe } from "../gateway/heads.js";
import { INTERFACES } from "../gateway/types.js";

// The engine's own closing words, which say nothing of the cause.
const GENERIC = /^(update failed|preview failed|an unhandled error occurred|\d+ errors? occurred)/;

/**
 * The errors the program reported in the engine's output (its "error: ..." diagnostics, each with
 * its indented continuation lines), without the engine's generic ones; in order, each once.
 */
export function programErrors(output: string): string[] {
  const out: string[] = [];
  const lines = output.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)error: (.*)$/.exec(lines[i]);
    if (!m || GENERIC.test(m[2])) continue;
    const block = [m[2]];
    while (i + 1 < lines.length && lines[i + 1].trim() && /^\s*/.exec(lines[i + 1])![0].length > m[1].length) block.push(lines[++i].trim());
    const text = block.join("\n  ");
    if (!out.includes(text)) out.push(text);
  }
  return out;
}

export function elapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
}

interface ManifestChain {
  chainId: string;
  path: string;
  kind: ChainKind;
}

/** What the terminal shows when the stack is up: endpoints, the key, one relay, the time. */
export function summary(outputs: OutputMap, stack: string, readKeyCommand: string, took: string): string {
  const value = <T>(k: string) => outputs[k]?.value as T | undefined;
  const network = value<NetworkName>("network");
  const endpoints = value<Record<string, { chainId: string; endpoints: Record<string, string> }>>("endpoints") ?? {};
  const chains = value<{ chains: ManifestChain[] }>("providerManifest")?.chains ?? [];
  const blocks = value<Record<string, Record<string, number>>>("smokeBlockNumbers") ?? {};
  const lines: string[] = ["", `rpcstack: stack ${stack} is up (network ${network ?? "?"}) in ${took}.`];
  const banner = network ? NETWORKS[network]?.dev?.banner : undefined;
  if (banner) lines.push(banner);
  lines.push("", "Endpoints (your project key goes where <KEY> is):");
  for (const e of Object.values(endpoints)) {
    for (const url of Object.values(e.endpoints)) lines.push(`  ${e.chainId.padEnd(8)} ${url}`);
  }
  // The engine hands outputs back with their keys sorted: say the interfaces in the surface's order.
  const ifaceOrder = (i: string) => {
    const k = (INTERFACES as readonly string[]).indexOf(i);
    return k < 0 ? INTERFACES.length : k;
  };
  const smoke = Object.entries(blocks).flatMap(([id, byIface]) =>
    Object.entries(byIface)
      .sort(([a], [b]) => ifaceOrder(a) - ifaceOrder(b) || a.localeCompare(b))
      .map(([iface, n]) => `${id} ${iface} at block ${n}`),
  );
  if (smoke.length) lines.push("", `Smoke test relays through the gateway: ${smoke.join(", ")}.`);
  lines.push("", "The project key is a Pulumi secret (rpcstack:projectKeys); print it with:", `  ${readKeyCommand}`);
  const target = chains.find((c) => c.kind === "starknet") ?? chains.find((c) => c.kind === "evm");
  const url = target && endpoints[target.path]?.endpoints.rpcHttp;
  if (target && url) {
    const body = headProbe(target.kind);
    // -k: the local stack's certificate is self-signed.
    lines.push(
      "",
      `One relay (${target.chainId}'s head block):`,
      `  KEY=$(${readKeyCommand} | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8"))[0].key')`,
      `  curl -sk ${url.replace("<KEY>", "$KEY")} -H 'Content-Type: application/json' -d '${body}'`,
    );
  }
  return `${lines.join("\n")}\n`;
}

