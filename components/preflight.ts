/**
 * The hosts' preflights, run before the program registers anything: the local machine, or an ssh
 * host through this machine's ssh client (the one the Docker provider connects with). Invokes, not
 * resources: they run on every preview and update and leave nothing in the state. A host that does
 * not fit stops `pulumi up` here, so no resource of a deployment that cannot work is ever created.
 */
import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import type { StackSettings, Tier } from "../config/index.js";
import { HostUnfit, PREFLIGHT_SCRIPT, assertHostFits, hostTier, sshPreflightCommand, sshProblem, type HostVerdict } from "../hosts/preflight.js";

const SH = ["/bin/sh", "-c"];

async function checkSsh(h: { readonly user: string; readonly address: string; readonly port: number }, tier: Tier, gateway?: StackSettings["gateway"]): Promise<HostVerdict> {
  const label = `${h.user}@${h.address}:${h.port}`;
  const r = await command.local.run({ command: sshPreflightCommand(h.user, h.address, h.port), interpreter: SH, stdin: PREFLIGHT_SCRIPT, logging: "none" });
  const problem = sshProblem(r.stdout);
  if (problem) {
    throw new HostUnfit(
      `rpcstack: cannot reach ${label} with this machine's ssh client (${problem}). The Docker provider connects through the same client: ` +
        "give it the key (ssh-add, or an IdentityFile in ~/.ssh/config) and run pulumi up again.",
    );
  }
  return assertHostFits(label, r.stdout, tier, { installsDocker: true, gateway });
}

/**
 * Checks every local and ssh host against its tier; returns the settings with the gateway's
 * maxConnections fitted to the main host's Docker daemon (saying the figure when it was not set).
 */
export async function preflightHosts(s: StackSettings): Promise<StackSettings> {
  const tier = hostTier(s.tier, s.host.diskGB);
  let main: HostVerdict | undefined;
  if (s.host.kind === "local") {
    const r = await command.local.run({ command: PREFLIGHT_SCRIPT, interpreter: SH, logging: "none" });
    main = assertHostFits("this machine", r.stdout, tier, { installsDocker: false, gateway: s.gateway });
  } else if (s.host.kind === "ssh") {
    main = await checkSsh(s.host, tier, s.gateway);
  }
  for (const h of Object.values(s.hosts)) if (h.kind === "ssh") await checkSsh(h, hostTier(h.tier, h.diskGB));
  if (main?.note) pulumi.log.info(`rpcstack: ${main.note}`);
  return main?.maxConnections === undefined ? s : { ...s, gateway: { ...s.gateway, maxConnections: main.maxConnections } };
}
