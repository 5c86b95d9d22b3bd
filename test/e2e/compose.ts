/** The compose export run by the end-to-end tests: export a stack file, bring its files up in order, trust its gateway. */
import { COMPOSE_FILES } from "../../export/compose.js";
import { ROOT } from "../harness.js";
import { inspect, must, run, waitHealthy } from "../../devtools/docker.js";

export type ComposeFile = (typeof COMPOSE_FILES)[number];

/** `rpcstack export` of a stack file into `out`, every name under `prefix`. */
export const exportStack = (stackFile: string, out: string, prefix: string, extra: readonly string[]) =>
  must("npx", ["tsx", "export/cli.ts", "--stack-file", stackFile, "--out", out, "--name-prefix", prefix, ...extra], { cwd: ROOT });

/** The certificate a client must trust: the first one cert-init wrote into the gateway's volume. */
export const gatewayCa = (container: string) => /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(must("docker", ["exec", container, "cat", "/certs/gateway.pem"]))![0];

/** Resolves once the one-shot container `name` has exited 0; throws with its log when it failed or never ended. */
export async function exitedOk(name: string, boundMs = 60_000): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const state = inspect(name, "{{.State.Status}} {{.State.ExitCode}}").trim();
    if (state === "exited 0") return;
    if (state.startsWith("exited") || Date.now() - t0 > boundMs) throw new Error(`${name} is ${state}: ${run("docker", ["logs", name]).stderr}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The compose files in the README's order, each once the containers the next one needs are healthy. */
export async function upInOrder(dc: (file: ComposeFile, ...args: string[]) => string, healthyAfter: Record<ComposeFile, string[]>): Promise<void> {
  for (const f of COMPOSE_FILES) {
    dc(f, "up", "-d");
    await waitHealthy(healthyAfter[f], 240_000);
  }
  // The gateway starts with an empty key map on a new volume: the keys are live once the key sync has run.
  const gateway = healthyAfter["dc-gateway.yaml"].find((n) => n.endsWith("rpcstack-gateway"))!;
  await exitedOk(gateway.replace(/gateway$/, "key-sync"));
}
