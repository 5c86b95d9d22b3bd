/**
 * The service specs as docker compose files, for operators who do not run Pulumi:
 * dc-l1.yaml (L1 node), dc-l2.yaml (L2 node and indexer) and dc-gateway.yaml (the readiness
 * service the gateway checks, the first certificate, HAProxy and, with a domain, the ACME
 * client), started in that order. Pure: the CLI writes the files.
 */
import { stringify } from "yaml";
import { spansHosts, type ProjectKey, type StackSettings } from "../config/index.js";
import { keyMap } from "../gateway/build.js";
import { gatewayFiles, keyFiles, planStack, relaysExternalL1, type StackPlan } from "../plan/index.js";
import {
  DOCKER_NETWORK,
  LOG_OPTIONS,
  groupOf,
  placeFiles,
  type GeneratedFiles,
  type PlacedFile,
  type ServiceGroup,
  type ServiceSpec,
} from "../services/index.js";

/** A file the compose files bind-mount, to be written beside them. */
export interface ExportedFile {
  /** Path relative to the output folder (what the compose file mounts as `./<path>`). */
  readonly path: string;
  /** Where the content comes from: a package file copied as is, TypeScript bundled, or text. */
  readonly from: { readonly copy: string } | { readonly bundle: string } | { readonly text: string };
  /** Octal mode: 0o600 for the key map, readable by the containers' users otherwise. */
  readonly mode: number;
}

export interface ComposeExport {
  /** Compose file name -> YAML text, in the order they are started. */
  readonly files: Readonly<Record<string, string>>;
  /** What the compose files mount, to write beside them. */
  readonly mounted: readonly ExportedFile[];
  /** Compose files not written, with the reason (the gateway without project keys). */
  readonly skipped: Readonly<Record<string, string>>;
}

export interface ExportOptions {
  /**
   * Project keys for the gateway's key map (written with mode 0600, never into YAML). Without
   * them the gateway file is not written.
   */
  readonly projectKeys?: readonly ProjectKey[];
  /**
   * With `badges`: the public key (PEM) of the signing key the badge service gets from
   * RPCSTACK_BADGE_SIGNING_KEY when compose runs. Without it the gateway file is not written.
   */
  readonly badgePublicKey?: string;
  /**
   * Put before every container, network and volume name, so a second copy (a test) does not
   * meet a real deployment on the same engine.
   */
  readonly namePrefix?: string;
  /**
   * Published ports moved elsewhere, keyed `<service>:<container port>/<protocol>`: the host
   * port, and the host address when given (otherwise the spec's address is kept).
   */
  readonly publish?: Readonly<Record<string, { readonly address?: string; readonly port: number }>>;
}

const seconds = (n: number) => `${n}s`;

/** Compose interpolates `$VAR`; the specs' shell snippets mean a literal `$`. */
export const escapeInterpolation = (s: string) => s.replace(/\$/g, "$$$$");
const esc = (xs: readonly string[]) => xs.map(escapeInterpolation);

/** Where a mounted file sits in the output folder. */
export function mountSource(f: PlacedFile<unknown>): string {
  switch (f.from) {
    case "generated":
      return `${f.set}/${f.name}`;
    case "bundle":
      return f.path.replace(/^\/+/, "");
    case "package":
      return f.source;
  }
}

export const portKey = (service: string, container: number, protocol: string) => `${service}:${container}/${protocol}`;

