/**
 * The stack on an existing Kubernetes cluster (host kind kubernetes): the plan rendered by
 * kubernetes/ (StatefulSets with claims for the nodes and for the gateway's replicas behind its
 * Service, the sync check as a Job, the generated files as ConfigMaps, secrets as Secrets) and
 * applied with Pulumi's Kubernetes provider, so the cluster schedules, restarts and places volumes.
 * The only place that knows how a rendered object maps onto a @pulumi/kubernetes resource.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { KubernetesHostConfig, L1Endpoint, ProjectKey, StackSettings } from "../config/index.js";
import { FILES_DIGEST, ref, renderCluster, GATEWAY_SERVICE, type K8sObject } from "../kubernetes/index.js";
import { endpointsOf, planStack, type ChainEndpoints } from "../plan/index.js";
import { providerManifest, type ProviderManifest } from "../manifest/provider.js";
import { bundleSource } from "./bundle.js";
import { PACKAGE_ROOT } from "./packageRoot.js";
import { badgeSigningKey, gatewayGenerated, secretEnvironment } from "./stackSecrets.js";

export interface KubernetesStackArgs {
  /** The validated, non-secret stack settings (config/), with host kind kubernetes. */
  readonly settings: StackSettings;
  /** Project keys, as a Pulumi secret: hashed into the gateway's key map Secret. */
  readonly projectKeys: pulumi.Input<readonly ProjectKey[]>;
  /** The cluster's kubeconfig (rpcstack:kubeconfig), as a Pulumi secret; without it, `host.context` of the operator's own. */
  readonly kubeconfig?: pulumi.Input<string>;
  /** An external L1's URLs (`l1.external`), as a Pulumi secret; required with it, refused otherwise. */
  readonly l1Endpoint?: pulumi.Input<L1Endpoint>;
}

type Resource = pulumi.CustomResource;
type Make = (name: string, args: any, opts: pulumi.CustomResourceOptions) => Resource;
const MAKE: Readonly<Record<string, Make>> = {
  Namespace: (n, a, o) => new k8s.core.v1.Namespace(n, a, o),
  ConfigMap: (n, a, o) => new k8s.core.v1.ConfigMap(n, a, o),
  Secret: (n, a, o) => new k8s.core.v1.Secret(n, a, o),
  Service: (n, a, o) => new k8s.core.v1.Service(n, a, o),
  StatefulSet: (n, a, o) => new k8s.apps.v1.StatefulSet(n, a, o),
  Deployment: (n, a, o) => new k8s.apps.v1.Deployment(n, a, o),
  Job: (n, a, o) => new k8s.batch.v1.Job(n, a, o),
  PodDisruptionBudget: (n, a, o) => new k8s.policy.v1.PodDisruptionBudget(n, a, o),
  Ingress: (n, a, o) => new k8s.networking.v1.Ingress(n, a, o),
  NetworkPolicy: (n, a, o) => new k8s.networking.v1.NetworkPolicy(n, a, o),
};

export class KubernetesStack extends pulumi.ComponentResource {
  readonly network: pulumi.Output<string>;
  readonly tier: pulumi.Output<string>;
  readonly namespace: pulumi.Output<string>;
  /** The Service the gateway is reached by (LoadBalancer, NodePort, or ClusterIP behind the Ingress). */
  readonly gatewayService: pulumi.Output<string>;
  readonly endpoints: pulumi.Output<Record<string, ChainEndpoints>>;
  readonly providerManifest: pulumi.Output<ProviderManifest>;
  /** Every object applied, by kind/name. */
  readonly objects: ReadonlyMap<string, Resource>;

