/**
 * Generated JSON-RPC bodies for the differential fuzz of the gateway's JSON reader
 * (test/gatewayLua.test.ts): single calls and batches whose spellings the gateway's Lua and the
 * nodes' Go decoder may read differently. Bodies are bytes (a "byte string" here holds one byte
 * per character), so invalid UTF-8 and truncations are among them. Deterministic for a seed.
 */

/** mulberry32: a small seeded generator, so a failing body can be found again from its seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** UTF-8 bytes of a JavaScript string, as a byte string. */
const utf8 = (s: string) => Buffer.from(s, "utf8").toString("latin1");

const METHODS = [
  "eth_blockNumber", "eth_chainId", "net_version", "eth_getBlockByNumber", "eth_getBlockByHash", "eth_getTransactionByHash",
  "eth_getTransactionReceipt", "eth_getBlockTransactionCountByNumber", "eth_getTransactionByBlockNumberAndIndex", "eth_call",
  "starknet_chainId", "starknet_specVersion", "starknet_getBlockWithTxHashes", "starknet_getBlockWithTxs", "starknet_getTransactionByHash",
  "starknet_getTransactionReceipt", "starknet_getClass", "starknet_getClassAt", "starknet_getClassHashAt",
  "admin_peers", "debug_traceCall", "personal_sign", "miner_start", "devnet_mint", "dev_setTime", "Debug_traceCall", "ADMIN_PEERS",
];
const HASH = "0x" + "ab".repeat(32);
const NUMBERS = ["0", "-0", "1", "7", "01", "1.0", "1.", ".5", "1e3", "1E+3", "1e-2", "-1", "+1", "9007199254740993", "1e400", "123456789012345678901234567890", "0x1", "NaN", "Infinity", "1e", "--1"];

export class BodyGenerator {
  private readonly r: () => number;

  constructor(seed: number) {
    this.r = random(seed);
  }

  private int(n: number): number {
    return Math.floor(this.r() * n);
  }

  private chance(p: number): boolean {
    return this.r() < p;
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }

  /** JSON blanks mostly; sometimes a byte JSON does not count as blank. */
  private ws(): string {
    if (this.chance(0.6)) return "";
    if (this.chance(0.05)) return this.pick(["\f", "\v", utf8("\u00a0"), "\u0000"]);
    return this.pick([" ", "\n", "\t", "\r\n", "  "]);
  }

