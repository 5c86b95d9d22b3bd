/** config -> service specs. The single source of truth for what runs; no Pulumi, no I/O. */
import type { StackSettings } from "../config/index.js";
import { l1Services, l1Urls } from "./l1.js";
import { l2Services, l2Urls } from "./l2.js";
import type { ServiceGroup } from "./types.js";

export * from "./types.js";
export { PORTS } from "./ports.js";
export { l1Urls, JWT_PATH } from "./l1.js";
export { l2Urls, type L2Urls } from "./l2.js";
export { syncCheck, syncHealth, syncHealthUrls, SYNC_HEALTH_PORT } from "./readiness.js";

export interface StackServices {
  readonly l1: ServiceGroup;
  readonly l2: ServiceGroup;
  readonly urls: { readonly l1: ReturnType<typeof l1Urls>; readonly l2: ReturnType<typeof l2Urls> };
}

export function buildServices(config: StackSettings): StackServices {
  return {
    l1: l1Services(config),
    l2: l2Services(config),
    urls: { l1: l1Urls(), l2: l2Urls(config) },
  };
}
export { diskWatch, diskCheckUrl, DISK_WATCH } from "./disk.js";
export { externalDataVolumes, dataVolumes, volumeArgs, dataVolumeMounts } from "./dataVolumes.js";
export { gatewayServices, gatewayOptions, certificateNames, GATEWAY_PATHS, METRICS_PORT } from "./gateway.js";
