/**
 * A stack's secrets, said once for the Docker components (RpcProvider, Gateway) and the Kubernetes
 * one (KubernetesStack): which config values are Pulumi secrets, the values the services take by
 * name (`secretEnvironment`), and the generated files that hold one. Both kinds of host so keep
 * the same values secret.
 */
import * as pulumi from "@pulumi/pulumi";
import type { L1Endpoint, ProjectKey, RpcStackConfig, StackSecrets, StackSettings } from "../config/index.js";
import { keyMap } from "../gateway/build.js";
import type { GatewayCompiled } from "../gateway/types.js";
import { configWithExternalL1, gatewayFiles, keyFiles, relaysExternalL1 } from "../plan/index.js";
import type { GeneratedFiles, SecretName } from "../services/index.js";
import { BadgeSigningKey } from "./badgeSigningKey.js";

/** Every secret config value (config/types.ts StackSecrets), a Pulumi secret; one the stack does not set stays undefined. */
export interface SecretInputs {
  readonly projectKeys: pulumi.Output<readonly ProjectKey[]>;
  readonly sshPrivateKey?: pulumi.Output<string>;
  readonly kubeconfig?: pulumi.Output<string>;
  readonly l1Endpoint?: pulumi.Output<L1Endpoint>;
}

/** The config as the program reads it, split: the settings in the clear, the secrets wrapped before any resource sees them. */
export function splitSecrets(config: RpcStackConfig): { settings: StackSettings; secrets: SecretInputs } {
  const { projectKeys, sshPrivateKey, kubeconfig, l1Endpoint, ...settings } = config;
  const secret = <T>(v: T | undefined) => (v === undefined ? undefined : pulumi.secret(v));
  // Every key of StackSecrets named: one added there and not here would stay among the settings, in the clear.
  const secrets: SecretInputs & Record<keyof StackSecrets, unknown> = {
    projectKeys: pulumi.secret(projectKeys),
    sshPrivateKey: secret(sshPrivateKey),
    kubeconfig: secret(kubeconfig),
    l1Endpoint: secret(l1Endpoint),
  };
  return { settings, secrets };
}

/** With badges, the key they are signed with, made on the first update (its private half a Pulumi secret). */
export const badgeSigningKey = (name: string, s: StackSettings, parent: pulumi.Resource): BadgeSigningKey | undefined =>
  s.badges ? new BadgeSigningKey(`${name}-badge-key`, { generation: s.badges.signingKeyGeneration }, { parent }) : undefined;

type SecretRecord = pulumi.Output<Readonly<Record<string, string>>>;

export interface SecretEnvironment {
  /** Each name the stack has a value for (services/types.ts SECRET_NAMES), the value a Pulumi secret. */
  readonly values: Readonly<Partial<Record<SecretName, pulumi.Output<string>>>>;
  /**
   * The same as one secret record per Docker component that takes them: the nodes and the
   * readiness step an external L1's URLs, the gateway the badge service's key. Apart, so that no
   * node waits on the badge key's resource.
   */
  readonly nodes?: SecretRecord;
  readonly gateway?: SecretRecord;
}

export function secretEnvironment(l1Endpoint: pulumi.Input<L1Endpoint> | undefined, badgeKey: BadgeSigningKey | undefined): SecretEnvironment {
  const l1 = l1Endpoint === undefined ? undefined : pulumi.output(l1Endpoint);
  const nodes = l1 ? { RPCSTACK_L1_HTTP_URL: pulumi.secret(l1.rpcHttp), RPCSTACK_L1_WS_URL: pulumi.secret(l1.rpcWs) } : undefined;
  const gateway = badgeKey ? { RPCSTACK_BADGE_SIGNING_KEY: badgeKey.privateKey } : undefined;
  const record = (values: Record<string, pulumi.Output<string>>): SecretRecord => pulumi.secret(pulumi.all(values));
  return { values: { ...nodes, ...gateway }, nodes: nodes && record(nodes), gateway: gateway && record(gateway) };
}

/**
 * The gateway's generated files (plan/): the key map is a secret, and so is haproxy.cfg when it
 * relays an external L1, whose URL is then in it. The rest stays in the clear, so a preview shows its changes.
 */
export function gatewayGenerated(
  s: StackSettings,
  compiled: GatewayCompiled,
  projectKeys: pulumi.Input<readonly ProjectKey[]>,
  l1Endpoint: pulumi.Input<L1Endpoint> | undefined,
  badgePublicKey: pulumi.Input<string> | undefined,
): GeneratedFiles<pulumi.Input<string>> {
  const keys = pulumi.secret(pulumi.output(projectKeys).apply(keyMap));
  const secretConfig = l1Endpoint && relaysExternalL1(s) ? pulumi.secret(pulumi.output(l1Endpoint).apply((e) => configWithExternalL1(s, e))) : undefined;
  return { gateway: gatewayFiles<pulumi.Input<string>>(compiled, secretConfig, badgePublicKey), keys: keyFiles<pulumi.Input<string>>(keys, s.gateway.quotas) };
}
