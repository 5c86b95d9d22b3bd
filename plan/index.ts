/**
 * The plan of one stack, built once: every container by role (services/), and the gateway's
 * compiled configuration (gateway/), keyless. Components and the compose exporter read it. Pure.
 */
import type { L1Endpoint, Quota, StackSettings } from "../config/index.js";
import { BADGE_KEY_FILE } from "../gateway/badges.js";
import { CONFIG_FILE, KEY_MAP_FILE, compileGateway } from "../gateway/build.js";
import { QUOTA_MAP_FILE, quotaMap } from "../gateway/quotas.js";
import type { GatewayChain, GatewayCompiled, GatewayOptions } from "../gateway/types.js";
import { buildServices, type GeneratedFile, type StackServices } from "../services/index.js";
import { badgeServiceProjects } from "./badges.js";
import { gatewayHosting } from "./gatewayHosting.js";
import { gatewayOptions } from "./gatewayOptions.js";
import { monitoringPlan, type MonitoringPlan } from "./monitoring.js";
import { compilerChains, servedSurface, type Surface } from "./surface.js";

export { gatewayOptions };
export * from "./surface.js";
export * from "./views.js";
export { furtherHostIngress, type Ingress } from "./ingress.js";
export { monitoringPlan, type MonitoringPlan } from "./monitoring.js";

export interface StackPlan extends StackServices {
  /** What is served, at which URL. */
  readonly surface: Surface;
  readonly gatewayConfig: {
    readonly chains: readonly GatewayChain[];
    readonly options: GatewayOptions;
    /** haproxy.cfg and the files it reads, except the key map: nothing in it is secret. */
    readonly compiled: GatewayCompiled;
  };
  /** Prometheus, its rules and the dashboards (rpcstack:monitoring); absent where it is off. */
  readonly monitoring?: MonitoringPlan;
}

export function planStack(settings: StackSettings): StackPlan {
  const surface = servedSurface(settings);
  const chains = compilerChains(surface);
  const options = gatewayOptions(settings);
  const compiled = compileGateway(chains, options);
  // The compiled config decides the buffers, so it also says what HAProxy's process environment needs.
  const services = buildServices(settings, gatewayHosting(compiled.metricsPaths), compiled.environment, badgeServiceProjects(settings, surface));
  const monitoring = monitoringPlan(settings, services);
  return { ...services, surface, gatewayConfig: { chains, options, compiled }, ...(monitoring ? { monitoring } : {}) };
}

/** The key sync's files: the key map to apply (hashed keys, a secret all the same) and the quota map (no secret). */
export const keyFiles = <K>(keyMap: K, quotas: readonly Quota[]): GeneratedFile<K | string>[] => [
  { name: KEY_MAP_FILE, content: keyMap, secret: true },
  { name: QUOTA_MAP_FILE, content: quotaMap(quotas) },
];

/**
 * haproxy.cfg for a stack that relays an external L1: it names the L1's URL, a secret, so it is
 * compiled where that URL is known (the Gateway component, inside a secret Output).
 */
export function configWithExternalL1(settings: StackSettings, l1: L1Endpoint): string {
  return compileGateway(compilerChains(servedSurface(settings, l1)), gatewayOptions(settings)).config;
}

/**
 * The gateway's generated files in the order they are placed. None is secret but haproxy.cfg when `secretConfig` replaces it (an external L1's URL in it). With badges, the
 * public key they are verified with (no secret).
 */
export function gatewayFiles<K>(compiled: GatewayCompiled, secretConfig?: K, badgePublicKey?: K): GeneratedFile<string | K>[] {
  return [
    secretConfig === undefined ? { name: CONFIG_FILE, content: compiled.config } : { name: CONFIG_FILE, content: secretConfig, secret: true },
    ...(badgePublicKey === undefined ? [] : [{ name: BADGE_KEY_FILE, content: badgePublicKey }]),
    ...Object.entries(compiled.files).map(([name, content]) => ({ name, content })),
  ];
}
