/**
 * JSON-RPC 2.0 conformance of the gateway's own answers (docs/gateway.md, "JSON-RPC 2.0 answers"):
 * one table, each kind of refusal (key, badge, policy, limit, quota, body, path, version) sent as a
 * single call, a batch and a notification, and the specification's own examples, each with the
 * status, body and ids that come back. Checked on the real HAProxy before a node that records what
 * reaches it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayChain } from "../gateway/build.js";
import { makeBadge, newSigningKey } from "./support/badges.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startRecorder, type Recorder } from "./support/recorder.js";
import { stopEach } from "./support/net.js";

const KEY = "conf_Key_A1s2D3f4G5h6J7k8L9z0X1c2V3b4";
const QUOTA_KEY = "conf_Quota_Q1w2E3r4T5y6U7i8O9p0A1s2";
const RATE_KEY = "conf_Rate_R1t2Y3u4I5o6P7a8S9d0F1g2H3";
const WRONG = "conf_Wrong_W1e2R3t4Y5u6I7o8P9a0S1d2F3";
const signing = newSigningKey();
const RATE = 20;
const MAX_BATCH = 10;
const MAX_BODY = 4096;

let node: Recorder;
let gw: RunningGateway;
beforeAll(async () => {
  node = await startRecorder();
  const chains: GatewayChain[] = [
    // foobar is the specification's example of a method not found: here, one the policy denies.
    { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url, rpcWs: node.wsUrl }, denyMethods: ["foobar"] },
    { path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: `${node.url}/rpc/v0_10` }, specVersions: { pinned: "v0_10", paths: { v0_9: { http: "/rpc/v0_9", ws: "/ws/rpc/v0_9" }, v0_10: { http: "/rpc/v0_10", ws: "/ws/rpc/v0_10" } } } },
  ];
  gw = await startGateway(chains, [{ name: "conf", key: KEY }, { name: "quota", key: QUOTA_KEY }, { name: "rate", key: RATE_KEY }],
    { maxBatch: MAX_BATCH, maxBodyBytes: MAX_BODY, rateLimitPerSecond: RATE, badges: { service: "127.0.0.1:9", projects: ["web"], perAddressPerMinute: 1000 } },
    undefined, undefined, signing.publicKeyPem, [{ name: "quota", calls: 1, per: "day" }]);
}, 60_000);
afterAll(() => stopEach(gw, node));

const post = async (path: string, body: string) => {
  const res = await fetch(`${gw.base}/gateway/${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
  return { status: res.status, body: await res.text() };
};

const single = (method = "subtract", id: unknown = 1) => JSON.stringify({ jsonrpc: "2.0", method, params: [42, 23], id });
const note = (method = "update") => JSON.stringify({ jsonrpc: "2.0", method, params: [1, 2, 3, 4, 5] });
const batch = (...calls: string[]) => `[${calls.join(",")}]`;
const FORMS = { single: single(), batch: batch(single("subtract", 1), single("subtract", 2)), notification: note() } as const;
type Form = keyof typeof FORMS;

/** What comes back: the status, and the body as JSON ("" for none). */
type Answer = { status: number; body: unknown };
const error = (code: number, id: unknown = null) => ({ jsonrpc: "2.0", id, error: { code, message: expect.any(String) } });
const INVALID = { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request" } };
const notServed = (id: unknown) => ({ jsonrpc: "2.0", id, error: { code: -32601, message: "method foobar is not served by this gateway" } });
/** The same answer for every form: a refusal decided before the body is read, or for the request as a whole. */
const whole = (status: number, code: number): Record<Form, Answer> => ({ single: { status, body: error(code) }, batch: { status, body: error(code) }, notification: { status, body: error(code) } });

/**
 * The table docs/gateway.md shows: refusal kind -> where it is sent, how its bodies are changed
 * to draw it, and what each form gets back. Tokens (badges) are filled in once the gateway runs.
 */
const TABLE: [string, (t: Record<string, string>) => string, (body: string) => string, Partial<Record<Form, Answer>>][] = [
  ["key: unknown project key", () => `eth/rpc-http/${WRONG}`, (b) => b, whole(401, -32001)],
  ["badge: for another chain", (t) => `eth/rpc-http/${t.otherChain}`, (b) => b, whole(403, -32003)],
  ["badge: expired", (t) => `eth/rpc-http/${t.expired}`, (b) => b, whole(401, -32001)],
  ["policy: a denied method", () => `eth/rpc-http/${KEY}`, (b) => b.replace(/subtract|update/g, "foobar"), {
    single: { status: 403, body: notServed(1) },
    batch: { status: 200, body: [notServed(1), notServed(2)] },
    notification: { status: 403, body: "" },
  }],
  ["limit: past the key's rate", () => `eth/rpc-http/${RATE_KEY}`, (b) => b, whole(429, -32029)],
  ["limit: a batch over maxBatch", () => `eth/rpc-http/${KEY}`, () => batch(...Array(MAX_BATCH + 1).fill(single())), { batch: { status: 413, body: error(-32013) } }],
  ["quota: the key's calls for the day used", () => `eth/rpc-http/${QUOTA_KEY}`, (b) => b, whole(429, -32005)],
  ["body: over maxBodyBytes", () => `eth/rpc-http/${KEY}`, (b) => b.replace('"params":[', `"params":["${"x".repeat(MAX_BODY)}",`), whole(413, -32013)],
  ["path: an unknown chain", () => `nochain/rpc-http/${KEY}`, (b) => b, whole(404, -32004)],
  ["version: one no node of the chain serves", () => `strk/rpc-http/${KEY}/v0_7`, (b) => b, whole(404, -32004)],
];

/** The specification's own examples (JSON-RPC 2.0, 7) whose answer is the gateway's, with foobar denied. */
const SPEC: [string, string, Answer][] = [
  ["a call of a method not served", '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}', { status: 403, body: notServed("1") }],
  ["a batch that is not JSON", '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]', { status: 400, body: error(-32700) }],
  ["a JSON value that is no request", "5", { status: 400, body: error(-32600) }],
  ["an invalid batch, but not empty: [1]", "[1]", { status: 200, body: [INVALID] }],
  ["an invalid batch: [1,2,3]", "[1,2,3]", { status: 200, body: [INVALID, INVALID, INVALID] }],
  ["a batch of notifications only, all refused", '[{"jsonrpc": "2.0", "method": "foobar", "params": [1,2,4]},{"jsonrpc": "2.0", "method": "foobar", "params": [7]}]', { status: 200, body: "" }],
  ["a batch mixing a call, a refused call and an item that is no call", '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method": "foobar", "id": "2"},7]',
    { status: 200, body: [{ jsonrpc: "2.0", id: "1", result: "0x1" }, notServed("2"), INVALID] }],
];

const answer = async (path: string, body: string): Promise<Answer> => {
  const r = await post(path, body);
  return { status: r.status, body: r.body === "" ? "" : JSON.parse(r.body) };
};

describe("JSON-RPC 2.0 answers to every kind of refusal", () => {
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    const now = Math.floor(Date.now() / 1000);
    tokens.otherChain = await makeBadge(signing, { chains: { strk: 1 } });
    tokens.expired = await makeBadge(signing, { exp: now - 100, iat: now - 200 });
    // The quota key's one call, and the rate key's window filled.
    expect((await post(`eth/rpc-http/${QUOTA_KEY}`, single())).status).toBe(200);
    const full = batch(...Array.from({ length: MAX_BATCH }, (_, i) => single("eth_chainId", i)));
    for (let i = 0; i < 40 && (await post(`eth/rpc-http/${RATE_KEY}`, full)).status !== 429; i++);
  });

  it.each(TABLE)("%s: single call, batch and notification", async (_kind, path, change, due) => {
    const reached = node.seen.length;
    for (const [form, want] of Object.entries(due) as [Form, Answer][]) {
      const got = await answer(path(tokens), change(FORMS[form]));
      expect(got, form).toEqual(want);
    }
    expect(node.seen.length, "no refused call reaches the node").toBe(reached);
  });

  it.each(SPEC)("the specification's example, %s", async (_label, body, want) => {
    expect(await answer(`eth/rpc-http/${KEY}`, body)).toEqual(want);
    expect(node.seen.map((s) => s.body).join("\n")).not.toContain("foobar");
  });
});
