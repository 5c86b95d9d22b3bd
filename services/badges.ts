/** The badge service's container (badges/): it signs badges; the gateway checks them. Pure data. */
import { nodeHttpGet } from "./health.js";
import type { ServiceSpec } from "./types.js";

export const BADGE_SERVICE_PORT = 8480;
/** The service's address on the stack's private network, as the gateway reaches it. */
export const BADGE_SERVICE = `badges:${BADGE_SERVICE_PORT}`;
const PROGRAM = { from: "bundle", path: "/badges/server.js", source: "badges/serverMain.ts" } as const;

/**
 * `image`: one with Node.js. `projects`: the projects as the service reads them
 * (RPCSTACK_BADGE_PROJECTS: chain ids with the claim the gateway checks for each), made by the
 * plan, which knows how chains are served.
 */
export function badgeService(image: string, projects: string): ServiceSpec {
  return {
    name: "badges",
    containerName: "rpcstack-badges",
    image,
    command: ["node", PROGRAM.path, "--port", String(BADGE_SERVICE_PORT)],
    environment: { RPCSTACK_BADGE_PROJECTS: projects },
    secretEnvironment: { RPCSTACK_BADGE_SIGNING_KEY: "RPCSTACK_BADGE_SIGNING_KEY" },
    ports: [{ container: BADGE_SERVICE_PORT, protocol: "tcp", purpose: "api" }],
    volumes: [],
    files: [PROGRAM],
    healthcheck: nodeHttpGet(BADGE_SERVICE_PORT, "/health", 10),
    restart: "unless-stopped",
    user: "1000:1000",
    stopGraceSeconds: 10,
    dependsOn: [],
  };
}
