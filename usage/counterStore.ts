/**
 * The counter store replicas share (Redis, or Valkey, which speaks the same protocol): each keeper
 * publishes its ledger's quota counts and reads the others' (layout: usage/sharedQuota.ts). One
 * round trip a reading: the own fields written, both hashes' lifetimes renewed, both read back.
 */
import Redis from "ioredis";
import { RATE_PREFIX, RATE_REPLICAS, RATE_STALE_MS, sumRates } from "./sharedRate.js";
import { othersFrom, ownFields, periodHashes } from "./sharedQuota.js";

export interface CounterStore {
  /** Publishes ledger `me`'s totals (`<name>/<period>` -> calls) for `at`'s day and month; returns the other ledgers' sums by the same keys. */
  exchange(me: string, totals: ReadonlyMap<string, number>, at: Date): Promise<Map<string, number>>;
  /** Publishes replica `me`'s calls per key name in its rate window; returns the other live replicas' sums. */
  exchangeRates(me: string, calls: ReadonlyMap<string, number>, nowMs: number): Promise<Map<string, number>>;
  close(): Promise<void>;
}

/** `redis://HOST:PORT[/DB]` (or `rediss://` with TLS): refused unless it is one. */
export function checkStoreUrl(url: string): string | undefined {
  let u: URL;
  // Never the URL itself in a message: it may carry the store's password.
  try {
    u = new URL(url);
  } catch {
    return "is not a URL (redis://HOST:PORT)";
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") return `is a ${u.protocol}// URL, not a redis:// or rediss:// one`;
  if (!u.hostname) return "names no host";
  return undefined;
}

/** How long a transaction may take: past it the reading goes on with the others' last counts. */
export const STORE_TIMEOUT_MS = 2_000;

/** A transaction's replies; throws the first command's error, when the store dropped it, or past STORE_TIMEOUT_MS. */
async function exec(tx: ReturnType<Redis["multi"]>): Promise<unknown[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${STORE_TIMEOUT_MS} ms`)), STORE_TIMEOUT_MS)));
  const replies = await Promise.race([tx.exec(), late]).finally(() => clearTimeout(timer));
  if (!replies) throw new Error("the store dropped the transaction");
  const failed = replies.find(([e]) => e);
  if (failed) throw failed[0]!;
  return replies.map(([, r]) => r);
}

/**
 * A client that connects in the background and again after a failure; a command while it is not
 * connected fails at once (no queue), so a store that is down costs a reading nothing but its log line.
 */
export function openCounterStore(url: string, onError: (e: Error) => void): CounterStore {
  // A store that is connected but does not answer (paused, a half-open connection) fails a command
  // within commandTimeout: a reading never waits on it for long.
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2_000, commandTimeout: STORE_TIMEOUT_MS, retryStrategy: (times) => Math.min(200 * 2 ** times, 5_000) });
  client.on("error", onError);
  return {
    async exchange(me, totals, at) {
      const hashes = periodHashes(at);
      const tx = client.multi();
      for (const h of hashes) {
        const fields = ownFields(me, totals, h.period);
        if (Object.keys(fields).length) tx.hset(h.key, fields);
        tx.expire(h.key, h.ttl);
      }
      for (const h of hashes) tx.hgetall(h.key);
      const read = (await exec(tx)).slice(-hashes.length) as Record<string, string>[];
      const others = new Map<string, number>();
      hashes.forEach((h, i) => othersFrom(read[i] ?? {}, h.period, me, others));
      return others;
    },
    async exchangeRates(me, calls, nowMs) {
      const own = `${RATE_PREFIX}${me}`;
      const tx = client.multi().del(own);
      if (calls.size) tx.hset(own, Object.fromEntries([...calls].map(([k, n]) => [k, String(n)])));
      tx.pexpire(own, RATE_STALE_MS)
        .zadd(RATE_REPLICAS, nowMs, me)
        .zremrangebyscore(RATE_REPLICAS, 0, nowMs - RATE_STALE_MS)
        .zrangebyscore(RATE_REPLICAS, nowMs - RATE_STALE_MS, "+inf");
      const replies = await exec(tx);
      const others = (replies.at(-1) as string[]).filter((id) => id !== me);
      if (!others.length) return new Map();
      const read = client.multi();
      for (const id of others) read.hgetall(`${RATE_PREFIX}${id}`);
      return sumRates((await exec(read)) as Record<string, string>[]);
    },
    async close() {
      client.disconnect();
    },
  };
}
