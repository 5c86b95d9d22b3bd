/**
 * Quotas across gateway replicas: two real HAProxy processes serving the same keys, each with its
 * own usage keeper and ledger, sharing one real Redis (Debian's redis-server) as the counter store.
 * A key's quota holds for the two together: exactly, when calls move between the replicas slower
 * than the keepers exchange; within the stated bound when both are hammered at once. A key's rate
 * too: what it spent on one replica counts on the other.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RATE_OTHERS_FILE } from "../gateway/limits.js";
import { QUOTA_USED_FILE } from "../gateway/quotas.js";
import type { Quota } from "../gateway/types.js";
import { report } from "../cli/usage.js";
import { openCounterStore } from "../usage/counterStore.js";
import { startKeeper, type Keeper } from "../usage/keeper.js";
import { loadLedger } from "../usage/store.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startRecorder, type Recorder } from "./support/recorder.js";
import { startRedis, type RunningRedis } from "./support/redis.js";

const KEYS = [
  { name: "slow", key: "slow_Key_Z3xC6vB9nM2qW5eR8tY1uI4oP7aS" },
  { name: "busy", key: "busy_Key_Z3xC6vB9nM2qW5eR8tY1uI4oP7aS" },
  { name: "solo", key: "solo_Key_Z3xC6vB9nM2qW5eR8tY1uI4oP7aS" },
  { name: "sock", key: "sock_Key_Z3xC6vB9nM2qW5eR8tY1uI4oP7aS" },
  { name: "rate", key: "rate_Key_Z3xC6vB9nM2qW5eR8tY1uI4oP7aS" },
];
/** Calls a second per key (800 in the gateway's 10 s window), for the two replicas together. */
const RATE = 80;
const QUOTAS: Quota[] = [
  { name: "slow", calls: 10, per: "day" },
  { name: "busy", calls: 400, per: "day" },
  { name: "solo", calls: 1000, per: "month" },
  { name: "sock", calls: 5, per: "day" },
];
/** How often each keeper reads its HAProxy and exchanges with the store (production: 1 s). */
const INTERVAL_MS = 200;

let node: Recorder;
let redis: RunningRedis;
const gateways: RunningGateway[] = [];
const keepers: Keeper[] = [];
const keeperUrls: string[] = [];
const dirs: string[] = [];
const logs: string[] = [];

