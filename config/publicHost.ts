import type { StackSettings } from "./types.js";

/** The name users reach the gateway at: the domain, or `localhost` on a local stack without one. */
export const publicHost = (settings: StackSettings): string => settings.gateway.domain ?? "localhost";
