/** What the service specs are told of the gateway (services/ does not read gateway/). Pure. */
import { KEY_MAP_FILE } from "../gateway/build.js";
import { LUA_FILES, LUA_SOURCE_DIR } from "../gateway/lua.js";
import { QUOTA_MAP_FILE, QUOTA_USED_FILE } from "../gateway/quotas.js";
import { CHECK_RISE, HEALTH_CHECK_INTERVAL_MS } from "../gateway/upstreams.js";
import type { GatewayHosting } from "../services/index.js";

export const GATEWAY_HOSTING: GatewayHosting = {
  keyMapFile: KEY_MAP_FILE,
  quotaMapFile: QUOTA_MAP_FILE,
  quotaUsedFile: QUOTA_USED_FILE,
  luaSourceDir: LUA_SOURCE_DIR,
  luaFiles: LUA_FILES,
  nodeBackSeconds: (CHECK_RISE * HEALTH_CHECK_INTERVAL_MS) / 1000,
};
