/**
 * A stand-in for the pinned Node.js runtime image (node:<release>-alpine, which runs the restore):
 * the end-to-end Debian Node image with the same Node.js release on top (from the npm registry,
 * devtools/nodeRuntime.ts), so the restore runs with the zstd of that release. A second,
 * per-run layer trusts the run's test CA, as a real image trusts the public CAs. Kept apart from
 * rpcstack-e2e/ (whose stale images the image build removes); the per-run layer is removed by its test.
 */
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NODE_RUNTIME_RELEASE, nodeRuntime } from "../nodeRuntime.js";
import { docker, imageExists } from "./build.js";

function build(ref: string, dockerfile: string, files: Record<string, string>): string {
  if (imageExists(ref)) return ref;
  const ctx = mkdtempSync(join(tmpdir(), "rpcstack-e2e-ctx-"));
  try {
    writeFileSync(join(ctx, "Dockerfile"), dockerfile);
    for (const [name, from] of Object.entries(files)) copyFileSync(from, join(ctx, name));
    docker(["build", "-q", "-t", ref, ctx]);
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
  return ref;
}

/** `node` image + the runtime's Node release, then the run's CA (`caPem`): the image to run the restore with. */
export function nodeRuntimeImage(nodeImage: string, caPem: string): string {
  const bin = nodeRuntime();
  const baseId = docker(["image", "inspect", "--format", "{{.Id}}", nodeImage]);
  const runtime = build(
    `rpcstack-e2e-runtime/node:${NODE_RUNTIME_RELEASE}-${createHash("sha256").update(baseId).update(NODE_RUNTIME_RELEASE).digest("hex").slice(0, 12)}`,
    `FROM ${nodeImage}\nCOPY node /usr/local/bin/node\n`,
    { node: bin },
  );
  const ca = readFileSync(caPem);
  return build(
    `rpcstack-e2e-runtime/node:${NODE_RUNTIME_RELEASE}-ca-${createHash("sha256").update(runtime).update(ca).digest("hex").slice(0, 12)}`,
    `FROM ${runtime}\nCOPY ca.pem /etc/rpcstack-test-ca.pem\nENV NODE_EXTRA_CA_CERTS=/etc/rpcstack-test-ca.pem\n`,
    { "ca.pem": caPem },
  );
}
