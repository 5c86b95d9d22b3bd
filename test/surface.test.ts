/** The served surface: one vocabulary, and every reader of it (routes, outputs, manifest, smoke plan) agrees. */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/index.js";
import { readStackFile } from "../export/stackFile.js";
import { INTERFACES } from "../gateway/types.js";
import { providerManifest } from "../manifest/provider.js";
import { ENDPOINT_NAMES, SURFACE_INTERFACES, planStack, publicEndpoints, smokePlan } from "../plan/index.js";
import { ROOT, type StackName } from "./harness.js";

const settingsOf = (stack: StackName) => loadConfig({ entries: readStackFile(ROOT, stack).entries, withoutSecrets: true });

describe("the served surface's vocabulary", () => {
  it("is the gateway path words, Tendermint's URI form and the Cosmos hostname forms", () => {
    expect(INTERFACES).toEqual(["rpc-http", "rest", "rpc"]);
    expect(SURFACE_INTERFACES).toEqual(["rpc-http", "rest", "rpc", "tendermint-uri", "tendermint-rpc", "tendermint-ws", "rest-host", "grpc"]);
    // The endpoints output keeps its names: one fixed renaming, one name each.
    expect(Object.keys(ENDPOINT_NAMES).sort()).toEqual([...SURFACE_INTERFACES].sort());
    expect(new Set(Object.values(ENDPOINT_NAMES)).size).toBe(SURFACE_INTERFACES.length);
  });
});

describe.each(["local", "testnet", "mainnet"] as const)("the %s stack's surface", (stack) => {
  const settings = settingsOf(stack);
  const plan = planStack(settings);
  const manifest = providerManifest(settings);
  const endpoints = publicEndpoints(settings);

  it("the manifest and the endpoints output list the same URLs for every chain", () => {
    expect(manifest.chains.map((c) => c.path)).toEqual(Object.keys(endpoints));
    for (const c of manifest.chains) {
      const renamed = Object.fromEntries(Object.entries(c.interfaces).map(([k, url]) => [ENDPOINT_NAMES[k as keyof typeof ENDPOINT_NAMES], url]));
      expect({ ...renamed, ...c.versioned }, c.path).toEqual(endpoints[c.path].endpoints);
      for (const k of Object.keys(c.interfaces)) expect(SURFACE_INTERFACES).toContain(k);
    }
  });

  it("path interfaces sit under /gateway/<chain>/<interface>/<KEY> of the public host", () => {
    const host = new URL(plan.surface.baseUrl).host;
    for (const c of plan.surface.chains) {
      for (const i of c.interfaces.filter((i) => (INTERFACES as readonly string[]).includes(i.name))) {
        expect(i.url.startsWith(`${i.name === "rpc" ? "wss" : "https"}://${host}/gateway/${c.path}/${i.name}/<KEY>`), i.url).toBe(true);
      }
    }
  });

  it("the smoke plan relays once per path interface, and HAProxy routes exactly those", () => {
    const pathWords = (c: (typeof manifest.chains)[number]) => Object.keys(c.interfaces).filter((k) => (INTERFACES as readonly string[]).includes(k));
    const planned = smokePlan(plan.gatewayConfig.chains).map((s) => `${s.path} ${s.iface}`);
    expect(planned).toEqual(manifest.chains.flatMap((c) => pathWords(c).map((w) => `${c.path} ${w}`)));
    const routed = new Set(plan.gatewayConfig.compiled.routes.filter((r) => r.iface !== "hostname").map((r) => `${r.chain} ${r.iface}`));
    expect([...routed].sort()).toEqual([...planned].sort());
  });
});

describe("Starknet spec versions on the surface", () => {
  const testnet = (l2?: object) => {
    const { entries } = readStackFile(ROOT, "testnet");
    return loadConfig({ entries: l2 ? { ...entries, "rpcstack:l2": JSON.stringify(l2) } : entries, withoutSecrets: true });
  };

  it("the endpoints output lists each version's URL beside the unversioned ones", () => {
    const settings = testnet();
    const l2 = settings.network.chains.l2;
    const e = publicEndpoints(settings)[l2.path].endpoints;
    const host = new URL(planStack(settings).surface.baseUrl).host;
    expect(e.rpcHttp_v0_9).toBe(`https://${host}/gateway/${l2.path}/rpc-http/<KEY>/v0_9`);
    expect(e.rpcWs_v0_9).toBe(`wss://${host}/gateway/${l2.path}/rpc/<KEY>/v0_9?secret=null`);
    expect(Object.keys(e).filter((k) => k.startsWith("rpcHttp_"))).toEqual(["rpcHttp_v0_8", "rpcHttp_v0_9", "rpcHttp_v0_10"]);
  });

  it("the unversioned path relays to l2.rpcVersion on the node, and the gateway knows the others", () => {
    const chain = (s: ReturnType<typeof testnet>) => planStack(s).surface.chains.find((c) => c.chainId === s.network.chains.l2.chainId)!;
    const pf = chain(testnet({ client: "pathfinder", rpcVersion: "v0_9" }));
    expect(pf.upstreams).toEqual({ rpcHttp: "http://pathfinder:9545/rpc/v0_9", rpcWs: "ws://pathfinder:9545/ws/rpc/v0_9" });
    expect(pf.specVersions!.pinned).toBe("v0_9");
    expect(pf.specVersions!.paths.v0_10).toEqual({ http: "/rpc/v0_10", ws: "/ws/rpc/v0_10" });
    expect(chain(testnet()).upstreams).toEqual({ rpcHttp: "http://juno:6060/v0_10", rpcWs: "ws://juno:6061/v0_10" });
  });
});
