/**
 * What the rounds of one run say beyond their medians: how far the gateway's ratio to each other
 * case moved from round to round (the spread), and how far each case moved from the first round to
 * the last (the drift: a node that slows as a run goes on shows here, in every case in front of it).
 */
import { ratio, show, showSpread, spread } from "./figures.js";
import type { Result } from "./measure.js";

/** The gateway over each other case, round by round (both measured in the same round). */
export function roundSpread(http: Record<string, Result[]>, ws: Record<string, Result[]>) {
  const per = (all: Record<string, Result[]>, pick: (r: Result) => number | undefined) =>
    Object.fromEntries(
      Object.keys(all)
        .filter((k) => k !== "gateway" && all.gateway)
        .map((k) => [k, spread(all.gateway.map((g, i) => pick(g)! / pick(all[k][i])!))]),
    );
  return {
    http: { rps: per(http, (r) => r.rps), cpuPerRequest: per(http, (r) => r.cpuUsPerRequest) },
    ws: { rps: per(ws, (r) => r.rps), cpuPerRequest: per(ws, (r) => r.cpuUsPerRequest) },
  };
}

export function printSpread(http: Record<string, Result[]>, ws: Record<string, Result[]>): void {
  const s = roundSpread(http, ws);
  console.log(`\ngateway over each case, per round: median (min-max, spread in % of the median)`);
  for (const [kind, f] of [["HTTP", s.http], ["WS", s.ws]] as const) {
    for (const k of Object.keys(f.rps)) console.log(`${kind} gateway/${k}: req/s ${showSpread(f.rps[k])}; CPU per request ${showSpread(f.cpuPerRequest[k])}`);
  }
  for (const line of [...driftLines("HTTP", http), ...driftLines("WS", ws)]) console.log(line);
}

/** The last round's figure over the first's (1: no drift), or undefined with fewer than two rounds. */
export function drift(xs: readonly number[]): number | undefined {
  return xs.length < 2 ? undefined : ratio(xs[xs.length - 1], xs[0]);
}

/**
 * One line per case: its req/s round by round and the last round over the first, and the same for
 * its CPU per request where measured (the steadier figure on a shared machine).
 */
export function driftLines(title: string, runs: Record<string, readonly Result[]>): string[] {
  const one = (rs: readonly Result[], pick: (r: Result) => number | undefined, unit: string) =>
    `${rs.map((r) => show(pick(r))).join(" -> ")} ${unit} (round ${rs.length} over round 1: ${show(drift(rs.map((r) => pick(r) ?? NaN)))})`;
  return Object.entries(runs).map(
    ([name, rs]) => `drift ${title} ${name}: ${one(rs, (r) => r.rps, "req/s")}${rs.every((r) => r.cpuUsPerRequest !== undefined) ? `; ${one(rs, (r) => r.cpuUsPerRequest, "CPU µs/req")}` : ""}`,
  );
}
