/** WebSocket frames as a raw client writes and reads them (RFC 6455 5.2), for tests that bypass a client library. */
import type { Duplex } from "node:stream";

/**
 * Asks for a WebSocket on `path` over an open connection, by hand (RFC 6455 4.1, the RFC's sample
 * key); resolves with the answer's head, or what came before the connection closed.
 */
export function upgradeRaw(socket: Duplex, path: string): Promise<string> {
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
  return new Promise<string>((resolve) => {
    let got = "";
    const on = (d: Buffer) => {
      got += d.toString("latin1");
      if (got.includes("\r\n\r\n")) (socket.off("data", on), resolve(got));
    };
    socket.on("data", on);
    socket.once("close", () => resolve(got));
  });
}

/** One client frame (RFC 6455 5.2: masked), a text frame unless `opcode` says otherwise. */
export function clientFrame(payload: Buffer, opcode = 1): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : Buffer.alloc(len < 65536 ? 4 : 10);
  if (len >= 126) {
    head[0] = 0x80 | opcode;
    head[1] = 0x80 | (len < 65536 ? 126 : 127);
    if (len < 65536) head.writeUInt16BE(len, 2);
    else head.writeBigUInt64BE(BigInt(len), 2);
  }
  const mask = Buffer.from([0x5a, 0x17, 0xc3, 0x08]);
  return Buffer.concat([head, mask, payload.map((b, i) => b ^ mask[i % 4])]);
}

/** A client's text frame. */
export const textFrame = (text: string): Buffer => clientFrame(Buffer.from(text));

/** The node's side as the client reads it: each frame's opcode and payload (short frames). */
export function serverFrames(bytes: Buffer): { op: number; payload: Buffer }[] {
  const out: { op: number; payload: Buffer }[] = [];
  for (let p = 0; p + 2 <= bytes.length; ) {
    const op = bytes[p] & 0x0f;
    let len = bytes[p + 1] & 0x7f;
    let head = 2;
    if (len === 126) [len, head] = [bytes.readUInt16BE(p + 2), 4];
    if (p + head + len > bytes.length) break;
    out.push({ op, payload: bytes.subarray(p + head, p + head + len) });
    p += head + len;
  }
  return out;
}
