/** rpcstack-ready --serve PORT: the gateway's health checks and the rotation metrics over HTTP. */
import { createServer, type Server, type ServerResponse } from "node:http";
import { rotationMetrics } from "./rotation.js";
import { NodeWatch } from "./watch.js";
import { systemReason } from "../kit/errors.js";
import { UsageError } from "../kit/args.js";
import type { CliOptions } from "./readyArgs.js";

const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));

/**
 * Long-running health mode for the gateway: each node polled on its own loop (watch.ts).
 * /ready/<layer>: 200 while a node of the layer is in rotation (a layer's only node: while it is
 * synced), with the states; /ready/<layer>/<node>: that node's verdict; /ready: every layer;
 * /metrics: the verdicts as Prometheus gauges.
 */
export function serveHealth(opts: CliOptions): { server: Server; stop: () => void; ready: Promise<number> } {
  const watch = new NodeWatch(opts.targets, { poll: opts.poll, intervalMs: opts.intervalMs, rules: opts.rules }).start();
  const layers = [...new Set(opts.targets.map((t) => t.label))];
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    const verdicts = watch.verdicts();
    if (path === "/metrics") return void res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" }).end(rotationMetrics(verdicts, opts.chainNames));
    const node = /^\/ready\/(l1|l2)\/([a-z0-9][a-z0-9-]*)$/.exec(path);
    if (node) {
      const t = opts.targets.find((x) => x.label === node[1] && x.node === node[2]);
      const v = t && verdicts.find((x) => x.layer === t.label && x.node === t.node);
      if (!t || !v) return json(res, 404, { error: `no such node: ${node[1]}/${node[2]}` });
      return json(res, v.inRotation ? 200 : 503, { ...v, state: watch.state(t) });
    }
    const wanted = path === "/ready" ? layers : path === "/ready/l1" ? ["l1"] : path === "/ready/l2" ? ["l2"] : [];
    const known = wanted.filter((l) => layers.includes(l as "l1" | "l2"));
    if (!known.length) return json(res, 404, { error: `no such check: ${path}` });
    const body: Record<string, unknown> = {};
    let ok = true;
    for (const layer of known) {
      const mine = opts.targets.filter((t) => t.label === layer);
      const fit = mine.find((t) => verdicts.find((v) => v.layer === layer && v.node === t.node)?.inRotation);
      ok &&= fit !== undefined;
      body[layer] = watch.state(fit ?? mine[0]);
      if (mine.length > 1) body[`${layer}Nodes`] = verdicts.filter((v) => v.layer === layer);
    }
    json(res, ok ? 200 : 503, body);
  });
  const ready = new Promise<number>((resolve, reject) => {
    server.once("error", (e) => reject(new UsageError(`cannot serve on ${opts.serve!.host}:${opts.serve!.port} (--serve, --serve-host): ${systemReason(e)}`)));
    server.listen(opts.serve!.port, opts.serve!.host, () => resolve((server.address() as { port: number }).port));
  });
  return {
    server,
    ready,
    stop: () => {
      watch.stop();
      server.close();
    },
  };
}
