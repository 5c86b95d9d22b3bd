/**
 * The summary of one `npm run bench -- --cases all` run, as issue 38 tabulates it and the docs paste
 * it: Markdown from bench/results/latest.json, every figure the median of the rounds with its range
 * over them (min-max), every ratio paired within each round. A part that did not run says so.
 * `npm run bench` prints it at the end; `npx tsx bench/summary.ts [--out DIR]` prints it again.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { benchArgs } from "./args.js";
import { ratio, show, spread, type Spread } from "./figures.js";
import { describe, type Correctness } from "./peers/correctness.js";
import { drift } from "./rounds.js";
import type { MergeCase } from "./merge.js";

interface Round {
  readonly rps: number;
  readonly cpuUsPerRequest?: number;
  readonly hitRatio?: number;
  /** Calls answered with an identical call's answer in flight, over the requests (peers part). */
  readonly mergedRatio?: number;
}
type Runs = Record<string, readonly Round[]>;
interface Part {
  readonly startedAt: string;
  readonly loadAverage: { readonly start: readonly number[]; readonly end: readonly number[] };
  readonly skipped?: string;
}

/** What the summary reads of latest.json (each part may be missing). */
export interface BenchResults {
  readonly date?: string;
  readonly machine?: { readonly cores?: number; readonly cpu?: string; readonly haproxyRelease?: string; readonly nginx?: string };
  readonly settings?: { readonly rounds?: number };
  readonly raw?: { readonly http?: Runs; readonly ws?: Runs };
  /** `node`: the node the read mix ran on ("geth v1.17.5"); runs before it was recorded ran hardhat. */
  readonly cache?: { readonly rounds?: number; readonly raw?: Runs; readonly node?: string };
  readonly peers?: {
    readonly versions?: Record<string, { readonly release?: string } | string>;
    readonly settings?: { readonly rounds?: number; readonly node?: string };
    readonly raw?: Record<"read" | "relay" | "ws", Runs | undefined>;
    readonly correctness?: Record<string, Correctness>;
  };
  readonly merge?: { readonly cases?: readonly MergeCase[] };
  /** The hit part: rounds of `return`, `hit` and `relay` on one answer (`reply`). */
  readonly hit?: { readonly reply?: string; readonly raw?: Runs };
  /** The instructions part (bench/instructions.ts): instructions per request of each case. */
  readonly instructions?: { readonly tool?: string; readonly scopedRulesRemoved?: number; readonly cases?: Readonly<Record<string, { readonly perRequest: number }>> };
  readonly parts?: Partial<Record<"relay" | "hit" | "cache" | "peers" | "merge" | "instructions", Part>>;
}

/** "30,057 (29,870-30,400)": the median of the rounds and their range. */
const cell = (s: Spread | undefined, unit = "") => (s ? `${show(s.median)}${unit} (${show(s.min)}-${show(s.max)})` : "-");
const over = (xs: readonly number[] | undefined) => (xs?.length && xs.every(Number.isFinite) ? spread(xs) : undefined);
const pick = (rs: readonly Round[] | undefined, f: (r: Round) => number | undefined) => (rs ? rs.map((r) => f(r) ?? NaN) : undefined);
/** a's figure over b's, round by round. */
const paired = (a: readonly Round[] | undefined, b: readonly Round[] | undefined, f: (r: Round) => number | undefined) =>
  a && b && a.length === b.length ? over(a.map((r, i) => (f(r) ?? NaN) / (f(b[i]) ?? NaN))) : undefined;

const rps = (r: Round) => r.rps;
const cpu = (r: Round) => r.cpuUsPerRequest;

function relayRows(r: BenchResults): string[] {
  const http = r.raw?.http ?? {};
  const ws = r.raw?.ws ?? {};
  const nginx = r.machine?.nginx?.replace(/^nginx version: /, "") ?? "nginx";
  const row = (label: string, all: Runs, f: (r: Round) => number | undefined) =>
    `| ${label} | ${cell(over(pick(all.gateway, f)))} | ${nginx} ${cell(over(pick(all.nginx, f)))} | ${cell(paired(all.gateway, all.nginx, f), "×")} |`;
  return [
    row("HTTP relay, fixed reply (TLS): req/s", http, rps),
    row("HTTP relay: CPU µs per request", http, cpu),
    row("WebSocket round trips/s (the per-message policy on)", ws, rps),
    row("WebSocket: CPU µs per round trip", ws, cpu),
  ];
}