export function composeService(svc: ServiceSpec, opts: ExportOptions = {}, generated: GeneratedFiles<string> = {}): Record<string, unknown> {
  const prefix = opts.namePrefix ?? "";
  const published = svc.ports.filter((p) => p.publish);
  const internal = svc.ports.filter((p) => !p.publish);
  const out: Record<string, unknown> = {
    image: svc.image,
    container_name: prefix + svc.containerName,
  };
  if (svc.entrypoint) out.entrypoint = esc(svc.entrypoint);
  out.command = esc(svc.command);
  // Secret values come from the operator's environment when compose runs, never from the file.
  const secretVars = Object.entries(svc.secretEnvironment ?? {}).map(([k, name]) => [k, `\${${name}:?set ${name}}`]);
  if (Object.keys(svc.environment).length || secretVars.length) {
    out.environment = Object.fromEntries([...Object.entries(svc.environment).map(([k, v]) => [k, escapeInterpolation(v)]), ...secretVars]);
  }
  if (published.length) {
    out.ports = published.map((p) => {
      const moved = opts.publish?.[portKey(svc.name, p.container, p.protocol)];
      return `${moved?.address ?? p.publish!.address}:${moved?.port ?? p.publish!.port}:${p.container}/${p.protocol}`;
    });
  }
  if (internal.length) out.expose = internal.map((p) => `${p.container}/${p.protocol}`);
  const volumes = [
    ...svc.volumes.map((m) => `${m.volume}:${m.path}${m.readOnly ? ":ro" : ""}`),
    ...placeFiles(svc, generated).map((f) => `./${mountSource(f)}:${f.path}:ro`),
  ];
  if (volumes.length) out.volumes = volumes;
  if (svc.healthcheck) {
    const h = svc.healthcheck;
    out.healthcheck = {
      test: esc(h.test),
      interval: seconds(h.intervalSeconds),
      timeout: seconds(h.timeoutSeconds),
      retries: h.retries,
      start_period: seconds(h.startPeriodSeconds),
    };
  }
  out.restart = svc.restart;
  if (svc.ulimits?.length) out.ulimits = Object.fromEntries(svc.ulimits.map((u) => [u.name, { soft: u.soft, hard: u.hard }]));
  if (svc.user) out.user = svc.user;
  out.stop_grace_period = seconds(svc.stopGraceSeconds);
  if (svc.dependsOn.length) {
    out.depends_on = Object.fromEntries(svc.dependsOn.map((d) => [d.service, { condition: d.condition }]));
  }
  // Compose makes the service name a DNS name on each network the service joins (the alias the
  // Pulumi containers set); the list form is also the one Debian's podman-compose 1.0.3 reads.
  if (svc.networkOf) out.network_mode = `service:${svc.networkOf}`;
  else out.networks = [DOCKER_NETWORK];
  out.logging = { driver: "json-file", options: { ...LOG_OPTIONS } };
  return out;
}

/** One compose document. The L1 file creates the network; the others join it. */
export function composeDocument(group: ServiceGroup, ownsNetwork: boolean, opts: ExportOptions = {}, generated: GeneratedFiles<string> = {}): Record<string, unknown> {
  const prefix = opts.namePrefix ?? "";
  const names = new Set(group.services.map((s) => s.name));
  const network = prefix + DOCKER_NETWORK;
  return {
    services: Object.fromEntries(
      group.services.map((s) => {
        // depends_on can only name services of the same file; the files are started in order.
        const local = { ...s, dependsOn: s.dependsOn.filter((d) => names.has(d.service)) };
        return [s.name, composeService(local, opts, generated)];
      }),
    ),
    networks: { [DOCKER_NETWORK]: ownsNetwork ? { name: network } : { name: network, external: true } },
    volumes: Object.fromEntries(
      group.volumes.map((v) => [v.key, v.external ? { name: prefix + v.name, external: true } : { name: prefix + v.name, labels: { "rpcstack.purpose": v.purpose } }]),
    ),
  };
}

export const COMPOSE_FILES = ["dc-l1.yaml", "dc-l2.yaml", "dc-gateway.yaml"] as const;
/** Prometheus (rpcstack:monitoring), started last; written only where monitoring is on. */
export const MONITORING_FILE = "dc-monitoring.yaml";
/** Where the dashboards are written, for Grafana's file provisioning or its import page. */
export const DASHBOARD_DIR = "grafana/dashboards/rpcstack";

/** One compose project per file, so `up` of one file never calls the others' containers orphans. */
export const projectName = (file: string, namePrefix = "") => `${namePrefix}rpcstack-${file.replace(/^dc-|\.yaml$/g, "")}`;

const HEADER = (file: string, settings: StackSettings, index: number, opts: ExportOptions) =>
  `# Generated by rpcstack from the same service specs \`pulumi up\` deploys (network ${settings.network.name}).\n` +
  `# Start: docker-compose -p ${projectName(file, opts.namePrefix)} -f ${file} up -d` +
  (index > 0 ? `   (after ${COMPOSE_FILES.slice(0, index).join(", then ")})` : "") +
  "\n";

/** The gateway file's services: the disk watcher and the live readiness service it checks, then the gateway's own. */
export function gatewayGroup(plan: StackPlan): ServiceGroup {
  const gw = groupOf(plan.gateway);
  const { diskWatch, health } = plan.readiness.services;
  // The disk watcher mounts the node files' volumes (started before this file) read-only.
  return { services: [...(diskWatch ? [diskWatch] : []), health, ...gw.services], volumes: [...gw.volumes, ...plan.readiness.volumes] };
}