beforeAll(async () => {
  node = await startRecorder();
  redis = await startRedis();
  for (const replica of ["a", "b"]) {
    const gw = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url, rpcWs: node.wsUrl } }], KEYS, { rateLimitPerSecond: RATE, sharedRates: true }, undefined, undefined, undefined, QUOTAS);
    gateways.push(gw);
    const dir = mkdtempSync(join(tmpdir(), "rpcstack-replica-"));
    dirs.push(dir);
    const keeper = startKeeper({
      admin: join(gw.dir, "admin.sock"), file: join(dir, "usage.json"), intervalMs: INTERVAL_MS, listen: { host: "127.0.0.1", port: 0 },
      log: (l) => logs.push(`${replica}: ${l}`), quotaUsedMap: join(gw.dir, QUOTA_USED_FILE), rateOthersMap: join(gw.dir, RATE_OTHERS_FILE), store: openCounterStore(redis.url, (e) => logs.push(`${replica} store: ${e.message}`)),
    });
    keepers.push(keeper);
    keeperUrls.push(`http://127.0.0.1:${await keeper.ready}`);
  }
}, 60_000);
afterAll(async () => {
  await Promise.all(keepers.map((k) => k.stop()));
  await Promise.all(gateways.map((g) => g.stop()));
  await redis?.stop();
  await node?.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const call = async (gw: RunningGateway, key: string) =>
  (await fetch(`${gw.base}/gateway/eth/rpc-http/${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) })).status;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a quota shared by two gateway replicas through one counter store", () => {
  it("calls moving between the replicas slower than the keepers exchange: exactly the quota, then 429 on both", async () => {
    const before = node.seen.length;
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      statuses.push(await call(gateways[i % 2], KEYS[0].key));
      // Two exchanges: the other replica's keeper has read this answer and published it, this one has read it back.
      await pause(3 * INTERVAL_MS);
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429, 429, 429]);
    expect(node.seen.length - before).toBe(10);
    // Each ledger is named once, and holds only its own replica's calls (5 each): the report sums them.
    const ledgers = dirs.map((d) => loadLedger(join(d, "usage.json")));
    expect(new Set(ledgers.map((l) => l.id)).size).toBe(2);
    const slowCalls = ledgers.map((l) => Object.values(l.days).reduce((n, day) => n + (day["slow/eth/http"]?.calls ?? 0), 0));
    expect(slowCalls).toEqual([5, 5]);
    // npm run usage over both keepers: the key's 10 calls, once each; one keeper given twice is refused.
    const today = new Date().toISOString().slice(0, 10);
    const options = { period: { since: today, until: today, key: "slow" }, byDay: false, format: "json" as const };
    const rows = JSON.parse(await report({ ...options, sources: keeperUrls.map((url) => ({ url })) }));
    expect(rows.map((r: { calls: number; limited: number }) => [r.calls, r.limited])).toEqual([[10, 4]]);
    await expect(report({ ...options, sources: [{ url: keeperUrls[0] }, { url: keeperUrls[0] }] })).rejects.toThrow(/are the same ledger .*: its counts would be added twice/);
  }, 30_000);

  it("both replicas hammered at once: the overshoot stays within what the other replica relays in two exchanges", async () => {
    const before = node.seen.length;
    const started = Date.now();
    const perReplica = [0, 0];
    // 4 clients a replica, each one call at a time, until every client has seen a 429.
    await Promise.all(
      gateways.flatMap((gw, r) =>
        Array.from({ length: 4 }, async () => {
          for (;;) {
            const s = await call(gw, KEYS[1].key);
            if (s === 429) return;
            expect(s).toBe(200);
            perReplica[r]++;
          }
        }),
      ),
    );
    const seconds = (Date.now() - started) / 1000;
    const relayed = node.seen.length - before;
    // The bound (docs/accounts.md): a replica sees the other's calls at most two exchanges late, so it lets through at most what the other relayed in that time.
    const ratePerReplica = Math.max(...perReplica) / seconds;
    const bound = Math.ceil(ratePerReplica * ((2 * INTERVAL_MS) / 1000) * 1.5) + 4;
    console.log(`quota 400 on two replicas hammered at once: ${relayed} relayed (${perReplica.join(" + ")}) in ${seconds.toFixed(1)} s, ${ratePerReplica.toFixed(0)} calls/s a replica; overshoot ${relayed - 400}, bound ${bound}`);
    expect(relayed).toBeGreaterThanOrEqual(400);
    expect(relayed - 400).toBeLessThanOrEqual(bound);
    // Spent for both: once the keepers have exchanged, each answers 429.
    await pause(3 * INTERVAL_MS);
    expect([await call(gateways[0], KEYS[1].key), await call(gateways[1], KEYS[1].key)]).toEqual([429, 429]);
  }, 60_000);

  it("an open WebSocket on one replica sees what the other spends: its next message past the quota is refused", async () => {
    const ws = new WebSocket(`wss://localhost:${gateways[1].httpsPort}/gateway/eth/rpc/${KEYS[3].key}?secret=null`);
    await new Promise((r, j) => (ws.once("open", r), ws.once("error", j)));
    const replies: unknown[] = [];
    ws.on("message", (d) => replies.push(JSON.parse(String(d))));
    const closed = new Promise<[number, string]>((r) => ws.once("close", (c, why) => r([c, String(why)])));
    const send = (id: number) => ws.send(JSON.stringify({ jsonrpc: "2.0", id, method: "eth_blockNumber", params: [] }));
    send(1);
    await pause(3 * INTERVAL_MS);
    expect(replies).toHaveLength(1);
    // The other replica spends 4 of the 5 over HTTP: the socket's next call is the quota's last, the one after is past it.
    for (let i = 0; i < 3; i++) expect(await call(gateways[0], KEYS[3].key)).toBe(200);
    await pause(3 * INTERVAL_MS);
    send(2);
    await pause(3 * INTERVAL_MS);
    expect(replies).toHaveLength(2);
    send(3);
    expect((await closed)[1]).toMatch(/quota/);
    expect(replies).toHaveLength(2);
  }, 30_000);

  it("a key's rate: what it spent on one replica in the window counts on the other", async () => {
    const burst = async (gw: RunningGateway, calls: number | "until 429") => {
      let ok = 0;
      let refused = false;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (!refused && (calls === "until 429" || ok < calls)) {
            const s = await call(gw, KEYS[4].key);
            if (s === 429) refused = true;
            else ok++;
          }
        }),
      );
      return { ok, refused };
    };
    const started = Date.now();
    const a = await burst(gateways[0], 600);
    expect(a.refused).toBe(false);
    await pause(3 * INTERVAL_MS);
    const b = await burst(gateways[1], "until 429");
    const seconds = (Date.now() - started) / 1000;
    console.log(`a rate of ${RATE * 10} calls in 10 s on two replicas: ${a.ok} on one, then ${b.ok} on the other before a 429, in ${seconds.toFixed(1)} s`);
    // Alone, the second replica would let its own 800 through. HAProxy's window slides: what the
    // first spent counts a little less as its seconds age.
    expect(b.refused).toBe(true);
    expect(b.ok).toBeLessThan(RATE * 10 - 600 + 250);
  }, 60_000);

  it("a store that is connected but does not answer (paused): the keepers go on reading and saving their ledgers", async () => {
    const ledger = join(dirs[0], "usage.json");
    const calls = () => Object.values(loadLedger(ledger).days).reduce((n, day) => n + (day["solo/eth/http"]?.calls ?? 0), 0);
    process.kill(redis.pid, "SIGSTOP");
    try {
      for (let i = 0; i < 2; i++) expect(await call(gateways[0], KEYS[2].key)).toBe(200);
      // Within a few intervals, though each exchange waits out its timeout.
      const deadline = Date.now() + 6_000;
      while (calls() < 2 && Date.now() < deadline) await pause(INTERVAL_MS);
      expect(calls()).toBe(2);
    } finally {
      process.kill(redis.pid, "SIGCONT");
    }
  }, 30_000);

  it("a store that stops answering: each replica keeps the others' calls as last read, also across a restart of its keeper (nothing given back)", async () => {
    for (let i = 0; i < 4; i++) expect(await call(gateways[0], KEYS[2].key)).toBe(200);
    await pause(3 * INTERVAL_MS);
    await redis.stop();
    await pause(3 * INTERVAL_MS);
    // Replica b still counts a's 6: its remaining allowance says so, also once its keeper has
    // started again without the store.
    await keepers[1].stop();
    keepers[1] = startKeeper({
      admin: join(gateways[1].dir, "admin.sock"), file: join(dirs[1], "usage.json"), intervalMs: INTERVAL_MS, listen: { host: "127.0.0.1", port: 0 },
      log: (l) => logs.push(`b again: ${l}`), quotaUsedMap: join(gateways[1].dir, QUOTA_USED_FILE), store: openCounterStore(redis.url, () => {}),
    });
    await keepers[1].ready;
    await pause(3 * INTERVAL_MS);
    const res = await fetch(`${gateways[1].base}/gateway/eth/rpc-http/${KEYS[2].key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-remaining")).toBe(String(1000 - 7));
    expect(logs.join("\n")).toMatch(/the counter store did not answer/);
  }, 30_000);
});
