/** What the service specs are told of the gateway (services/ does not read gateway/). Pure. */
import { KEY_MAP_FILE } from "../gateway/build.js";
import { RATE_OTHERS_FILE } from "../gateway/limits.js";
import { LUA_FILES, LUA_SOURCE_DIR } from "../gateway/lua.js";
import { QUOTA_MAP_FILE, QUOTA_USED_FILE } from "../gateway/quotas.js";
import { EXPORTER_PATH } from "../gateway/tls.js";
import type { GatewayCompiled } from "../gateway/types.js";
import { CHECK_RISE, HEALTH_CHECK_INTERVAL_MS } from "../gateway/upstreams.js";
import type { GatewayHosting } from "../services/index.js";

/** `metricsPaths`: what the compiled configuration's metrics listener serves (HAProxy's exporter alone when none is given). */
export function gatewayHosting(metricsPaths: GatewayCompiled["metricsPaths"] = { exporter: EXPORTER_PATH }): GatewayHosting {
  return {
    keyMapFile: KEY_MAP_FILE,
    quotaMapFile: QUOTA_MAP_FILE,
    quotaUsedFile: QUOTA_USED_FILE,
    rateOthersFile: RATE_OTHERS_FILE,
    luaSourceDir: LUA_SOURCE_DIR,
    luaFiles: LUA_FILES,
    nodeBackSeconds: (CHECK_RISE * HEALTH_CHECK_INTERVAL_MS) / 1000,
    metrics: [{ job: "gateway", path: metricsPaths.exporter }, ...(metricsPaths.cache ? [{ job: "gateway-cache" as const, path: metricsPaths.cache }] : [])],
  };
}