  /** The characters of a string's content with one of them spelled another way. */
  private spell(s: string, escapes = true): string {
    if (!s.length) return s;
    const i = this.int(s.length);
    const c = s[i];
    const variants = [
      () => (escapes ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}` : c),
      () => (escapes ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}` : c),
      () => c.toUpperCase(),
      () => c.toLowerCase(),
      // Case folding beyond ASCII: Go matches "ſ" with s and the Kelvin sign with k.
      () => (c === "s" ? utf8("\u017f") : c === "k" ? utf8("\u212a") : c),
      () => c + this.pick(["\xff", "\xc3", "\xe2\x82", utf8("\u0301")]),
      () => c + (escapes ? this.pick(["\\u0000", "\\ud800", "\\udc00x", "\\ud83d\\ude00"]) : ""),
      () => c + "\x7f",
      () => c + this.pick(["\n", "\t"]),
    ];
    return s.slice(0, i) + this.pick(variants)() + s.slice(i + 1);
  }

  private str(s: string): string {
    return `"${this.chance(0.15) ? this.spell(s) : s}"`;
  }

  private key(name: string): string {
    if (this.chance(0.7)) return `"${name}"`;
    if (this.chance(0.3)) return `"${this.pick([name.toUpperCase(), name[0].toUpperCase() + name.slice(1), name + " ", " " + name])}"`;
    return `"${this.spell(name)}"`;
  }

  private number(): string {
    return this.pick(NUMBERS);
  }

  /** Any JSON-ish value, nested up to `depth`. */
  private value(depth: number): string {
    const k = this.int(depth > 0 ? 8 : 5);
    switch (k) {
      case 0: return this.number();
      case 1: return this.str(this.pick(["x", "latest", "0x1", HASH, ""]));
      case 2: return this.pick(["true", "false", "null", "tru", "nul"]);
      case 3: return this.str(this.pick(METHODS));
      case 4: return `"${this.pick(["0x1a", "0x1A", "0x01", "0X1"])}"`;
      case 5: return `[${this.items(depth - 1)}]`;
      case 6: return `{${this.ws()}${this.key(this.pick(["block_number", "block_hash", "a", "method"]))}:${this.value(depth - 1)}}`;
      default: return this.deep();
    }
  }

  private items(depth: number): string {
    const n = this.int(4);
    return Array.from({ length: n }, () => this.ws() + this.value(depth) + this.ws()).join(",");
  }

  private deep(): string {
    const n = this.pick([3, 63, 64, 65, 70]);
    return "[".repeat(n) + "1" + "]".repeat(n);
  }

  /** Arguments shaped like the cached methods' (quantities, hashes, felts, block ids), often slightly off. */
  private args(): string {
    const qty = () => `"${this.pick(["0x1", "0x1a", "0x1A", "0x01", "0x", "0X1", "1", "latest", "0xffffffffffffff"])}"`;
    const hash = () => `"${this.pick([HASH, HASH.toUpperCase().replace("0X", "0x"), HASH + "0", "0x1"])}"`;
    const felt = () => `"${this.pick(["0x1f", "0x01f", "0x1F", "0x" + "f".repeat(64)])}"`;
    const bool = () => this.pick(["true", "false", "0", "\"true\""]);
    const block = () => {
      const inner = this.pick([
        () => `${this.key("block_number")}:${this.pick(["5", "05", "5.0", "5e0", "-5", "\"5\"", "123456789012345678"])}`,
        () => `${this.key("block_hash")}:${felt()}`,
        () => `"block_number":5,"block_number":6`,
        () => `"block_number":5,"Block_Number":6`,
        () => `"block_number":5,"block_hash":"0x1"`,
      ])();
      return this.chance(0.2) ? `"${this.pick(["latest", "l1_accepted", "pending"])}"` : `{${this.ws()}${inner}${this.ws()}}`;
    };
    const kind = this.int(6);
    const positional = [
      () => [qty(), bool()],
      () => [hash(), bool()],
      () => [hash()],
      () => [block()],
      () => [felt()],
      () => [block(), felt()],
    ][kind]();
    if (this.chance(0.1)) positional.push(this.value(1));
    if (this.chance(0.1)) positional.pop();
    if (this.chance(0.25)) {
      const names = [["block_id"], ["transaction_hash"], ["block_id", "class_hash"], ["block_id", "contract_address"]][this.int(4)];
      const members = names.map((n, i) => `${this.key(n)}:${positional[i] ?? block()}`);
      if (this.chance(0.15)) members.push(`${this.key(this.pick(names))}:${felt()}`);
      return `{${members.join(",")}}`;
    }
    return `[${positional.map((a) => this.ws() + a + this.ws()).join(",")}]`;
  }

  private id(): string {
    return this.pick([
      () => this.number(),
      () => this.str(this.pick(["x", "a-1", "", "q\\\"uote"])),
      () => this.pick(["null", "true", "false", "{}", "[]", "[1]", "{\"a\":1}"]),
      () => `"${this.pick(["\xff", utf8("é"), "\\u0041", "\\ud800"])}"`,
    ])();
  }

  private method(): string {
    if (this.chance(0.08)) return this.pick(["5", "null", "true", "[]", "{\"x\":1}", "[\"admin_peers\"]"]);
    return this.str(this.pick(METHODS));
  }

  /** One call object: its members in any order, sometimes repeated, misspelled, extra or missing. */
  call(): string {
    const members: [string, string][] = [
      ["jsonrpc", this.chance(0.85) ? "\"2.0\"" : this.pick(["\"2.00\"", "\"2\"", "2.0", "\"2\\u002e0\"", "null", "\"1.0\""])],
      ["method", this.method()],
      ["params", this.chance(0.8) ? this.args() : this.value(2)],
      ["id", this.id()],
    ];
    const out: string[] = [];
    for (const [name, v] of members) if (!this.chance(0.07)) out.push(`${this.key(name)}${this.ws()}:${this.ws()}${v}`);
    if (this.chance(0.25)) {
      const [name] = this.pick(members);
      const v = name === "method" ? this.method() : name === "params" ? this.args() : name === "id" ? this.id() : "\"2.0\"";
      const copy = `${this.key(name)}:${v}`;
      out.splice(this.int(out.length + 1), 0, copy);
    }
    if (this.chance(0.08)) out.push(`${this.key(this.pick(["extra", "error", "result", "Params", "jsonRPC"]))}:${this.value(1)}`);
    for (let i = out.length - 1; i > 0; i--) {
      if (this.chance(0.3)) {
        const j = this.int(i + 1);
        [out[i], out[j]] = [out[j], out[i]];
      }
    }
    return `{${this.ws()}${out.join(`${this.ws()},${this.ws()}`)}${this.ws()}}`;
  }

  private batch(): string {
    const n = this.pick([0, 1, 2, 3, 5]);
    const items = Array.from({ length: n }, () => (this.chance(0.85) ? this.call() : this.value(2)));
    return `[${this.ws()}${items.join(`${this.ws()},${this.ws()}`)}${this.ws()}]`;
  }

  /** One request body. */
  body(): Buffer {
    let s = this.chance(0.7) ? this.call() : this.chance(0.8) ? this.batch() : this.value(3);
    s = this.ws() + s + this.ws();
    if (this.chance(0.05)) s = "\xef\xbb\xbf" + s;
    if (this.chance(0.06)) s += this.pick([this.call(), ",", "x", "]", "}", " {}", "\n" + this.call()]);
    if (this.chance(0.06)) s = s.slice(0, this.int(s.length));
    if (this.chance(0.03)) {
      const i = this.int(s.length);
      s = s.slice(0, i) + String.fromCharCode(this.int(256)) + s.slice(i + 1);
    }
    return Buffer.from(s, "latin1");
  }
}
