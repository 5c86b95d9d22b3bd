/** A small SVG bar chart of the benchmark: requests/s and WebSocket round trips/s per case. */
export type Figures = Record<"direct" | "gateway" | "nginx" | "caddy", { rps: number; p50ms: number; p99ms: number }>;

const CASES = ["direct", "gateway", "nginx", "caddy"] as const;
const COLORS = { direct: "#8c8c8c", gateway: "#1f77b4", nginx: "#2ca02c", caddy: "#ff7f0e" };

function panel(title: string, f: Figures, x0: number, unit: string): string {
  const max = Math.max(...CASES.map((c) => f[c].rps));
  const h = 220;
  const bars = CASES.map((c, i) => {
    const bh = Math.round((f[c].rps / max) * h);
    const x = x0 + 30 + i * 70;
    return [
      `<rect x="${x}" y="${40 + h - bh}" width="50" height="${bh}" fill="${COLORS[c]}"/>`,
      `<text x="${x + 25}" y="${34 + h - bh}" text-anchor="middle" font-size="11">${f[c].rps.toLocaleString("en")}</text>`,
      `<text x="${x + 25}" y="${40 + h + 16}" text-anchor="middle" font-size="12">${c}</text>`,
      `<text x="${x + 25}" y="${40 + h + 30}" text-anchor="middle" font-size="10" fill="#555">p99 ${f[c].p99ms.toFixed(2)} ms</text>`,
    ].join("");
  }).join("");
  return `<text x="${x0 + 160}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${title}</text>${bars}<text x="${x0 + 160}" y="318" text-anchor="middle" font-size="11" fill="#555">${unit}</text>`;
}

export function chart(http: Figures, ws: Figures, date: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="700" height="350" font-family="sans-serif">
<rect width="700" height="350" fill="white"/>
${panel("HTTP POST eth_blockNumber (TLS)", http, 0, "requests/s, median of rounds")}
${panel("WebSocket JSON-RPC round trips (TLS)", ws, 350, "round trips/s")}
<text x="350" y="342" text-anchor="middle" font-size="10" fill="#888">rpcstack bench ${date}</text>
</svg>
`;
}
