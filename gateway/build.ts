/**
 * Gateway chains and limits -> an HAProxy configuration plus the files it reads (the stack's data
 * for the Lua programs of gateway/lua/, JSON error pages); project keys -> the key map,
 * separately, since only it holds a secret.
 * Pure: no I/O, no Pulumi. Each concern lives in the module named for it: routes.ts, limits.ts,
 * policy.ts, cors.ts, errors.ts, tls.ts; this file puts them in the order HAProxy must run them.
 */
import { createHash } from "node:crypto";
import { BADGE_ACL, BADGE_KEY_FILE, badgeAllowanceRules, badgeAuthRules, badgeConds, badgeData, badgeFiles, badgeRefund, badgeRefusals, badgeScopeRules, badgeSections, badgeServiceRules } from "./badges.js";
import { batchData, batchGlobal, batchRules, batchSections } from "./batch.js";
import { cacheData, cacheGlobal, cacheMetricsDirectives, cacheMetricsPath, cacheRules, cacheSections } from "./cache.js";
import { corsRules } from "./cors.js";
import { endBeforeBody, errorFiles, refuse } from "./errors.js";
import { internalData, internalSecretGlobal, internalStrip } from "./internal.js";
import { HAPROXY_ENVIRONMENT, ADDRESS_RATE, CLIENT_ADDRESS, RATE_OTHERS_FILE, gatewayMemoryMiB, wsOpenRules, bufferData, bodyRules, callRate, connectionRules, countWrongKey, guessRules, headerRules, inProgressRules, rateRules, tables, wsRules } from "./limits.js";
import { normalizeRules } from "./normalize.js";
import { settleNever } from "./simplify.js";
import { failoverGlobal, retryRules } from "./failover.js";
import { filterData, filterGlobal, filterRules } from "./filters.js";
import { nodeMetricsBackend, nodeMetricsRoutes } from "./nodeMetrics.js";
import { afterResponse, anon, req, serialize, type Cond, type Rule, type Section } from "./model.js";
import { LUA_DATA_FILE, LUA_ENTRIES, luaDataFile, luaLoad, luaPaths } from "./lua.js";
import { policyData, policyRules, wsPolicyData } from "./policy.js";
import { HOST_FETCH, NODE_DOWN, chainRoutes, hostIs, tendermintWsRules } from "./routes.js";
import { specGates, specRules } from "./specVersions.js";
import { WS_HANDSHAKE, handshakeRules } from "./upgrades.js";
import { QUOTA_MAP_FILE, QUOTA_USED_FILE, quotaCalls, quotaHeaders, quotaMap, quotaMapPath, quotaNeverSent, quotaTakeBack, quotaTracking } from "./quotas.js";
import { KEY_RATE_TABLE } from "./usageContract.js";
import { NEVER_SENT, UNROUTED_VAR, requestCalls, usageAnswers, usageCalls, usageTracking } from "./usage.js";
import { EXPORTER_PATH, certSections, defaultsSection, errorsSection, globalSection, httpSections, metricsSection, resolverSections } from "./tls.js";
import { INTERFACES, type GatewayBuild, type GatewayChain, type GatewayCompiled, type GatewayOptions, type ProjectKey, type Quota, type Route } from "./types.js";

export { ERROR_STATUS_CODES, errorBody } from "./errors.js";
export { CHECK_AGENT, parseUpstream } from "./upstreams.js";
export { HEAD_METHOD, headProbe } from "./heads.js";
export * from "./types.js";

/** The configuration's file name, and the key map's: the one file that depends on project keys. */
export const CONFIG_FILE = "haproxy.cfg";
export const KEY_MAP_FILE = "keys.map";

/** Where HAProxy reads the key map from. */
export const keyMapPath = (o: GatewayOptions) => o.keyMapFile ?? `${o.filesDir}/${KEY_MAP_FILE}`;

