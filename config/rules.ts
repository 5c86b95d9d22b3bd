/**
 * Cross-field rules the JSON schema cannot express. They run on the raw config even when the
 * schema found problems, so each rule looks only at values of the type it expects.
 */
import { keyName, problem } from "./errors.js";
import { badgeProblems } from "./badgeRules.js";
import { gatewayProblems, projectKeyProblems } from "./gatewayRules.js";
import { kubernetesProblems } from "./kubernetesRules.js";
import { isObj, isStr } from "./guards.js";
import { NETWORKS, type L2ClientName, type NetworkDefaults } from "./networks/index.js";
import { SECRET_KEYS } from "./schema.js";
import { TIERS, instanceTypeShortfall } from "./tiers.js";
import type { RawConfig } from "./types.js";
import { DEFAULT_RPC_VERSION, clientRelease, junoPollFlag, rpcVersionRefusal, type ClientName } from "./releases.js";
import { parseVersion, unpinnedReason, type Version } from "./versions.js";
import { anyHostOfKind } from "./placement.js";
import { snapshotRefusal } from "./snapshots.js";

const OPEN_CIDRS = new Set(["0.0.0.0/0", "::/0"]);

/** Why `l2.pendingPollInterval` does not apply to an L2 client other than Juno. */
const POLL_NOT_APPLICABLE: Readonly<Record<string, string>> = {
  pathfinder: "applies to Juno only (rpcstack:l2.client is pathfinder, which polls pending blocks itself)",
  "starknet-devnet": "applies to Juno only: Starknet Devnet makes its own blocks (every 2 s on network devnet) and polls nothing; remove the key",
};

/**
 * `secretsAvailable: false` is for tools that never see secrets (the compose exporter): an
 * unset secret is then not a problem.
 */
