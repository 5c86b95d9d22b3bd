/**
 * The hit part's gateways (bench/hit.ts), each answering the same call with the same 43-byte
 * answer over TLS; bench/instructions.ts counts the same cases' instructions.
 * - `return`: the generated config with a native `http-request return` of that answer as its
 *   first rule (TLS, HTTP and nothing else: the least HAProxy spends on an answer);
 * - `hit`: the gateway from its response cache (eth_chainId is always held), past every check;
 * - `relay`: the gateway without its cache, relaying the call to the upstream;
 * - `rules+return`: the cache's config with the same native return just before the cache lookup,
 *   so every check a hit passes runs, and no Lua;
 * - `lua+return`: a Lua action that does nothing, then the native return, as the first rules:
 *   what calling into Lua costs by itself;
 * - `lua+done`: a Lua action that reads the body and answers the same bytes with txn:done, as the
 *   first rule: a hit's Lua call without the cache's own work (the key, the store, the id splice).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import type { GatewayChain } from "../gateway/build.js";
import type { BenchGatewayOptions } from "./gateway.js";

/** The upstream's one answer (bench/upstream.js REPLY): what every case sends back. */
export const HIT_REPLY = '{"jsonrpc":"2.0","id":1,"result":"0x10d4f"}';
export const HIT_CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
export const HIT_CASES = ["return", "hit", "relay", "rules+return", "lua+return", "lua+done"] as const;
export type HitCase = (typeof HIT_CASES)[number];

/** The wrk script that sends HIT_CALL, written into `work`: its path. */
export function hitCallScript(work: string): string {
  const file = join(work, "chainid.lua");
  writeFileSync(file, `wrk.method = "POST"\nwrk.body = '${HIT_CALL}'\nwrk.headers["Content-Type"] = "application/json"\n`);
  return file;
}

/** `insert` as a rule of its own just before the first line that starts with `line`, from `from` on. */
function before(cfg: string, line: string, insert: string, from = 0): string {
  const at = cfg.indexOf(`\n    ${line}`, from);
  if (at < 0) throw new Error(`the generated config has no line "${line}"`);
  return `${cfg.slice(0, at)}\n    ${insert}${cfg.slice(at)}`;
}

/** Each case's gateway, for startBenchGateway; `upstream` is bench/upstream.js with its `blocks` answers. */
export function hitCases(work: string, upstream: string, threads: number): Record<HitCase, BenchGatewayOptions> {
  const chain: GatewayChain = { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: upstream } };
  const RETURN = `http-request return status 200 content-type application/json string '${HIT_REPLY}'`;
  const returnFirst = (cfg: string) => before(cfg, "http-request ", RETURN, cfg.indexOf("frontend https"));
  const noop = join(work, "noop.lua");
  writeFileSync(
    noop,
    `core.register_action('bench_noop', { 'http-req' }, function() end)
local HEADERS = { ['content-type'] = { 'application/json' } }
core.register_action('bench_done', { 'http-req' }, function(txn)
  local _ = txn.f:req_body()
  txn:done({ status = 200, headers = HEADERS, body = '${HIT_REPLY}' })
end)
`,
  );
  /** The return first, with the bench's own Lua actions loaded. */
  const withBenchLua = (cfg: string) => returnFirst(cfg.replace(/^global$/m, `global\n    lua-load ${noop}`));
  const cache = { maxBytes: 64 * 1024 * 1024, ...CACHE_DEFAULTS };
  const base = { work, chains: [chain], threads };
  return {
    return: { ...base, name: "return", edit: returnFirst },
    hit: { ...base, name: "hit", cache },
    relay: { ...base, name: "relay" },
    "rules+return": { ...base, name: "rules-return", cache, edit: (cfg) => before(cfg, "http-request lua.rpc_cache_lookup", RETURN) },
    "lua+return": { ...base, name: "lua-return", edit: (cfg) => withBenchLua(cfg).replace(RETURN, `http-request lua.bench_noop\n    ${RETURN}`) },
    "lua+done": { ...base, name: "lua-done", edit: (cfg) => withBenchLua(cfg).replace(RETURN, "http-request lua.bench_done") },
  };
}
