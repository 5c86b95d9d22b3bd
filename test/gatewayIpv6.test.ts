/**
 * Per-address limits count an IPv6 client by its /64, on the real HAProxy: two addresses of one
 * /64 share the address's budgets (wrong keys, connections, unfinished WebSocket messages), an
 * address of another /64 has its own. The addresses are documentation ones (2001:db8::/32) added
 * to the loopback interface for the test and removed after it (needs root, as CI has).
 */
import { execFileSync } from "node:child_process";
import { request } from "node:https";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNFINISHED_MESSAGES_PER_ADDRESS } from "../gateway/limits.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { upgradeRaw } from "./support/wsFrames.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "six_Key_Z3xC6vB9nM2qW5eR8tY1uI4oP7aS";
const SERVER = "2001:db8:77::1";
/** Two addresses of one /64, and one of the next /64. */
const [A1, A2, OTHER] = ["2001:db8:77::5", "2001:db8:77::6", "2001:db8:77:1::5"];
const WRONG_KEYS = 3;
const CONNECTIONS = 6;

const ip = (...args: string[]) => execFileSync("ip", ["-6", "addr", ...args, "dev", "lo"], { stdio: "pipe" });
const added: string[] = [];
let node: Recorder;
let gw: RunningGateway;
const open: TLSSocket[] = [];

beforeAll(async () => {
  for (const a of [SERVER, A1, A2, OTHER]) {
    ip("replace", `${a}/128`);
    added.push(a);
  }
  node = await startRecorder();
  gw = await startGateway(
    [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url, rpcWs: node.wsUrl } }],
    [{ name: "six", key: KEY }],
    { bindAddress: SERVER, wrongKeysPerMinute: WRONG_KEYS, maxConnectionsPerAddress: CONNECTIONS },
  );
}, 60_000);
afterAll(async () => {
  open.forEach((s) => s.destroy());
  await gw?.stop();
  await node?.stop();
  for (const a of added) ip("del", `${a}/128`);
});

/** A JSON-RPC call from `from` with `key`: the answer's status and error message. */
function call(from: string, key: string): Promise<{ status: number; message?: string }> {
  return new Promise((resolve, reject) => {
    const r = request(
      { host: SERVER, port: gw.httpsPort, servername: "localhost", localAddress: from, agent: false, path: `/gateway/eth/rpc-http/${key}`, method: "POST", headers: { "Content-Type": "application/json" } },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode!, message: text ? JSON.parse(text).error?.message : undefined }));
      },
    );
    r.on("error", reject);
    r.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }));
  });
}

/** A TLS connection from `from`: open once its handshake is done, refused when the gateway drops it first. */
function tls(from: string): Promise<TLSSocket | "refused"> {
  return new Promise((resolve) => {
    // tls.connect passes localAddress on to net.connect; its options type leaves it out.
    const s = tlsConnect({ host: SERVER, port: gw.httpsPort, servername: "localhost", localAddress: from } as never, () => (open.push(s), resolve(s)));
    s.on("error", () => resolve("refused"));
  });
}

/** A WebSocket opened by hand from `from` that then sends a header and part of a 60,000-byte message. */
async function holdPart(from: string): Promise<TLSSocket> {
  const s = await tls(from);
  if (s === "refused") throw new Error(`the connection from ${from} was refused`);
  const head = await upgradeRaw(s, `/gateway/eth/rpc/${KEY}?secret=null`);
  expect(head.split("\r\n")[0]).toBe("HTTP/1.1 101 Switching Protocols");
  await new Promise((r) => s.write(Buffer.concat([Buffer.from([0x81, 0xfe, 0xea, 0x60, 1, 2, 3, 4]), Buffer.alloc(1000, 0x20)]), r));
  return s;
}

/** Whether a socket is still open a moment later (the gateway closed it otherwise). */
const stillOpen = (s: TLSSocket) =>
  new Promise<boolean>((r) => {
    if (s.destroyed || s.readableEnded) return r(false);
    const t = setTimeout(() => r(true), 500);
    s.once("close", () => (clearTimeout(t), r(false)));
    s.once("end", () => (clearTimeout(t), r(false)));
  });

describe("an IPv6 client is its /64", () => {
  it("connections: the /64 holds the address's bound, split between its addresses; another /64 connects", async () => {
    const held: (TLSSocket | "refused")[] = [];
    for (let i = 0; i < CONNECTIONS; i++) held.push(await tls(i % 2 ? A2 : A1));
    expect(held.filter((s) => s === "refused")).toHaveLength(0);
    expect(await tls(A2)).toBe("refused");
    expect(await tls(A1)).toBe("refused");
    const other = await tls(OTHER);
    expect(other).not.toBe("refused");
    for (const s of [...held, other]) if (s !== "refused") s.destroy();
    // Gone from the gateway's count too, before the next test's calls.
    await new Promise((r) => setTimeout(r, 500));
  });

  it("WebSockets holding part of a message: the /64 holds the address's bound; past it the gateway closes the next, another /64's stays", async () => {
    const held: TLSSocket[] = [];
    for (let k = 0; k < UNFINISHED_MESSAGES_PER_ADDRESS; k++) held.push(await holdPart(k % 2 ? A2 : A1));
    expect(await Promise.all(held.map(stillOpen))).toEqual(Array(UNFINISHED_MESSAGES_PER_ADDRESS).fill(true));
    expect(await stillOpen(await holdPart(A2))).toBe(false);
    expect(await stillOpen(await holdPart(OTHER))).toBe(true);
  });
  it("wrong keys: two addresses of a /64 spend one budget; another /64 has its own", async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= WRONG_KEYS; i++) statuses.push((await call(i % 2 ? A2 : A1, `nokey_${i}_Z3xC6vB9nM2qW5eR8tY1uI4o`)).status);
    expect(statuses).toEqual(Array(WRONG_KEYS + 1).fill(401));
    const past = await call(A2, "nokey_last_Z3xC6vB9nM2qW5eR8tY1uI4o");
    expect(past).toEqual({ status: 429, message: "too many requests with a wrong key from this address" });
    // Last: the /64 is past its budget for the next minute. Even with a right key.
    expect((await call(A1, KEY)).status).toBe(429);
    expect((await call(OTHER, "nokey_other_Z3xC6vB9nM2qW5eR8tY1uI4o")).status).toBe(401);
    expect((await call(OTHER, KEY)).status).toBe(200);
  });
});