function cacheRow(r: BenchResults): string {
  const c = r.cache?.raw ?? {};
  const hit = over(pick(c.cache, (x) => x.hitRatio));
  return `| read mix on ${r.cache?.node ?? "hardhat"}, cache on (hit ratio ${cell(hit)}): req/s over the node alone | ${cell(over(pick(c.cache, rps)))} | node ${cell(over(pick(c.node, rps)))} | ${cell(paired(c.cache, c.node, rps), "×")} |`;
}

/** A cache hit and a relay against a native return of the same answer: CPU per request. */
function hitRows(r: BenchResults): string[] {
  const h = r.hit?.raw;
  if (!h?.hit || !h.return) return [];
  const bytes = r.hit?.reply?.length ?? "?";
  const row = (label: string, c: readonly Round[] | undefined) => `| ${label} | ${cell(over(pick(c, cpu)))} | native return ${cell(over(pick(h.return, cpu)))} | ${cell(paired(c, h.return, cpu), "×")} |`;
  return [row(`cache hit, the same ${bytes}-byte answer over TLS: CPU µs per request`, h.hit), row("relay of the same call, no cache: CPU µs per request", h.relay)];
}

const MIXES = { read: "read mix (blocks, receipts, logs)", relay: "relay mix (`eth_blockNumber`, `eth_call` on latest)", ws: "WebSocket" } as const;
const AGAINST: Record<string, string> = { erpc: "gateway", proxyd: "gateway-plain" };

function peerRows(r: BenchResults): string[] {
  const raw = r.peers?.raw;
  return (Object.keys(MIXES) as (keyof typeof MIXES)[]).map((mix) => {
    const cells = Object.entries(AGAINST).map(([peer, gateway]) => {
      const [g, p] = [raw?.[mix]?.[gateway], raw?.[mix]?.[peer]];
      if (!p) return raw ? `(${peer === "erpc" ? "eRPC" : peer} has none)` : "-";
      return `${cell(paired(g, p, rps), "×")}; CPU ${cell(paired(g, p, cpu), "×")}`;
    });
    return `| ${MIXES[mix]} | ${cells.join(" | ")} |`;
  });
}

/** The share of the relay mix each merging proxy answered from an identical call in flight. */
function mergedLine(r: BenchResults): string | undefined {
  const relay = r.peers?.raw?.relay;
  const shown = ["gateway", "erpc"].flatMap((name) => {
    const s = over(pick(relay?.[name], (x) => x.mergedRatio));
    return s ? [`${name === "erpc" ? "eRPC" : name} ${cell(s)}`] : [];
  });
  return shown.length ? `Relay mix calls answered with an identical call's answer in flight: ${shown.join(", ")}.` : undefined;
}

/** The merge part: per node, head interval and client count, what reached the node and whether any answer was stale. */
function mergeRows(r: BenchResults): string[] {
  const cases = r.merge?.cases;
  if (!cases?.length) return [];
  return [
    "Identical reads at the head on a moving head: the relay mix (`eth_blockNumber`, one `eth_call` at latest) repeated by each client, the cache on.",
    "",
    "| node | a block every | clients | calls/s | node calls per client call | merged | alone | heads checked: older than one shown before the call |",
    "|---|---|---|---|---|---|---|---|",
    ...cases.map((c) => `| ${c.node} | ${show(c.blockSeconds)} s | ${c.clients} | ${show(c.callsPerSecond)} | ${show(c.nodeCallsPerCall)} | ${show(c.mergedShare)} | ${show(c.aloneShare)} | ${show(c.heads.checked)}: ${c.heads.stale}${c.heads.stale ? ` (at most ${c.heads.worstBehind} blocks behind)` : ""} |`),
  ];
}

/** The instructions part: each case's count per request, over nginx's (relays) or the native return's (the hit's steps). */
function instructionRows(r: BenchResults): string[] {
  const c = r.instructions?.cases;
  if (!c) return [];
  const n = (k: string) => c[k]?.perRequest;
  const row = (label: string, k: string, base?: string, baseLabel?: string) => {
    const x = n(k);
    if (x === undefined) return [];
    const b = base && n(base);
    return [`| ${label} | ${show(x)} | ${b ? `${show(ratio(x, b))}× ${baseLabel}` : "-"} |`];
  };
  return [
    `Instructions per request, counted by ${r.instructions?.tool ?? "valgrind"}'s callgrind: the proxy's own, user space only (the kernel's TCP and TLS work is not in it), per call between a short and a longer load, so that neither load's TLS handshakes are in it.`,
    "",
    "| case | instructions per request | over |",
    "|---|---|---|",
    ...row("relay: nginx, the key checked by a map", "nginx"),
    ...row("relay: the gateway, every check", "gateway", "nginx", "nginx"),
    ...row(`relay: the gateway, its route part scoped to the call's route (${r.instructions?.scopedRulesRemoved ?? "?"} rules out): what evaluating only the rules that apply could reach`, "gateway-scoped", "nginx", "nginx"),
    ...row("relay: HAProxy with no rule at all", "gateway-bare", "nginx", "nginx"),
    ...row("the same 43-byte answer: a native return", "return"),
    ...row("a cache hit", "hit", "return", "the return"),
    ...row("a relay, no cache", "relay", "return", "the return"),
    ...row("every check a hit passes, then the return", "rules+return", "return", "the return"),
    ...row("a Lua action that does nothing, then the return", "lua+return", "return", "the return"),
    ...row("a Lua action that reads the body and answers (txn:done)", "lua+done", "return", "the return"),
  ];
}