export function crossFieldProblems(raw: RawConfig, isSecret: (key: string) => boolean | undefined, secretsAvailable = true): string[] {
  const out: string[] = [];
  const network = isStr(raw.network) ? NETWORKS[raw.network] : undefined;
  const host = isObj(raw.host) ? raw.host : undefined;
  const hostKind = host?.kind;

  // Secrets must arrive encrypted; a clear-text value would sit in the stack file.
  for (const key of SECRET_KEYS) {
    if (raw[key] !== undefined && isSecret(key) === false) {
      out.push(problem([key], `must be set as a secret: pulumi config set --secret ${key} ...`));
    }
  }

  if (secretsAvailable && raw.projectKeys === undefined) {
    out.push(problem(["projectKeys"], "is required: pulumi config set --secret projectKeys '[{\"name\":\"...\",\"key\":\"...\"}]'"));
  }

  // Images must be pinned; the Juno pin also decides the pending-poll flag.
  const images: [string[], unknown][] = [
    [["l1", "executionImage"], raw.l1?.executionImage],
    [["l1", "consensusImage"], raw.l1?.consensusImage],
    [["l2", "image"], raw.l2?.image],
    [["indexer", "image"], raw.indexer?.image],
    [["gateway", "image"], isObj(raw.gateway) ? raw.gateway.image : undefined],
    [["gateway", "certbotImage"], isObj(raw.gateway) ? raw.gateway.certbotImage : undefined],
    [["readiness", "image"], isObj(raw.readiness) ? raw.readiness.image : undefined],
    [["host", "counterStoreImage"], isObj(raw.host) ? (raw.host as Record<string, unknown>).counterStoreImage : undefined],
  ];
  for (const [path, ref] of images) {
    const why = isStr(ref) ? unpinnedReason(ref) : undefined;
    if (why) out.push(problem(path, `"${ref}" ${why}`));
  }
  const l2Client = l2ClientOf(raw, network);
  out.push(...networkFitProblems(raw, network, l2Client));
  for (const c of clientImages(raw, network)) {
    if (!c.image || unpinnedReason(c.image)) continue;
    const release = clientRelease(c.client, c.image, c.version, keyName(c.versionKey));
    if ("error" in release) {
      out.push(problem(c.imageKey, release.error));
    } else {
      const poll = c.client === "juno" ? junoPollFlag(release.version) : undefined;
      if (poll && "error" in poll) out.push(problem(["l2", "pendingPollInterval"], `cannot be honoured: ${poll.error}`));
      const spec = c.client === l2Client ? rpcVersionProblem(raw, l2Client, release.version) : undefined;
      if (spec) out.push(problem(["l2", "rpcVersion"], spec));
    }
  }
  // Only for the client the stack names (or its network's default), not for a name the schema refuses.
  const named = raw.l2?.client === undefined || raw.l2.client === l2Client;
  const notJuno = named && Object.hasOwn(POLL_NOT_APPLICABLE, l2Client) ? POLL_NOT_APPLICABLE[l2Client] : undefined;
  if (notJuno && raw.l2?.pendingPollInterval !== undefined) out.push(problem(["l2", "pendingPollInterval"], notJuno));
  const snapshot = isObj(raw.l2?.snapshot) ? raw.l2.snapshot : undefined;
  if (snapshot && network && named) {
    const refused = snapshotRefusal(l2Client, network.name, isStr(snapshot.url) ? snapshot.url : "");
    if (refused) out.push(problem(refused.key, refused.why));
  }

  // Host kinds.
  if (secretsAvailable && anyHostOfKind(raw, "ssh") && raw.sshPrivateKey === undefined) {
    const where = hostKind === "ssh" ? "rpcstack:host.kind is ssh" : "a host of rpcstack:hosts is of kind ssh";
    out.push(problem(["sshPrivateKey"], `is required when ${where}: pulumi config set --secret sshPrivateKey < key`));
  }
  if (!anyHostOfKind(raw, "ssh") && raw.sshPrivateKey !== undefined) {
    out.push(problem(["sshPrivateKey"], `is only used when rpcstack:host.kind is ssh (it is ${String(hostKind)})`));
  }
  if (hostKind === "aws" && host) {
    if (isStr(host.instanceType) && isStr(raw.tier) && raw.tier in TIERS) {
      const short = instanceTypeShortfall(host.instanceType, TIERS[raw.tier]);
      if (short) out.push(problem(["host", "instanceType"], `${short} (rpcstack:tier is ${raw.tier})`));
    }
    if (!Array.isArray(host.allowSshFrom) || host.allowSshFrom.length === 0) {
      out.push(problem(["host", "allowSshFrom"], "must list at least one CIDR: pulumi up reaches the instance's Docker daemon over SSH from there"));
    } else {
      host.allowSshFrom.forEach((c, i) => {
        if (isStr(c) && OPEN_CIDRS.has(c)) {
          out.push(problem(["host", "allowSshFrom", i], `${c} opens SSH to the whole internet; list the operator's own addresses`));
        }
      });
    }
  }

  out.push(...gatewayProblems(raw, network, hostKind), ...projectKeyProblems(raw), ...badgeProblems(raw, network), ...kubernetesProblems(raw, secretsAvailable));
  return out;
}

/**
 * What a network decides for itself: devnet is a local trial chain (its own L2 client, no
 * consensus client, no tier, this machine only); public networks need a tier and a real node.
 */
