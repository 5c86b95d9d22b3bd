import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The real engine's deployment tests run with `npm run test:engine` (vitest.engine.config.mts).
    exclude: ["test/engine/**", "**/node_modules/**"],
    globalSetup: ["test/globalSetup.ts"],
    // Each file runs in its own module graph: Pulumi's mock engine keeps global state.
    isolate: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
