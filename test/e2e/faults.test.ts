/**
 * A short fault run (bench/faults.ts) on a real Docker engine: a Sepolia stack with two replicas
 * per chain from the package's compose export, 16 clients over HTTP and WebSocket, one fault every
 * 15 s (kill, pause, cut, restart, each once); then both chains' node images replaced one node at
 * a time under load. The figures it prints are the run's; what it asserts is what a user of the
 * gateway would notice: no wrong or lagging answer, no read failed while a node was fit, no send
 * answered twice, no 503 during the rollout. Every name carries the run's prefix and is removed
 * in afterAll, also when it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runFaultRun, runRollout, type FaultRun } from "../../bench/faults.js";
import { FAULT_KINDS } from "../../bench/faults/inject.js";
import { startFaultStack, type FaultStack } from "../../bench/faults/stack.js";
import { engineMissing } from "../../devtools/docker.js";
import { describeNotRun } from "./notRun.js";

const missing = engineMissing();
const log = (s: string) => console.log(`faults e2e: ${s}`);

if (missing) {
  describeNotRun("fault run", missing);
} else {
  describe("fault run on a real Docker engine (two replicas per chain, 16 clients)", () => {
    let stack: FaultStack | undefined;
    let run: FaultRun;

    beforeAll(async () => {
      stack = await startFaultStack(log);
      // 4 faults of 6 s, 15 s apart, and a quiet end: every kind meets a node once.
      run = await runFaultRun(stack, { minutes: 1.25, everySeconds: 15, downSeconds: 6, clients: 16, paceMs: 100, tolerance: 6 }, log);
      console.log(`\n${run.table}\n\n${run.faultTable}\n`);
    }, 900_000);

    afterAll(() => stack?.down(), 300_000);

    it("injects every kind of fault, and both chains are called over HTTP and WebSocket", () => {
      expect(run.faults.map((f) => f.kind)).toEqual(FAULT_KINDS);
      for (const c of ["l1", "l2"] as const) {
        expect(run.judged.chains[c].byVia.http, c).toBeGreaterThan(100);
        expect(run.judged.chains[c].byVia.ws, c).toBeGreaterThan(100);
      }
    });

    it("every node killed, paused, cut or restarted is back in rotation on its own", () => {
      for (const f of run.faults) expect(f.fitAgainAt, `${f.kind} ${f.node}`).toBeDefined();
    });

    it("no answer is wrong or lagging, and no read failed while a node of its chain was fit", () => {
      const seen = (c: "l1" | "l2") => {
        const r = run.judged.chains[c];
        return { wrong: r.wrong, lagging: r.lagging, readsFailedWhileFit: r.readsFailedWhileFit, nodesDisagree: r.nodesDisagree };
      };
      const none = { wrong: 0, lagging: 0, readsFailedWhileFit: 0, nodesDisagree: 0 };
      const why = JSON.stringify({ failures: run.failures, gateway: run.gatewayErrors.slice(-40) }, null, 1);
      expect(seen("l1"), why).toEqual(none);
      expect(seen("l2"), why).toEqual(none);
    });

    it("a send that failed was one its node may have taken (502), never one the gateway dropped unsent", () => {
      for (const c of ["l1", "l2"] as const) {
        const sends = run.failures.filter((f) => f.chain === c && f.kind === "send");
        for (const s of sends) expect(s.error, JSON.stringify(s)).toBe("http 502");
      }
    });

    it("replacing both chains' node images one node at a time under load answers no 503", async () => {
      const r = await runRollout(stack!, { clients: 16, paceMs: 100 }, log);
      console.log(`rollout: ${r.calls} calls, ${r.unavailable} answered 503, errors ${JSON.stringify(r.errors)}, ${r.seconds} s`);
      expect(r.calls).toBeGreaterThan(100);
      expect(r.unavailable, JSON.stringify({ failures: r.failures, gateway: r.gatewayErrors.slice(-40) }, null, 1)).toBe(0);
      for (const n of stack!.nodes) expect(r.images[n.service], n.service).toBe(n.chain === "l1" ? r.expected.geth : r.expected.juno);
    }, 900_000);
  });
}
