/** Small SVG bar charts of the benchmark: one panel per measurement, one bar per case. */
import { show } from "./figures.js";

export type Figures = Record<"direct" | "gateway" | "nginx" | "caddy", { rps: number; p50ms: number; p99ms: number }>;

export interface Bar {
  readonly label: string;
  readonly value: number;
  /** Small print under the label (p99, a correctness warning). */
  readonly note?: string;
  readonly color: string;
}

export interface Panel {
  readonly title: string;
  readonly unit: string;
  readonly bars: readonly Bar[];
}

const BAR = 90;
const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function panel(p: Panel, x0: number, width: number): string {
  const max = Math.max(...p.bars.map((b) => b.value), 1);
  const h = 220;
  const bars = p.bars.map((b, i) => {
    const bh = Math.round((b.value / max) * h);
    const x = x0 + 30 + i * BAR;
    const mid = x + BAR / 2 - 10;
    return [
      `<rect x="${mid - 30}" y="${40 + h - bh}" width="60" height="${bh}" fill="${b.color}"/>`,
      `<text x="${mid}" y="${34 + h - bh}" text-anchor="middle" font-size="11">${show(b.value)}</text>`,
      `<text x="${mid}" y="${40 + h + 16}" text-anchor="middle" font-size="12">${escape(b.label)}</text>`,
      b.note ? `<text x="${mid}" y="${40 + h + 30}" text-anchor="middle" font-size="10" fill="#555">${escape(b.note)}</text>` : "",
    ].join("");
  }).join("");
  return `<text x="${x0 + width / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${escape(p.title)}</text>${bars}<text x="${x0 + width / 2}" y="318" text-anchor="middle" font-size="11" fill="#555">${escape(p.unit)}</text>`;
}

/** Panels side by side, each as wide as its bars. */
export function barChart(panels: readonly Panel[], footer: string): string {
  const widths = panels.map((p) => Math.max(350, 60 + p.bars.length * BAR));
  const width = widths.reduce((a, b) => a + b, 0);
  let x = 0;
  const body = panels.map((p, i) => {
    const s = panel(p, x, widths[i]);
    x += widths[i];
    return s;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="350" font-family="sans-serif">
<rect width="${width}" height="350" fill="white"/>
${body.join("\n")}
<text x="${width / 2}" y="342" text-anchor="middle" font-size="10" fill="#888">${escape(footer)}</text>
</svg>
`;
}

const CASES = ["direct", "gateway", "nginx", "caddy"] as const;
export const COLORS: Record<string, string> = { direct: "#8c8c8c", node: "#8c8c8c", gateway: "#1f77b4", nginx: "#2ca02c", caddy: "#ff7f0e", erpc: "#9467bd", proxyd: "#d62728" };

/** The relay bench's chart: requests/s and WebSocket round trips/s per case. */
export function chart(http: Figures, ws: Figures, date: string): string {
  const bars = (f: Figures) => CASES.map((c) => ({ label: c, value: f[c].rps, note: `p99 ${show(f[c].p99ms)} ms`, color: COLORS[c] }));
  return barChart(
    [
      { title: "HTTP POST eth_blockNumber (TLS)", unit: "requests/s, median of rounds", bars: bars(http) },
      { title: "WebSocket JSON-RPC round trips (TLS)", unit: "round trips/s", bars: bars(ws) },
    ],
    `rpcstack bench ${date}`,
  );
}