  constructor(name: string, args: KubernetesStackArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:KubernetesStack", name, {}, opts);
    const s = args.settings;
    if (s.host.kind !== "kubernetes") throw new pulumi.ResourceError(`KubernetesStack: settings.host.kind must be kubernetes, not ${s.host.kind}`, this);
    const host: KubernetesHostConfig = s.host;
    if ((args.kubeconfig === undefined) === (host.context === undefined)) {
      throw new pulumi.ResourceError("KubernetesStack: give exactly one of kubeconfig (rpcstack:kubeconfig) and settings.host.context", this);
    }
    if (s.l1.external !== (args.l1Endpoint !== undefined)) {
      throw new pulumi.ResourceError("KubernetesStack: settings.l1.external and l1Endpoint (rpcstack:l1.external) go together", this);
    }
    const plan = planStack(s);
    const badgeKey = badgeSigningKey(name, s, this);
    const secrets = secretEnvironment(args.l1Endpoint, badgeKey).values;
    const rendered = renderCluster<pulumi.Input<string>>({
      plan,
      settings: s,
      host,
      generated: gatewayGenerated(s, plan.gatewayConfig.compiled, args.projectKeys, args.l1Endpoint, badgeKey?.publicKeyPem),
      content: (f) => (f.from === "bundle" ? bundleSource(f.source) : readFileSync(join(PACKAGE_ROOT, f.source), "utf8")),
      secretValue: (n) => {
        const v = secrets[n];
        if (v === undefined) throw new pulumi.ResourceError(`KubernetesStack: a service needs the secret ${n}, which this stack does not have`, this);
        return v;
      },
    });

    if (host.expose.kind === "Ingress") {
      pulumi.log.warn(
        "rpcstack: behind an Ingress that passes TLS through, the gateway sees the ingress controller's address for every caller: its per-address limits (gateway.maxConnectionsPerAddress, wrongKeysPerMinute) count all callers together. A LoadBalancer or NodePort keeps each caller's address.",
        this,
      );
    }
    const provider = new k8s.Provider(
      `${name}-provider`,
      {
        ...(args.kubeconfig !== undefined ? { kubeconfig: pulumi.secret(args.kubeconfig) } : { context: host.context }),
        // Every object names its namespace itself; none lands in the kubeconfig's by accident.
        namespace: host.namespace,
        // A changed file is updated in place (its name is fixed), and the digest on the pod template
        // rolls the pods; replacing it would leave a moment with no object for a starting pod.
        enableConfigMapMutable: true,
        enableSecretMutable: true,
      },
      { parent: this },
    );
    const byRef = new Map<string, Resource>();
    const objectsByRef = new Map(rendered.map((r) => [ref(r.object), r.object]));
    for (const r of rendered) {
      const dependsOn = r.after.map((a) => byRef.get(a)!).filter(Boolean);
      const object = r.mounts?.length ? withDigest(r.object, r.mounts.map((m) => objectsByRef.get(m)!)) : r.object;
      const make = MAKE[object.kind];
      if (!make) throw new pulumi.ResourceError(`KubernetesStack: no resource for kind ${object.kind}`, this);
      // Waited for as long as readiness.timeoutMinutes allows: a node's pods, and the sync check.
      const waited = (object.kind === "StatefulSet" || object.kind === "Job") && host.awaitReady;
      byRef.set(
        ref(object),
        make(`${name}-${object.kind.toLowerCase()}-${object.metadata.name}`, object, {
          parent: this,
          provider,
          dependsOn,
          // The provider waits for a node's pods to be ready before the next of its layer is changed,
          // and for the sync check to end; the check's own timeout comes first, with its report.
          ...(waited ? { customTimeouts: timeouts(s.readiness.timeoutMinutes + (object.kind === "Job" ? 2 : 0)) } : {}),
          // A Job's pod template cannot change: a new one (another digest of the nodes) replaces it,
          // under the same name, so the old one goes first.
          ...(object.kind === "Job" ? { deleteBeforeReplace: true } : {}),
          // A change of the claims' templates would replace every node's StatefulSet at once, and the
          // new ones would mount the kept claims unchanged anyway: claims are grown on the cluster.
          ...(object.kind === "StatefulSet" ? { ignoreChanges: ["spec.volumeClaimTemplates"] } : {}),
          ...(r.secret ? { additionalSecretOutputs: ["stringData", "data"] } : {}),
        }),
      );
    }
    this.objects = byRef;
    this.namespace = pulumi.output(host.namespace);
    this.gatewayService = pulumi.output(GATEWAY_SERVICE);
    this.endpoints = pulumi.output(endpointsOf(plan.surface));
    this.providerManifest = pulumi.output(providerManifest(s, plan.surface));
    this.network = pulumi.output(s.network.name);
    this.tier = pulumi.output(s.tier.name);
    this.registerOutputs({ network: this.network, tier: this.tier, namespace: this.namespace, endpoints: this.endpoints });
  }
}

const timeouts = (minutes: number) => ({ create: `${minutes}m`, update: `${minutes}m` });

/**
 * The pod template with a digest of the files it mounts: a changed key map or config rolls the
 * pods (a mounted file alone would change under a running HAProxy that never reads it again).
 */
function withDigest(o: K8sObject, mounted: readonly K8sObject[]): K8sObject {
  const contents = mounted.map((m) => (m.data ?? m.stringData) as Record<string, pulumi.Input<string>>);
  // A digest over digests of the keys tells nothing of them: in clear, so a preview shows the roll.
  const digest = pulumi.unsecret(pulumi.all(contents.map((c) => pulumi.all(c))).apply((all) => createHash("sha256").update(JSON.stringify(all)).digest("hex")));
  const spec = o.spec as { template: { metadata: { annotations?: Record<string, string> } } };
  return { ...o, spec: { ...spec, template: { ...spec.template, metadata: { ...spec.template.metadata, annotations: { ...spec.template.metadata.annotations, [FILES_DIGEST]: digest } } } } };
}
