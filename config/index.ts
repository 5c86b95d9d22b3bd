export * from "./errors.js";
export * from "./networks/index.js";
export * from "./tiers.js";
export * from "./types.js";
export * from "./validate.js";
export * from "./versions.js";
export * from "./releases.js";
export * from "./publicHost.js";
