/** Upstream URLs, their health checks, and the backends that relay to them. */
import { headProbe } from "./heads.js";
import { JSON_TYPE } from "./errors.js";
import type { Directive, Section } from "./model.js";
import { internalGate, internalSign } from "./internal.js";
import { failoverDirectives, hasNodes, hopLogFormat, hopSocket, readHopDirectives, sendHopDirectives, wsGoneFilter, type HopKind } from "./failover.js";
import type { ChainNode, GatewayChain, GatewayOptions } from "./types.js";

export interface Upstream {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** Path without a trailing slash ("" for the root). */
  readonly basePath: string;
}

export function parseUpstream(url: string): Upstream {
  const u = new URL(url);
  const tls = u.protocol === "https:" || u.protocol === "wss:";
  const port = u.port ? Number(u.port) : tls ? 443 : 80;
  return { host: u.hostname.replace(/^\[|\]$/g, ""), port, tls, basePath: u.pathname.replace(/\/+$/, "") };
}

/** The Host header a node reached at `u` expects: its URL's own authority (geth checks it against --http.vhosts). */
export const hostHeader = (u: Upstream) => (u.port === (u.tls ? 443 : 80) ? u.host : `${u.host}:${u.port}`);

/** Health checks say who they are, so node logs and request counts can tell them apart. */
export const CHECK_AGENT = "rpcstack-gateway-healthcheck";

/**
 * How a chain's health is checked: its readiness URL when it has one (200 while synced), else a
 * JSON-RPC head call that must return a result (evm, starknet), else Tendermint's /health.
 */
function healthCheck(c: GatewayChain): { target: Upstream; send: string[]; expect: string[] } {
  if (c.healthUrl) {
    const h = parseUpstream(c.healthUrl);
    return { target: h, send: ["meth", "GET", "uri", h.basePath || "/", "hdr", "User-Agent", CHECK_AGENT], expect: ["status", "200"] };
  }
  if (c.upstreams.rpcHttp && c.kind !== "cosmos") {
    const u = parseUpstream(c.upstreams.rpcHttp);
    const body = headProbe(c.kind);
    return {
      target: u,
      send: ["meth", "POST", "uri", u.basePath || "/", "hdr", "Content-Type", JSON_TYPE, "hdr", "Host", u.host, "hdr", "User-Agent", CHECK_AGENT, "body", body],
      expect: ["rstring", '"result"'],
    };
  }
  const u = parseUpstream(c.upstreams.rpcHttp ?? c.upstreams.rest ?? c.upstreams.grpc!);
  return { target: u, send: ["meth", "GET", "uri", `${u.basePath}/health`, "hdr", "Host", u.host, "hdr", "User-Agent", CHECK_AGENT], expect: ["status", "200"] };
}

/**
 * How often a node's health is checked, and how long a check may wait for its answer (without
 * `timeout check` it waits `inter`). A node that accepts connections but never answers is marked
 * down after two failed checks, within FROZEN_NODE_DOWN_MS of freezing; calls it holds then end
 * (502), and later calls get 503 at once.
 */
export const HEALTH_CHECK_INTERVAL_MS = 2000;
export const CHECK_TIMEOUT_MS = 2000;
/** Successful checks in a row that bring a node back into rotation. */
export const CHECK_RISE = 2;
const FAST_INTERVAL_MS = 500;
export const frozenNodeDownMs = (intervalMs: number) => intervalMs + 2 * CHECK_TIMEOUT_MS + FAST_INTERVAL_MS;

export const backendName = (chain: string, what: string) => `be_${chain}_${what}`;

/** The URL of a node that a route backend relays to. */
type NodeInterface = "rpcHttp" | "rpcWs" | "rest" | "grpc";

/** Builds a chain's backends: one health check per node, and route backends that follow them. */
export class ChainBackends {
  readonly sections: Section[] = [];
  /** Per server of the route backends: its name, the node it stands for, and what it tracks. */
  private readonly servers: { name: string; node?: ChainNode; track: string[] }[];

  constructor(private readonly c: GatewayChain, private readonly opts: GatewayOptions) {
    // A single node keeps the names it always had: be_<chain>_health and server s1.
    const nodes = hasNodes(c) ? c.nodes! : undefined;
    const checked = nodes ? nodes.map((n) => ({ name: n.name, node: n as ChainNode | undefined, check: healthCheck({ ...c, upstreams: n, healthUrl: n.healthUrl }), hc: backendName(c.path, `health_${n.name}`) })) : [{ name: "s1", node: undefined, check: healthCheck(c), hc: backendName(c.path, "health") }];
    // After a failed check the next comes 500 ms later (fastinter): a dead node is marked down
    // within about a second of it being noticed, while one slow answer on a busy host does not
    // take a live node out. Requests to a node that refuses connections get 503 at once anyway
    // (retries 0 below), or go to another node where the chain has several.
    const checkWords = ["check", "inter", `${opts.checkIntervalMs}`, "fastinter", `${FAST_INTERVAL_MS}`, "downinter", "1000", "fall", "2", "rise", `${CHECK_RISE}`];
    for (const k of checked) {
      this.sections.push({
        header: ["backend", k.hc],
        comment: k.node ? `${c.chainId}: health of node ${k.node.name} behind /gateway/${c.path}` : `${c.chainId}: health of the node behind /gateway/${c.path}`,
        directives: [["option", "httpchk"], ["timeout", "check", `${CHECK_TIMEOUT_MS}ms`], ["http-check", "send", ...k.check.send], ["http-check", "expect", ...k.check.expect], this.server("s1", k.check.target, checkWords)],
      });
    }
    // A node marked down ends the calls it holds: a frozen node would keep them until `timeout
    // server`. Where the chain has several nodes, the reads among them go to another (failover.ts).
    this.servers = checked.map((k) => ({ name: k.name, node: k.node, track: ["track", `${k.hc}/s1`, "on-marked-down", "shutdown-sessions"] }));
  }

