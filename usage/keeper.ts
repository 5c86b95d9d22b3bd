/**
 * The usage keeper: every interval it reads the gateway's usage table through HAProxy's runtime
 * API, absorbs it into the ledger and saves the ledger; it serves the ledger to Prometheus
 * (/metrics) and to billing (/usage).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { runtimeCommand } from "../gateway/runtimeApi.js";
import { absorb, sameProcess, type LedgerState } from "./ledger.js";
import { usageMetrics } from "./metrics.js";
import { dayRows, isDay } from "./report.js";
import { randomBytes } from "node:crypto";
import type { CounterStore } from "./counterStore.js";
import { mapLines, quotaTotals, readMap, sendSeeds } from "./quotaSeed.js";
import { KEY_RATE_TABLE } from "../gateway/usageContract.js";
import { parseRates } from "./sharedRate.js";
import { LedgerFileError, loadLedger, saveLedger } from "./store.js";
import { READ_COMMAND, parseReading, type Reading } from "./table.js";

export interface KeeperOptions {
  /** The runtime API: HOST:PORT or a Unix socket's path. */
  readonly admin: string;
  readonly file: string;
  readonly intervalMs: number;
  readonly listen: { readonly host: string; readonly port: number };
  readonly log: (line: string) => void;
  /** The clock (tests pass their own). */
  readonly now?: () => Date;
  readonly read?: (admin: string) => Promise<Reading>;
  /**
   * Called once when HAProxy has not answered for this long (0 or absent: never). A container
   * that shares HAProxy's network namespace keeps the old one when HAProxy's container restarts:
   * only a restart of its own joins the new one.
   */
  readonly giveUpMs?: number;
  readonly onGiveUp?: () => void;
  /** HAProxy's quota_used.map (gateway/quotas.ts): seeded from the ledger when a new process answers. */
  readonly quotaUsedMap?: string;
  /**
   * The counter store the gateway's replicas share: each reading publishes this ledger's quota
   * counts there and adds the other replicas' to quota_used.map (with quotaUsedMap).
   */
  readonly store?: CounterStore;
  /** HAProxy's rate_others.map (gateway/limits.ts): with a store, each reading puts the other replicas' calls per key name there. */
  readonly rateOthersMap?: string;
}

export const readUsage = async (admin: string): Promise<Reading> => parseReading(await runtimeCommand(admin, READ_COMMAND, 5_000));

export interface Keeper {
  /** The port it serves on, once it listens. */
  readonly ready: Promise<number>;
  /** One last reading, saved; then it stops serving. False when that last save failed. */
  stop(): Promise<boolean>;
}

