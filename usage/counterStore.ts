/**
 * The counter store replicas share (Redis, or Valkey, which speaks the same protocol): each keeper
 * publishes its ledger's quota counts and reads the others' (layout: usage/sharedQuota.ts). One
 * round trip a reading: the own fields written, both hashes' lifetimes renewed, both read back.
 */
import { createClient } from "@redis/client";
import { othersFrom, ownFields, periodHashes } from "./sharedQuota.js";

export interface CounterStore {
  /** Publishes ledger `me`'s totals (`<name>/<period>` -> calls) for `at`'s day and month; returns the other ledgers' sums by the same keys. */
  exchange(me: string, totals: ReadonlyMap<string, number>, at: Date): Promise<Map<string, number>>;
  close(): Promise<void>;
}

/** `redis://HOST:PORT[/DB]` (or `rediss://` with TLS): refused unless it is one. */
export function checkStoreUrl(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `"${url}" is not a URL (redis://HOST:PORT)`;
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") return `"${url}" is not a redis:// or rediss:// URL`;
  if (!u.hostname) return `"${url}" names no host`;
  return undefined;
}

/**
 * A client that connects in the background and again after a failure; a command while it is not
 * connected fails at once (no queue), so a store that is down costs a reading nothing but its log line.
 */
export function openCounterStore(url: string, onError: (e: Error) => void): CounterStore {
  const client = createClient({ url, disableOfflineQueue: true, socket: { connectTimeout: 2_000, reconnectStrategy: (retries) => Math.min(200 * 2 ** retries, 5_000) } });
  client.on("error", onError);
  const connecting = client.connect().catch(onError);
  return {
    async exchange(me, totals, at) {
      await connecting;
      const hashes = periodHashes(at);
      const tx = client.multi();
      for (const h of hashes) {
        const fields = ownFields(me, totals, h.period);
        if (Object.keys(fields).length) tx.hSet(h.key, fields);
        tx.expire(h.key, h.ttl);
      }
      for (const h of hashes) tx.hGetAll(h.key);
      const replies = await tx.exec();
      const read = replies.slice(-hashes.length) as unknown as Record<string, string>[];
      const others = new Map<string, number>();
      hashes.forEach((h, i) => othersFrom(read[i] ?? {}, h.period, me, others));
      return others;
    },
    async close() {
      await connecting;
      if (client.isOpen) await client.close();
    },
  };
}