  private server(name: string, u: Upstream, extra: string[] = []): Directive {
    return [
      "server", name, `${u.host.includes(":") ? `[${u.host}]` : u.host}:${u.port}`,
      ...(u.tls ? ["ssl", "verify", "required", "ca-file", this.opts.caFile, "sni", `str(${u.host})`] : []),
      ...extra,
    ];
  }

  /**
   * The backend that answers for the chain while its node is out: the request becomes a GET of
   * `statusUrl`, whose body (why the node is out) goes back with status 503.
   */
  addDown(statusUrl: string): string {
    const u = parseUpstream(statusUrl);
    const name = backendName(this.c.path, "down");
    this.sections.push({
      header: ["backend", name],
      comment: `${this.c.chainId}: why the node is out, while it is`,
      directives: [
        ["retries", "0"],
        ["http-request", "set-method", "GET"],
        ["http-request", "set-uri", u.basePath || "/"],
        ["http-request", "set-header", "Host", `${u.host}:${u.port}`],
        ["http-request", "set-header", "User-Agent", CHECK_AGENT],
        // The status server may have seen the node come back meanwhile: the route is still closed.
        ["http-response", "set-status", "503"],
        this.server("s1", u),
      ],
    });
    return name;
  }

  /**
   * The route servers of a multi-node chain for the node URLs named by `per` (`url` where a node
   * has none). Nodes that check the Host header are named by their host and port, which
   * `http-send-name-header` sends as each call's Host.
   */
  private nodeServers(url: string, per: NodeInterface, extra: string[] = []): Directive[] {
    const servers = this.servers.map((s) => {
      const u = parseUpstream((s.node && s.node[per]) ?? url);
      return this.server(s.node?.ownHost ? hostHeader(u) : s.name, u, [...s.track, ...extra]);
    });
    return this.servers.some((s) => s.node?.ownHost) ? [["http-send-name-header", "Host"], ...servers] : servers;
  }

  /**
   * Where a chain with several nodes sends what may not be sent twice (failover.ts): a hop backend
   * (the path rewritten, a connection per call) to an internal listener, whose backend reaches
   * the nodes and retries only a connection that failed.
   */
  addSends(url: string, rewrite: Directive[]): string {
    return this.addHop("send", "send", url, rewrite).hop;
  }

  /**
   * Where a chain with several nodes sends its reads (failover.ts): a hop backend that sends a
   * read again when it came back empty, to an internal listener whose backend reaches the nodes
   * and retries on another node. The hop is named by `what`; `nodes` says whether any node is in rotation.
   */
  addReads(what: string, url: string, rewrite: Directive[], per: NodeInterface = "rpcHttp"): { hop: string; nodes: string } {
    return this.addHop("read", what, url, rewrite, per);
  }

  private addHop(kind: HopKind, what: string, url: string, rewrite: Directive[], per: NodeInterface = "rpcHttp"): { hop: string; nodes: string } {
    const hop = backendName(this.c.path, what);
    // JSON-RPC's hops keep the names they always had; another interface's reads (Cosmos REST and
    // Tendermint URI calls) get a listener of their own, named by their hop.
    const label = kind === "send" || what === "rpc" ? kind : what;
    const nodes = backendName(this.c.path, `${label}_nodes`);
    const socket = hopSocket(this.c.path, label, this.opts);
    this.sections.push(
      {
        header: ["backend", hop],
        comment: kind === "send" ? `${this.c.chainId}: sends (and calls the gateway cannot vouch for as reads), through the send listener` : `${this.c.chainId}: reads, through the read listener`,
        directives: [...rewrite, internalSign(), ...(kind === "send" ? sendHopDirectives(socket) : readHopDirectives(socket))],
      },
      { header: ["frontend", `fe_${this.c.path}_${label}`], directives: [["bind", socket], ["log-format", hopLogFormat(kind)], ["default_backend", nodes]], rules: internalGate() },
      { header: ["backend", nodes], directives: [...failoverDirectives(kind === "send"), ...this.nodeServers(url, per)] },
    );
    return { hop, nodes };
  }

  /**
   * A backend relaying to `url` after `rewrite`; its servers follow the nodes' health. `per` names
   * the node URL each server of a multi-node chain takes (all nodes share the client, so `url`'s
   * path stands for theirs).
   */
  add(what: string, url: string, rewrite: Directive[], extra: string[] = [], per?: NodeInterface): string {
    const u = parseUpstream(url);
    const name = backendName(this.c.path, what);
    const multi = per !== undefined && hasNodes(this.c);
    const servers = multi ? this.nodeServers(url, per, extra) : this.servers.map((s) => this.server(s.name, u, [...s.track, ...extra]));
    this.sections.push({
      header: ["backend", name],
      directives: multi
        ? // The stack's own nodes answer any Host (geth runs with --http.vhosts=*): the client's goes
          // on. An operator's own nodes get theirs (nodeServers).
          [...failoverDirectives(), ...(per === "rpcWs" ? [wsGoneFilter()] : []), ...rewrite, ...servers]
        : [
            // A refused connection is not retried against the same dead node (HAProxy would wait
            // a second between attempts): the client gets 503 at once and may retry itself.
            ["retries", "0"],
            ...rewrite,
            ["http-request", "set-header", "Host", hostHeader(u)],
            ...servers,
          ],
    });
    return name;
  }
}
