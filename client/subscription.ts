/**
 * A subscription that outlives its badges: before a badge runs out, a socket with a fresh one
 * subscribes beside the current one, which is closed a little after; each notification reaches
 * the caller once. With a project key it is one socket for the subscription's life.
 */
import type { BadgeKeys } from "./badge.js";
import { RelayError } from "./errors.js";

/** The WebSocket the client needs: the browser's, or a package's with the same shape (such as `ws`). */
export interface WebSocketLike {
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(): void;
}

/** A subscription the caller ends. */
export interface Subscription {
  close(): void;
}

/** How long a badge subscription waits before it opens again on a fresh badge. */
const RESUBSCRIBE_DELAY_MS = 1000;
/** Notifications remembered to drop the second copy while a renewed socket overlaps the old one. */
const RECENT_NOTIFICATIONS = 256;
/** How long the old socket stays open once its successor holds the subscription. */
const OVERLAP_MS = 2000;

/** Opens a socket, subscribes and resolves once the node has answered; later notifications go to the callback. */
export type OpenSubscription = (onNotification: (params: any) => void) => Promise<{ ws: WebSocketLike; chainId: string }>;

export async function subscribeRenewing(open: OpenSubscription, badge: BadgeKeys | undefined, onMessage: (params: any) => void, onError?: (e: RelayError) => void): Promise<Subscription> {
  let closedByCaller = false;
  let current: WebSocketLike | undefined;
  let renewal: ReturnType<typeof setTimeout> | undefined;
  // While two sockets overlap, a notification arrives on both: delivered once, by its result
  // (the node gives each socket's subscription its own id). Outside an overlap every
  // notification is delivered, a repeated result included.
  const recent = new Set<string>();
  let overlaps = 0;
  const deliver = (params: any) => {
    const seen = JSON.stringify(params?.result ?? params);
    if (overlaps > 0 && recent.has(seen)) return;
    recent.add(seen);
    if (recent.size > RECENT_NOTIFICATIONS) recent.delete(recent.values().next().value!);
    onMessage(params);
  };
  const again = (chainId: string) => (e: RelayError) => onError?.(new RelayError("connection", `${chainId}: the subscription ended and could not be made again with a fresh badge: ${e.message}`, { chainId }));
  /** A socket with a fresh badge beside `from`; `current` moves to it once it holds the subscription. */
  const renew = async (from: WebSocketLike) => {
    overlaps++;
    try {
      await attach();
    } catch {
      // The current socket still delivers: another try a little later, until the gateway
      // closes it (then onclose subscribes again, and says so if it cannot).
      if (!closedByCaller && from === current) renewal = setTimeout(() => void renew(from), RESUBSCRIBE_DELAY_MS);
    } finally {
      // Notifications the old socket already had in flight arrive within the overlap.
      setTimeout(() => overlaps--, OVERLAP_MS + 1000);
    }
  };
  const attach = async (): Promise<void> => {
    const { ws, chainId } = await open(deliver);
    if (closedByCaller) return void ws.close();
    // The old socket is closed only once the new one holds the subscription, and a little
    // later still: what it had in flight is delivered (once), nothing is missed.
    const previous = current;
    current = ws;
    if (previous) setTimeout(() => previous.close(), OVERLAP_MS);
    ws.onerror = () => onError?.(new RelayError("connection", `${chainId}: WebSocket error`, { chainId }));
    // A badge's socket is renewed before the badge runs out. Should the gateway close it
    // anyway (its allowance spent, a gateway restart), the same subscription again with a fresh badge.
    ws.onclose = () => {
      if (closedByCaller || !badge || ws !== current) return;
      badge.invalidate();
      setTimeout(() => {
        if (closedByCaller || ws !== current) return;
        attach().catch(again(chainId));
      }, RESUBSCRIBE_DELAY_MS);
    };
    if (badge) {
      clearTimeout(renewal);
      renewal = setTimeout(() => {
        if (!closedByCaller && ws === current) void renew(ws);
      }, badge.renewsIn());
    }
  };
  await attach();
  return {
    close: () => {
      closedByCaller = true;
      clearTimeout(renewal);
      current?.close();
    },
  };
}