/** The key map holds digests: the runtime API's `show map` and the file itself reveal no key. */
export const keyDigest = (key: string) => createHash("sha256").update(key).digest("hex").toUpperCase();

/** The key map HAProxy reads: one `<digest> <name>` line per project key. */
export const keyMap = (keys: readonly ProjectKey[]) => keys.map((k) => `${keyDigest(k.key)} ${k.name}\n`).join("");

/**
 * The configuration, key map and quota map together (for tests and the bench, which run HAProxy
 * on them), and with badges the public key they are verified with (PEM).
 */
export function buildGateway(chains: readonly GatewayChain[], keys: readonly ProjectKey[], opts: GatewayOptions, badgePublicKey?: string, quotas: readonly Quota[] = []): GatewayBuild {
  const compiled = compileGateway(chains, opts);
  if (opts.badges && badgePublicKey === undefined) throw new Error("buildGateway: badges need the public key badges are verified with");
  return { ...compiled, files: { [KEY_MAP_FILE]: keyMap(keys), [QUOTA_MAP_FILE]: quotaMap(quotas), ...(badgePublicKey ? { [BADGE_KEY_FILE]: badgePublicKey } : {}), ...compiled.files } };
}

/** The configuration and the files it reads except the key map: no project key goes in. */
export function compileGateway(chains: readonly GatewayChain[], opts: GatewayOptions): GatewayCompiled {
  const per = chains.map((c) => ({ c, r: chainRoutes(c, opts) }));
  const routes: Route[] = per.flatMap(({ r }) => r.routes);
  const hostnames = chains.flatMap((c) => Object.values(c.hostnames ?? {}));
  const grpcHosts = chains.flatMap((c) => (c.hostnames?.grpc ? [c.hostnames.grpc] : []));
  const tendermintHosts = chains.flatMap((c) => (c.hostnames?.tendermintRpc && c.upstreams.rpcHttp ? [c.hostnames.tendermintRpc] : []));

  const gw: Cond = ["gateway_path"];
  const served: Cond = ["served"];
  const keyed: Cond = ["gateway_path", ...anon("var(txn.keyname)", "-m", "found")];
  const ws: Cond = ["gateway_path", ...WS_HANDSHAKE];
  const badge = badgeConds(gw);
  // The badge service's path is neither a chain nor a key: it has rules of its own.
  const notBadge: Cond = opts.badges ? ["!badge_path"] : [];
  // gRPC streams and WebSocket handshakes are not bodies to wait for.
  const bodied: Cond = [...(grpcHosts.length ? ["!", ...hostIs(...grpcHosts)] : []), "!", ...WS_HANDSHAKE];

  const rules: Rule[] = [
    ...connectionRules(opts),
    ...headerRules(),
    ...normalizeRules(),
    internalStrip(),
    ...corsRules(opts.corsOrigins, served),
    req(["set-var(txn.chain)", "path,field(3,/)"], gw),
    req(["set-var(txn.iface)", "path,field(4,/)"], gw),
    req(["set-var(txn.key)", "path,field(5,/)"], gw),
    req(["set-var(txn.rest)", "path,regsub(^/gateway/[^/]*/[^/]*/[^/]*/?,/),regsub(^/$,)"], gw),
    ...chains.flatMap(specRules),
    ...chains.flatMap(tendermintWsRules),
    // What the access log shows: the chain and interface when they are known ones, else "-".
    req(["set-var(txn.log_chain)", "var(txn.chain)"], ["known_chain"]),
    req(["set-var(txn.log_iface)", "var(txn.iface)"], ["known_iface"]),
    ...handshakeRules(tendermintHosts.length ? hostIs(...tendermintHosts) : undefined),
    ...wsOpenRules([...WS_HANDSHAKE]),
    ...inProgressRules(opts, ["gateway_path", "!public_host", "!", ...WS_HANDSHAKE], ["public_host", "!", ...WS_HANDSHAKE]),
    req(["track-sc1", CLIENT_ADDRESS, "table", "st_addresses"], ["public_host"], "Cosmos public hostnames (no /gateway path): per-address rate limit."),
    // An address already over its rate is refused before its body is waited for (this request's
    // batch calls are counted after the policy, in rateRules).
    ...callRate(opts, 1, ["public_host"], ADDRESS_RATE),
    ...badgeServiceRules(opts),
    refuse(404, "unknown chain or interface", ["!public_host", ...notBadge, "!known_chain", "or", "!public_host", ...notBadge, "!known_iface"]),
    ...guessRules(opts, gw),
    // The digest stays in a variable: the WebSocket filter looks it up again on every frame, so a key
    // deleted from the map through the runtime API closes its open sockets.
    req(["set-var(txn.key_digest)", "var(txn.key),digest(sha256),hex"], [...gw, ...anon("var(txn.key)", "-m", "found")]),
    req(["set-var(txn.keyname)", `var(txn.key_digest),map(${keyMapPath(opts)})`], [...gw, ...anon("var(txn.key_digest)", "-m", "found")]),
    ...badgeAuthRules(opts, badge),
    ...countWrongKey(gw, ["!", ...anon("var(txn.keyname)", "-m", "found")]),
    ...badgeRefusals(opts, badge),
    refuse(401, "invalid or missing project key", ["!public_host", ...notBadge, "!", ...anon("var(txn.keyname)", "-m", "found")]),
    ...badgeScopeRules(opts, chains, badge),
    req(["track-sc0", "var(txn.keyname)", "table", KEY_RATE_TABLE], keyed),
    ...usageTracking(keyed),
    ...quotaTracking(opts, keyed),
    ...bodyRules(opts, bodied),
    ...policyRules(chains, opts.maxBatch),
    ...filterRules(chains, opts),
    ...retryRules(chains),
    ...rateRules(opts, keyed),
    // The gates (a node out, an unknown spec version, a method a hostname does not serve) before
    // anything is counted: a call they refuse spends no usage, quota or allowance.
    ...chains.flatMap(specGates),
    ...per.flatMap(({ r }) => r.gates),
    ...requestCalls(["!", ...WS_HANDSHAKE], NODE_DOWN),
    // The quota first (it counts, then checks: concurrent calls never pass it), then the badge's
    // allowance, which gives the quota back when it refuses: a refusal spends neither.
    ...quotaCalls(["!", ...WS_HANDSHAKE], ws),
    ...badgeAllowanceRules(opts, badge, quotaTakeBack),
    ...usageCalls(!!opts.badges),
    ...batchRules(chains),
    ...wsRules(opts, ws),
    ...cacheRules(chains, opts),
    ...per.flatMap(({ r }) => r.hostUses),
    ...per.flatMap(({ r }) => r.uses),
    ...usageAnswers(),
    ...quotaNeverSent(NEVER_SENT),
    ...badgeRefund(opts, afterResponse, NEVER_SENT),
    ...quotaHeaders(),
    // Anything no route took: http-request rules run before use_backend, so this is a backend.
    { phase: "default_backend", action: ["be_unrouted"] },
  ];

  // Access log: the key's name, never the key, and no raw path field (%r, %HU, %HP carry it).
  const logFormat = "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %tsc key=%[var(txn.keyname)] chain=%[var(txn.log_chain)] iface=%[var(txn.log_iface)] %HM";
  const https: Section = {
    header: ["frontend", "https"],
    comment: "Public TLS listener: gateway paths and Cosmos hostnames.",
    directives: [
      ["bind", `${opts.bindAddress}:${opts.httpsPort}`, "ssl", "crt", opts.certFile, "alpn", "h2,http/1.1"],
      ["log-format", logFormat],
      ["acl", "gateway_path", "path_beg", "/gateway/"],
      ["acl", "public_host", ...(hostnames.length ? [HOST_FETCH, "-i", ...hostnames] : ["always_false"])],
      ["acl", "served", "path_beg", "/gateway/"],
      ["acl", "served", ...(hostnames.length ? [HOST_FETCH, "-i", ...hostnames] : ["always_false"])],
      ["acl", "known_chain", "var(txn.chain)", "-m", "str", ...(chains.length ? chains.map((c) => c.path) : ["-"])],
      ["acl", "known_iface", "var(txn.iface)", "-m", "str", ...INTERFACES],
      ...(opts.badges ? [BADGE_ACL] : []),
    ],
    // Without public hostnames their rules can never apply: not written, not evaluated per request.
    rules: endBeforeBody(settleNever(rules, hostnames.length ? [] : ["public_host"])),
  };
  // What no route takes: marked so that usage does not count its calls (usageCalls), and what the
  // quota and a badge's allowance counted on the way is given back.
  const unrouted: Section = {
    header: ["backend", "be_unrouted"],
    directives: [],
    rules: [req([`set-var(${UNROUTED_VAR})`, "bool(true)"]), ...quotaTakeBack(), ...badgeRefund(opts), refuse(405, "method or path not served on this interface")],
  };

  const files: Record<string, string> = {
    [LUA_DATA_FILE]: luaDataFile({ internal: internalData(), buffer: bufferData(opts), policy: policyData(chains), ws: wsPolicyData(chains, opts.maxBatch), cache: cacheData(chains, opts), filters: filterData(chains, opts), batch: batchData(opts), cert_file: opts.certFile, key_map: keyMapPath(opts), quota_map: quotaMapPath(opts), quota_used_map: `${opts.filesDir}/${QUOTA_USED_FILE}`, ...(opts.sharedRates ? { rate_others_map: `${opts.filesDir}/${RATE_OTHERS_FILE}` } : {}), ...badgeData(opts) }),
    ...badgeFiles(opts),
    // Never empty: the docker provider refuses an upload without content.
    [QUOTA_USED_FILE]: "# <name>/<period> <calls counted before this HAProxy process>, filled by the usage keeper\n",
    ...(opts.sharedRates ? { [RATE_OTHERS_FILE]: "# <name> <calls in the rate window on the other gateway replicas>, filled by the usage keeper\n" } : {}),
    ...errorFiles(),
  };
  const lua = [
    ...luaPaths(opts),
    luaLoad(opts, LUA_ENTRIES.policy),
    luaLoad(opts, LUA_ENTRIES.limits),
    luaLoad(opts, LUA_ENTRIES.quotas),
    ...(grpcHosts.length ? [luaLoad(opts, LUA_ENTRIES.grpc)] : []),
    ...(opts.certSocket ? [luaLoad(opts, LUA_ENTRIES.certs)] : []),
    ...(opts.badges ? [luaLoad(opts, LUA_ENTRIES.badges)] : []),
    ...failoverGlobal(chains, opts),
    ...filterGlobal(chains, opts),
    ...batchGlobal(chains, opts),
  ];
  const sections: Section[] = [
    globalSection(opts, lua, [internalSecretGlobal(), ...cacheGlobal(chains, opts)]),
    defaultsSection(opts),
    errorsSection(opts),
    ...resolverSections(opts),
    https,
    ...cacheSections(chains, opts),
    ...batchSections(chains, opts),
    ...httpSections(opts, hostnames),
    metricsSection(opts, cacheMetricsDirectives(chains, opts), nodeMetricsRoutes(opts)),
    ...nodeMetricsBackend(opts),
    ...certSections(opts),
    ...badgeSections(opts),
    ...per.flatMap(({ r }) => r.backends),
    unrouted,
    ...tables(),
  ];
  const cacheMetrics = cacheMetricsPath(chains, opts);
  return {
    config: serialize({ sections }), files, routes, environment: HAPROXY_ENVIRONMENT,
    metricsPaths: { exporter: EXPORTER_PATH, ...(cacheMetrics ? { cache: cacheMetrics } : {}) },
    memoryMiB: gatewayMemoryMiB(opts),
  };
}