function mountedFiles(services: readonly ServiceSpec[], generated: GeneratedFiles<string>): ExportedFile[] {
  const out = new Map<string, ExportedFile>();
  for (const f of services.flatMap((svc) => placeFiles(svc, generated))) {
    const path = mountSource(f);
    // The key map holds project keys: only its owner may read it.
    const mode = f.from === "generated" && f.secret ? 0o600 : f.executable ? 0o755 : 0o644;
    const from = f.from === "generated" ? { text: f.content } : f.from === "bundle" ? { bundle: f.source } : { copy: f.source };
    out.set(path, { path, from, mode });
  }
  return [...out.values()];
}

/** A layer's nodes as one compose file's services, in start order: node by node, each node's rollout step after it. */
function layerGroup(plan: StackPlan, layer: "l1" | "l2"): ServiceGroup {
  const roles = plan.nodes[layer].length ? plan.nodes[layer].map((n) => n.role) : [plan[layer]];
  const groups = roles.map((r) => groupOf(r));
  return { services: groups.flatMap((g) => g.services), volumes: groups.flatMap((g) => g.volumes) };
}

/** A badge signing key in the form RPCSTACK_BADGE_SIGNING_KEY takes (one line). */
export const BADGE_KEY_COMMAND = "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -outform DER | base64 -w0";

export function exportCompose(settings: StackSettings, opts: ExportOptions = {}): ComposeExport {
  // Compose runs one engine: nodes on further hosts, and the steps that order them, are Pulumi's.
  const further = Object.keys(settings.hosts);
  if (spansHosts(settings)) {
    throw new Error(`the stack places nodes on further hosts (rpcstack:hosts: ${further.join(", ")}), and docker compose runs one host: deploy it with pulumi up, or export a stack whose rpcstack:nodes name only main`);
  }
  const plan = planStack(settings);
  const groups: [string, ServiceGroup][] = [
    ["dc-l1.yaml", layerGroup(plan, "l1")],
    ["dc-l2.yaml", layerGroup(plan, "l2")],
  ];
  const skipped: Record<string, string> = {};
  let generated: GeneratedFiles<string> = {};
  if (relaysExternalL1(settings)) {
    skipped["dc-gateway.yaml"] = "the L1 route relays to rpcstack:l1.external, a secret the exporter never reads (deploy with pulumi up, or set gateway.relayExternalL1: false)";
  } else if (settings.badges && !opts.badgePublicKey) {
    skipped["dc-gateway.yaml"] = `rpcstack:badges is set and no badge signing key was given (--badge-key-file or RPCSTACK_BADGE_SIGNING_KEY): make one with ${BADGE_KEY_COMMAND} and keep it in RPCSTACK_BADGE_SIGNING_KEY, where docker compose reads it too`;
  } else if (opts.projectKeys?.length) {
    generated = { gateway: gatewayFiles(plan.gatewayConfig.compiled, undefined, opts.badgePublicKey), keys: keyFiles(keyMap(opts.projectKeys), settings.gateway.quotas) };
    groups.push(["dc-gateway.yaml", gatewayGroup(plan)]);
  } else {
    skipped["dc-gateway.yaml"] = "no project keys given (--keys-file or RPCSTACK_PROJECT_KEYS)";
  }
  if (plan.monitoring) {
    generated = { ...generated, monitoring: plan.monitoring.files, grafana: plan.monitoring.grafanaFiles };
    groups.push([MONITORING_FILE, groupOf(plan.monitoring.role)]);
  }
  const dashboards: ExportedFile[] = Object.entries(plan.monitoring?.dashboardFiles ?? {}).map(([name, text]) => ({ path: `${DASHBOARD_DIR}/${name}`, from: { text }, mode: 0o644 }));
  const files = Object.fromEntries(
    // YAML 1.1, as Debian's docker-compose 1.29 reads it: `no`, `on`, `yes` stay strings.
    groups.map(([file, group], i) => [file, HEADER(file, settings, i, opts) + stringify(composeDocument(group, i === 0, opts, generated), { lineWidth: 0, version: "1.1" })]),
  );
  const mounted = mountedFiles(groups.flatMap(([, g]) => g.services), generated);
  // With Grafana in the file the dashboards are among its mounts already.
  return { files, mounted: [...mounted, ...dashboards.filter((d) => !mounted.some((f) => f.path === d.path))], skipped };
}
