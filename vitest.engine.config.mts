import { defineConfig } from "vitest/config";

// `npm run test:engine`: the real Pulumi engine deploying the local stack (test/engine/). Not part
// of `npm test`: it needs the docker and command provider plugins, which CI cannot build.
export default defineConfig({
  test: {
    include: ["test/engine/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 900_000,
    hookTimeout: 900_000,
    fileParallelism: false,
  },
});
