/**
 * The faults of a run, one every `everyMs`, cycling through the kinds and the nodes so each kind
 * meets nodes of both chains: kill (SIGKILL; started again after `downMs`), restart (a graceful
 * stop and start), pause (frozen for `downMs`, so it lags when it resumes) and cut (taken off the
 * stack's network for `downMs`: the gateway cannot reach it, and it cannot follow the chain).
 */
import { exec } from "./exec.js";
import type { FaultRecord } from "./report.js";
import type { FaultNode, FaultStack } from "./stack.js";

export const FAULT_KINDS: readonly FaultRecord["kind"][] = ["kill", "pause", "cut", "restart"];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The k-th fault: kinds in turn, nodes shifted by one every full round of kinds. */
export function faultPlan(k: number, nodes: readonly FaultNode[]): { kind: FaultRecord["kind"]; node: FaultNode } {
  return { kind: FAULT_KINDS[k % FAULT_KINDS.length], node: nodes[(k + Math.floor(k / FAULT_KINDS.length)) % nodes.length] };
}

/** One fault on one node; resolves once the node is given back. */
async function inject(stack: FaultStack, kind: FaultRecord["kind"], node: FaultNode, downMs: number): Promise<number> {
  switch (kind) {
    case "kill":
      await exec("docker", ["kill", node.container]);
      await sleep(downMs);
      await exec("docker", ["start", node.container]);
      break;
    case "restart":
      await exec("docker", ["restart", "-t", "10", node.container]);
      break;
    case "pause":
      await exec("docker", ["pause", node.container]);
      await sleep(downMs);
      await exec("docker", ["unpause", node.container]);
      break;
    case "cut":
      await exec("docker", ["network", "disconnect", stack.network, node.container]);
      await sleep(downMs);
      // Back under its service name, as compose joined it.
      await exec("docker", ["network", "connect", "--alias", node.service, stack.network, node.container]);
      break;
  }
  return Date.now();
}

/** Faults at `start + everyMs`, `start + 2 everyMs`... while one still ends `quietMs` before `until`. */
export async function injectFaults(stack: FaultStack, opts: { start: number; until: number; everyMs: number; downMs: number; quietMs: number }, log: (s: string) => void): Promise<FaultRecord[]> {
  const out: FaultRecord[] = [];
  for (let k = 0; ; k++) {
    const at = opts.start + (k + 1) * opts.everyMs;
    if (at + opts.downMs + opts.quietMs > opts.until) return out;
    await sleep(Math.max(0, at - Date.now()));
    const { kind, node } = faultPlan(k, stack.nodes);
    const t0 = Date.now();
    log(`fault ${k + 1}: ${kind} ${node.service}`);
    const restoredAt = await inject(stack, kind, node, opts.downMs);
    out.push({ kind, node: node.service, chain: node.chain, at: t0, restoredAt });
  }
}