function networkFitProblems(raw: RawConfig, network: NetworkDefaults | undefined, l2Client: L2ClientName): string[] {
  const out: string[] = [];
  if (raw.tier === undefined && !network?.dev) out.push(problem(["tier"], "is required"));
  if (!network) return out;
  const name = network.name;
  if (!network.l2.clients.includes(l2Client)) {
    out.push(
      problem(
        ["l2", "client"],
        network.dev
          ? `${l2Client} does not run on network ${name}, whose L2 is Starknet Devnet (starknet-devnet); remove the key, or set rpcstack:network to testnet for ${l2Client} on Starknet Sepolia`
          : `starknet-devnet runs only on network devnet (a trial chain on this machine); on ${name} use ${network.l2.clients.join(" or ")}`,
      ),
    );
  }
  if (!network.dev) return out;
  const l1: Record<string, unknown> = isObj(raw.l1) ? raw.l1 : {};
  for (const key of ["consensusImage", "consensusVersion", "checkpointSyncUrl"]) {
    if (l1[key] !== undefined) {
      out.push(problem(["l1", key], `does not apply to network ${name}: geth --dev seals its own blocks, without a consensus client`));
    }
  }
  if (raw.tier !== undefined) {
    const r = network.dev.requirements;
    out.push(problem(["tier"], `does not apply to network ${name}, which needs ${r.cores} cores, ${r.memoryGiB} GB of memory and ${r.diskGB} GB free; remove the key (or set rpcstack:network to testnet for Sepolia on a tier)`));
  }
  const hostKind = isObj(raw.host) ? raw.host.kind : undefined;
  if (hostKind === "aws") {
    out.push(
      problem(["host", "kind"], `must be local or ssh on network ${name}: it is a private trial chain (on this machine, or rehearsed on a server you already have), not worth an EC2 instance`),
    );
  }
  if (isObj(raw.readiness) && raw.readiness.l1ReferenceUrl !== undefined) {
    out.push(problem(["readiness", "l1ReferenceUrl"], `does not apply to network ${name}: no public node follows its chain`));
  }
  return out;
}

export interface ClientImage {
  readonly client: ClientName;
  /** The image the stack runs: the operator's or the network default. */
  readonly image?: string;
  /** The explicit release key's value, when it is a well-formed release (the schema reports others). */
  readonly version?: string;
  readonly imageKey: readonly string[];
  readonly versionKey: readonly string[];
}

const L2_CLIENTS: readonly L2ClientName[] = ["juno", "pathfinder", "starknet-devnet"];
/** The L2 client a raw config deploys: the one it names when it is one of ours (the schema refuses others), else its network's first. */
export const l2ClientOf = (raw: RawConfig, network: NetworkDefaults | undefined): L2ClientName =>
  L2_CLIENTS.find((c) => c === raw.l2?.client) ?? network?.l2.clients[0] ?? "juno";

/** Each deployed client with its image and release keys, as the raw config sets them. */
export function clientImages(raw: RawConfig, network: NetworkDefaults | undefined): ClientImage[] {
  const str = (v: unknown) => (isStr(v) ? v : undefined);
  const release = (v: unknown) => (isStr(v) && parseVersion(v) ? v : undefined);
  const l2Client = l2ClientOf(raw, network);
  const consensusImage = str(raw.l1?.consensusImage) ?? network?.l1.consensusImage;
  const all: ClientImage[] = [
    {
      client: "geth",
      image: str(raw.l1?.executionImage) ?? network?.l1.executionImage,
      version: release(raw.l1?.executionVersion),
      imageKey: ["l1", "executionImage"],
      versionKey: ["l1", "executionVersion"],
    },
    {
      client: "lighthouse",
      image: consensusImage,
      version: release(raw.l1?.consensusVersion),
      imageKey: ["l1", "consensusImage"],
      versionKey: ["l1", "consensusVersion"],
    },
    {
      client: l2Client,
      image: str(raw.l2?.image) ?? network?.l2.images[l2Client],
      version: release(raw.l2?.version),
      imageKey: ["l2", "image"],
      versionKey: ["l2", "version"],
    },
  ];
  // A network without a consensus client (devnet) deploys no Lighthouse; its rule reports a set key.
  return consensusImage === undefined ? all.filter((c) => c.client !== "lighthouse") : all;
}

/**
 * Why the stack's L2 nodes cannot all serve the pinned spec version (they share one image), naming
 * each node as its service is named; a malformed value is the schema's to report.
 */
function rpcVersionProblem(raw: RawConfig, client: L2ClientName, version: Version): string | undefined {
  const wanted = raw.l2?.rpcVersion ?? DEFAULT_RPC_VERSION;
  if (!isStr(wanted) || !/^v0_[0-9]+$/.test(wanted)) return undefined;
  const count = Array.isArray(raw.nodes?.l2) ? Math.max(1, raw.nodes.l2.length) : 1;
  const nodes = Array.from({ length: count }, (_, i) => `${client}${i === 0 ? "" : `-${i + 1}`}`);
  return rpcVersionRefusal(client, version, wanted, nodes);
}
