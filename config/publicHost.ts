import type { StackSettings } from "./types.js";

/**
 * The name users reach the gateway at: the domain; without one, `localhost` on a local stack and
 * the server's address on an ssh host (devnet, with a self-signed certificate for that name).
 */
export const publicHost = (settings: Pick<StackSettings, "gateway" | "host">): string =>
  settings.gateway.domain ?? (settings.host.kind === "ssh" ? settings.host.address : "localhost");