const load = (p: Part) => `${p.loadAverage.start.join(" ")} -> ${p.loadAverage.end.join(" ")}`;

/** The last round's req/s over the first's, for the node alone in each part that measured it. */
function driftLine(r: BenchResults): string | undefined {
  const d = [
    ["read mix (cache part)", r.cache?.raw?.node],
    ["read mix (peers part)", r.peers?.raw?.read?.node],
    ["relay mix (peers part)", r.peers?.raw?.relay?.node],
  ] as const;
  const shown = d.filter(([, rs]) => rs && rs.length > 1).map(([label, rs]) => `${label} ${show(drift(rs!.map(rps)))}×`);
  return shown.length ? `The node alone, its last round's req/s over its first: ${shown.join(", ")}.` : undefined;
}

/** The summary as Markdown: where and when it ran, the table against nginx and the node, the table against the peers. */
export function summaryMarkdown(r: BenchResults): string {
  const m = r.machine ?? {};
  const rounds = r.settings?.rounds ?? r.cache?.rounds ?? r.peers?.settings?.rounds;
  // The instructions part is named only where it ran: it is not one every run has.
  const named = r.instructions || r.parts?.instructions ? (["relay", "hit", "cache", "peers", "merge", "instructions"] as const) : (["relay", "hit", "cache", "peers", "merge"] as const);
  const parts = named.map((name) => {
    const p = r.parts?.[name];
    if (!p) return `${name}: ${{ relay: r.raw, hit: r.hit, cache: r.cache, peers: r.peers, merge: r.merge, instructions: r.instructions }[name] ? "not recorded" : "not in this run"}`;
    return p.skipped ? `${name}: skipped (${p.skipped})` : `${name} ${load(p)}`;
  });
  const release = (v: { release?: string } | string | undefined) => (typeof v === "string" ? v : v?.release ?? "?");
  const correctness = Object.entries(r.peers?.correctness ?? {}).map(([name, c]) => `${name} ${describe(c)}`);
  return [
    `Measured ${r.date ?? "?"} on ${m.cores ?? "?"} cores (${m.cpu ?? "unknown CPU"}), HAProxy ${m.haproxyRelease ?? "?"} (the generated production config); ${rounds ?? "?"} rounds, each figure the median with its range over the rounds (min-max), each ratio paired within a round.`,
    `Load average (1, 5, 15 min) at the start -> end of each part: ${parts.join("; ")}.`,
    "",
    "| | gateway | peer | gateway over peer |",
    "|---|---|---|---|",
    ...relayRows(r),
    ...hitRows(r),
    cacheRow(r),
    "",
    `Against the peers in the same run (eRPC ${release(r.peers?.versions?.erpc)}, proxyd ${release(r.peers?.versions?.proxyd)}; same ${r.peers?.settings?.node ?? "hardhat"} node and mixes): the gateway's req/s over the peer's, and its CPU per request over the peer's.`,
    "",
    "| mix | gateway over eRPC (TLS) | gateway over proxyd (plain HTTP) |",
    "|---|---|---|",
    ...peerRows(r),
    "",
    ...(correctness.length ? [`Correctness (HTTP probes after the load): ${correctness.join("; ")}.`] : []),
    ...[mergedLine(r), driftLine(r)].filter((l): l is string => l !== undefined),
    ...(r.merge?.cases?.length ? ["", ...mergeRows(r)] : []),
    ...(r.instructions?.cases ? ["", ...instructionRows(r)] : []),
  ].join("\n");
}

if (require.main === module) {
  const args = benchArgs(process.argv.slice(2));
  const file = join(args.out, "latest.json");
  if (!existsSync(file)) {
    console.error(`rpcstack bench: no ${file} to summarise (run npm run bench first)`);
    process.exit(1);
  }
  console.log(`\n${summaryMarkdown(JSON.parse(readFileSync(file, "utf8")))}`);
}
