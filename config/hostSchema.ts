/** The JSON schema of rpcstack:host and rpcstack:hosts, the servers the stack runs on, a part of config/schema.ts. */
import { TIER_NAMES } from "./tiers.js";
import { address, cidr, image, port } from "./schemaFormats.js";
import { COUNTER_STORE_IMAGE } from "./networks/images.js";

/** Where the gateway's host reaches this host's node ports (a VPC, VPN or LAN address): never a public one. */
const privateAddress = { ...address, "x-hint": "must be the host's address on the private network between the stack's hosts" } as const;
/** The chain-data disk, instead of the tier's figure (aws: the data volume's size). */
const diskGB = { type: "integer", minimum: 10, maximum: 65536 } as const;

const awsHost = {
  type: "object",
  properties: {
    kind: { const: "aws" },
    region: { type: "string", pattern: "^[a-z]{2}(-[a-z]+)+-[0-9]$", "x-hint": 'must be an AWS region like "eu-west-1"' },
    instanceType: { type: "string", pattern: "^[a-z][a-z0-9-]*\\.[a-z0-9]+$", "x-hint": 'must be an EC2 instance type like "m7i.xlarge"' },
    sshPublicKey: {
      type: "string",
      pattern: "^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/]+={0,3}( [^\\n]*)?$",
      "x-hint": 'must be an OpenSSH public key line ("ssh-ed25519 AAAA... comment")',
    },
    allowSshFrom: { type: "array", items: cidr, uniqueItems: true },
    diskGB,
    // gp3: 3000-16000 IOPS.
    diskIops: { type: "integer", minimum: 3000, maximum: 16000 },
    privateAddress,
  },
  required: ["kind", "region", "sshPublicKey"],
  additionalProperties: false,
} as const;
export const sshHost = {
  type: "object",
  properties: {
    kind: { const: "ssh" },
    address,
    user: { type: "string", pattern: "^[a-z_][a-z0-9_-]{0,31}$", "x-hint": "must be a Unix user name" },
    port: { ...port, default: 22 },
    diskGB,
    privateAddress,
  },
  required: ["kind", "address", "user"],
  additionalProperties: false,
} as const;
const localHost = {
  type: "object",
  properties: { kind: { const: "local" }, diskGB, privateAddress },
  required: ["kind"],
  additionalProperties: false,
} as const;

/** A Kubernetes name: an RFC 1123 label (a namespace). */
const k8sName = { type: "string", pattern: "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", "x-hint": "must be a Kubernetes name: lowercase letters, digits and '-', at most 63" } as const;
/** An RFC 1123 subdomain (storage classes, ingress classes, Secrets): labels joined by '.', at most 253. */
const k8sSubdomain = {
  type: "string",
  maxLength: 253,
  pattern: "^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$",
  "x-hint": "must be a Kubernetes name: lowercase letters, digits, '-' and '.', at most 253",
} as const;

/** A label's value: at most 63 characters, alphanumeric at both ends, '-', '_' and '.' inside. */
const labelValue = { type: "string", maxLength: 63, pattern: "^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$", "x-hint": "must be a label value: at most 63 letters, digits, '-', '_' or '.', a letter or digit at each end" } as const;
/** A label's key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters. */
const labelKey = { pattern: "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$", maxLength: 317, "x-hint": "each key must be a label key: an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' or '.'" } as const;

/**
 * An existing cluster (its kubeconfig in rpcstack:kubeconfig, a secret, or a context of the
 * operator's own kubeconfig): the plan becomes StatefulSets (the nodes, the gateway's replicas),
 * Deployments, a Job and Services.
 */
const kubernetesHost = {
  type: "object",
  properties: {
    kind: { const: "kubernetes" },
    context: { type: "string", minLength: 1, maxLength: 253 },
    namespace: { ...k8sName, default: "rpcstack" },
    createNamespace: { type: "boolean", default: false },
    storageClass: k8sSubdomain,
    expose: {
      type: "object",
      properties: {
        kind: { enum: ["LoadBalancer", "NodePort", "Ingress"], default: "LoadBalancer" },
        // The cluster's default NodePort range.
        nodePort: { type: "integer", minimum: 30000, maximum: 32767 },
        ingressClass: k8sSubdomain,
      },
      additionalProperties: false,
    },
    gatewayReplicas: { type: "integer", minimum: 2, maximum: 64, default: 2 },
    // The store the replicas count quotas in together (usage/counterStore.ts): Valkey's official image.
    counterStoreImage: { ...image, default: COUNTER_STORE_IMAGE },
    tlsSecret: k8sSubdomain,
    awaitReady: { type: "boolean", default: true },
    // The cluster's Prometheus, let in to the metrics ports (only the stack's own pods are otherwise).
    metricsFrom: {
      type: "object",
      properties: {
        namespace: k8sName,
        podLabels: { type: "object", propertyNames: labelKey, additionalProperties: labelValue, minProperties: 1 },
      },
      required: ["namespace"],
      additionalProperties: false,
    },
  },
  required: ["kind"],
  additionalProperties: false,
} as const;

/**
 * A further host the stack places nodes on (`hosts.<name>`): an existing server or an EC2
 * instance, sized by its own tier, reached by the gateway's host on `privateAddress`.
 */
const extraHost = (h: typeof awsHost | typeof sshHost) =>
  ({
    ...h,
    properties: { ...h.properties, tier: { enum: TIER_NAMES } },
    required: [...h.required, "privateAddress"],
  }) as const;

export const hostSchema = {
  type: "object",
  required: ["kind"],
  discriminator: { propertyName: "kind" },
  oneOf: [awsHost, sshHost, localHost, kubernetesHost],
} as const;
export const hostsSchema = {
  type: "object",
  "x-key": "name",
  propertyNames: { pattern: "^[a-z][a-z0-9-]{0,30}$" },
  additionalProperties: {
    type: "object",
    required: ["kind"],
    discriminator: { propertyName: "kind" },
    oneOf: [extraHost(awsHost), extraHost(sshHost)],
  },
} as const;