/** Loads the ledger (throws when its file cannot be read: nothing is started then), reads at once, then every interval. */
export function startKeeper(o: KeeperOptions): Keeper {
  let state: LedgerState = loadLedger(o.file);
  // Named once, with the ledger, and saved before anything is published under the name: a name
  // lost before it was saved would leave its counts in the store as another replica's.
  if (o.store && !state.id) {
    state = { ...state, id: randomBytes(8).toString("hex") };
    try {
      saveLedger(o.file, state);
    } catch (e) {
      throw new LedgerFileError(`${(e as Error).message}: the ledger must keep its new id before counts are shared under it`);
    }
  }
  const now = o.now ?? (() => new Date());
  const read = o.read ?? readUsage;
  let haproxyProblem: string | undefined;
  let saveProblem: string | undefined;
  let lastReadAt: string | undefined;
  const reported = new Set<string>();
  let failingSince: number | undefined;
  let storeProblem: string | undefined;
  /** What the other replicas spent, as the store last said: kept while it cannot be reached (never given back). */
  let others = new Map<string, number>();
  /** Whether `others` is the store's word yet: until then a running process keeps the map it has. */
  let othersKnown = !o.store;
  let sent: string | undefined;
  let sentRates: string | undefined;
  let ratesProblem: string | undefined;

  /** rate_others.map: the other live replicas' calls per key name in their rate windows, sent when it changed. */
  const sendRates = async (map: string, store: CounterStore) => {
    const own = parseRates(await runtimeCommand(o.admin, `show table ${KEY_RATE_TABLE}`, 5_000));
    const others = await store.exchangeRates(state.id!, own, now().getTime());
    const lines = mapLines(others);
    if (lines === sentRates) return;
    await sendSeeds(o.admin, map, lines);
    sentRates = lines;
  };

  /** quota_used.map: the seed of the running process plus the other replicas' counts; sent when it changed, or to a new process. */
  const sendQuotaUsed = async (map: string, fresh: boolean, at: Date) => {
    if (o.store) {
      try {
        others = await o.store.exchange(state.id!, quotaTotals(state, at), at);
        othersKnown = true;
        if (storeProblem) o.log("the counter store answers again");
        storeProblem = undefined;
      } catch (e) {
        if ((e as Error).message !== storeProblem) o.log(`the counter store did not answer (${(e as Error).message}): quotas count the other replicas' calls as last read`);
        storeProblem = (e as Error).message;
      }
    }
    // A keeper started beside a running process that the store cannot tell about the others yet
    // sends nothing: the map the process has (its seed and the others' last counts) stays.
    if (!fresh && !othersKnown) return;
    const lines = mapLines(Object.entries(state.seed ?? {}), others);
    if (!fresh && lines === sent) return;
    await sendSeeds(o.admin, map, lines).then(
      () => {
        sent = lines;
        if (fresh) o.log(`a new HAProxy process: quotas seeded with ${Object.keys(state.seed ?? {}).length} periods' calls from the ledger`);
      },
      (e: Error) => o.log(fresh ? `a new HAProxy process, and its quotas could not be seeded (${e.message}): it counts them from 0` : `quota_used.map could not be updated (${e.message})`),
    );
  };

  const tick = async (): Promise<void> => {
    let reading: Reading;
    try {
      reading = await read(o.admin);
    } catch (e) {
      const why = (e as Error).message;
      if (why !== haproxyProblem) o.log(`HAProxy did not answer (${why}); the ledger is kept, trying again every ${o.intervalMs / 1000} s`);
      haproxyProblem = why;
      failingSince ??= now().getTime();
      if (o.giveUpMs && now().getTime() - failingSince >= o.giveUpMs) {
        o.log(`HAProxy has not answered for ${Math.round(o.giveUpMs / 1000)} s: giving up`);
        failingSince = Number.POSITIVE_INFINITY;
        o.onGiveUp?.();
      }
      return;
    }
    failingSince = undefined;
    if (haproxyProblem) o.log("HAProxy answers again");
    haproxyProblem = undefined;
    for (const p of reading.problems) if (!reported.has(p) && reported.size < 1000) (reported.add(p), o.log(`skipped ${p}`));
    const at = now();
    const before = state;
    state = absorb(state, reading, at);
    const fresh = !sameProcess(before.last?.process, reading.process);
    if (fresh) state = { ...state, seed: Object.fromEntries(quotaTotals(before, at)) };
    // A ledger from before seeds were kept, beside the process it seeded: its seed is what that map holds.
    else if (o.quotaUsedMap && !state.seed) state = { ...state, seed: Object.fromEntries(await readMap(o.admin, o.quotaUsedMap).catch(() => new Map<string, number>())) };
    if (fresh) [sent, sentRates] = [undefined, undefined];
    lastReadAt = at.toISOString();
    // Saved before the store is asked: a store that hangs never holds back what was counted.
    save();
    if (o.quotaUsedMap) await sendQuotaUsed(o.quotaUsedMap, fresh, at);
    if (o.rateOthersMap && o.store) {
      await sendRates(o.rateOthersMap, o.store).then(
        () => (ratesProblem = undefined),
        (e: Error) => {
          if (e.message !== ratesProblem) o.log(`the other replicas' rates could not be exchanged (${e.message}): their last ones stay`);
          ratesProblem = e.message;
        },
      );
    }
  };

  const save = () => {
    try {
      saveLedger(o.file, state);
      if (saveProblem) o.log("the ledger is saved again");
      saveProblem = undefined;
    } catch (e) {
      if ((e as Error).message !== saveProblem) o.log(`${(e as Error).message}; the counts are kept in memory and saved at the next reading`);
      saveProblem = (e as Error).message;
    }
  };

  // Ticks never overlap: each waits for the one before; one that fails unexpectedly does not stop the next.
  const guarded = () => tick().catch((e: Error) => o.log(`a reading failed: ${e.message}`));
  let running: Promise<void> = guarded();
  const timer = setInterval(() => (running = running.then(guarded)), o.intervalMs);

  const server = createServer((req, res) => answer(req, res));
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://keeper");
    const send = (status: number, type: string, body: string) => res.writeHead(status, { "Content-Type": type }).end(body);
    if (req.method !== "GET") return send(405, "text/plain", "GET only\n");
    if (url.pathname === "/metrics") return send(200, "text/plain; version=0.0.4; charset=utf-8", usageMetrics(state));
    if (url.pathname === "/healthz") return send(saveProblem ? 503 : 200, "application/json", JSON.stringify({ saved: !saveProblem, saveProblem, haproxyProblem, lastReadAt }) + "\n");
    if (url.pathname === "/usage") {
      const p = { since: url.searchParams.get("since") ?? undefined, until: url.searchParams.get("until") ?? undefined, key: url.searchParams.get("key") ?? undefined };
      const bad = (["since", "until"] as const).find((k) => p[k] !== undefined && !isDay(p[k]!));
      if (bad) return send(400, "application/json", JSON.stringify({ error: `${bad} must be a day written YYYY-MM-DD` }) + "\n");
      // The ledger's id lets a report over several replicas refuse one ledger given twice.
      return send(200, "application/json", JSON.stringify({ rows: dayRows(state, p), ...(state.id ? { ledger: state.id } : {}) }) + "\n");
    }
    send(404, "text/plain", "GET /metrics, /usage?since=YYYY-MM-DD&until=YYYY-MM-DD&key=NAME or /healthz\n");
  };
  const ready = new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.listen.port, o.listen.host, () => resolve((server.address() as { port: number }).port));
  });
  ready.catch(() => clearInterval(timer));

  return {
    ready,
    async stop() {
      clearInterval(timer);
      await running;
      await guarded();
      await new Promise<void>((r) => server.close(() => r()));
      await o.store?.close().catch(() => {});
      return !saveProblem;
    },
  };
}
