/** What runs on a further host besides its nodes: a disk watcher of its own, over its nodes' volumes. Pure. */
import { MAIN_HOST, hostsInUse, type StackSettings } from "../config/index.js";
import { externalDataVolumes } from "./dataVolumes.js";
import { diskWatch } from "./disk.js";
import { syncHealthUrls } from "./readiness.js";
import type { Role, ServiceSpec } from "./types.js";

export type HostRole = Role<{ readonly diskWatch?: ServiceSpec }> & { readonly host: string };

/** One role per further host that runs nodes (the stack's own host's watcher is in the readiness role). */
export function furtherHostRoles(settings: StackSettings): HostRole[] {
  const health = syncHealthUrls(settings);
  return hostsInUse(settings)
    .filter((h) => h !== MAIN_HOST)
    .map((host) => ({ host, services: { diskWatch: diskWatch(settings, health, host) }, volumes: externalDataVolumes(settings, host) }));
}
