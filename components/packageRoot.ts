import { join } from "node:path";

/** The package's root folder, where shipped files (indexer, readiness program) live. */
export const PACKAGE_ROOT = join(__dirname, "..");
