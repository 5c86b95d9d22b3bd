/**
 * Translates service specs into @pulumi/docker resources. The only place that knows how a
 * ServiceSpec field maps onto docker.Container; every component that runs containers calls it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { parseImageRef } from "../config/index.js";
import { PACKAGE_ROOT } from "./packageRoot.js";
import { bundleSource } from "./bundle.js";
import { LOG_OPTIONS, placeFiles, type GeneratedFiles, type PlacedFile, type RoleServices, type ServiceSpec, type VolumeSpec } from "../services/index.js";

/** Where a component's containers run: the host's Docker provider and the stack's private network. */
export interface DockerTarget {
  readonly provider: docker.Provider;
  /** The private Docker network the L1 node created. */
  readonly networkName: pulumi.Input<string>;
}

export interface DeployContext extends DockerTarget {
  readonly parent: pulumi.Resource;
  /** Prefix of the Pulumi resource names: `${prefix}-<service>`. */
  readonly prefix: string;
  /** Resources every container of this call waits for (another component's containers). */
  readonly dependsOn?: pulumi.Input<pulumi.Resource>[];
  /** The generated file sets the specs mount; a file marked secret is uploaded as a Pulumi secret. */
  readonly generated?: GeneratedFiles<pulumi.Input<string>>;
  /** Values of the specs' `secretEnvironment` names (an external L1's URLs), as a Pulumi secret. */
  readonly secrets?: pulumi.Output<Readonly<Record<string, string>>>;
  /**
   * What specs of this call may depend on beyond their own group, by service name: another
   * node's containers or rollout step (services/rollout.ts).
   */
  readonly known?: ReadonlyMap<string, pulumi.Input<pulumi.Resource>>;
}

/** Changes with every run of the program: what makes an every-update service differ each time. */
const RUN_ID = String(Date.now());

/** The containers of a role, under the names the role gives its services. */
export type RoleContainers<S extends RoleServices> = {
  readonly [K in keyof S]: undefined extends S[K] ? docker.Container | undefined : docker.Container;
};

export function createVolumes(ctx: DeployContext, volumes: readonly VolumeSpec[]): Map<string, docker.Volume> {
  return new Map(
    volumes.map((v) => [
      v.key,
      new docker.Volume(
        `${ctx.prefix}-${v.key}-data`,
        { name: v.name, labels: [{ label: "rpcstack.purpose", value: v.purpose }] },
        // A synced chain is days of work: unless told otherwise, destroy leaves the volume on the host.
        { parent: ctx.parent, provider: ctx.provider, retainOnDelete: v.retain },
      ),
    ]),
  );
}

/** Containers for a role's services, in order, keyed by role; dependsOn between them follows the specs. */
export function createContainers<S extends RoleServices>(
  ctx: DeployContext,
  services: S,
  volumes: ReadonlyMap<string, docker.Volume>,
  options: {
    waitHealthy?: readonly (keyof S)[];
    /** Per role: values whose change replaces the container (a one-shot runs again), as a label. */
    replaceWhen?: { readonly [K in keyof S]?: pulumi.Input<string>[] };
    /**
     * A resource a service's container waits for, made from the containers created before it (by
     * service name): a gate that fails stops the update before the container exists. A dependency
     * only, never an input, so the container does not change when the gate is made anew.
     */
    gates?: { readonly [K in keyof S]?: (before: ReadonlyMap<string, docker.Container>) => pulumi.Resource };
    /** One-shot services run again on every update (replaced, the old container removed first), as compose runs them on every `up`. */
    everyUpdate?: readonly (keyof S)[];
  } = {},
): RoleContainers<S> {
  const images = new Map<string, docker.RemoteImage>();
  const containers = new Map<string, docker.Container>();
  const byRole: Record<string, docker.Container> = {};
  const opts = { parent: ctx.parent, provider: ctx.provider };
  for (const [role, svc] of Object.entries(services)) {
    if (!svc) continue;
    let image = images.get(svc.image);
    if (!image) {
      const repo = parseImageRef(svc.image).repository.split("/").pop();
      // After what the containers wait for too: a new image replaces the containers that use it,
      // which must not happen before a rolling upgrade's previous step has passed.
      image = new docker.RemoteImage(`${ctx.prefix}-${repo}-image`, { name: svc.image, keepLocally: true }, { ...opts, dependsOn: ctx.dependsOn });
      images.set(svc.image, image);
    }
    const waitHealthy = options.waitHealthy?.includes(role) ?? false;
    const replaceWhen = options.replaceWhen?.[role as keyof S];
    const oneShot = svc.restart === "no";
    const everyUpdate = oneShot && (options.everyUpdate?.includes(role) ?? false);
    const container = new docker.Container(
      `${ctx.prefix}-${svc.name}`,
      {
        name: svc.containerName,
        image: image.imageId,
        entrypoints: svc.entrypoint ? [...svc.entrypoint] : undefined,
        command: [...svc.command],
        envs: everyUpdate ? pulumi.output(environment(ctx, svc)).apply((e) => [...e, `RPCSTACK_RUN=${RUN_ID}`]) : environment(ctx, svc),
        ports: svc.ports
          .filter((p) => p.publish)
          .map((p) => ({ internal: p.container, external: p.publish!.port, ip: p.publish!.address, protocol: p.protocol })),
        volumes: svc.volumes.map((m) => ({
          volumeName: volumeNamed(ctx, volumes, m.volume, svc.name).name,
          containerPath: m.path,
          readOnly: m.readOnly ?? false,
        })),
        // The provider's `executable` gives mode 0744, which a container running as another user
        // (the indexer, uid 1000) cannot execute: an explicit mode instead.
        uploads: placeFiles(svc, ctx.generated ?? {}).map((f) => ({ file: f.path, content: fileContent(f), permissions: f.executable ? "0755" : "0644" })),
        healthcheck: svc.healthcheck && {
          tests: [...svc.healthcheck.test],
          interval: `${svc.healthcheck.intervalSeconds}s`,
          timeout: `${svc.healthcheck.timeoutSeconds}s`,
          retries: svc.healthcheck.retries,
          startPeriod: `${svc.healthcheck.startPeriodSeconds}s`,
        },
        restart: svc.restart,
        user: svc.user,
        ulimits: svc.ulimits?.map((u) => ({ ...u })),
        stopTimeout: svc.stopGraceSeconds,
        destroyGraceSeconds: svc.stopGraceSeconds,
        ...(svc.networkOf
          ? // By id: Docker stores the mode as container:<id> and the provider reads that back, so a
            // name here made every preview propose replacing the container.
            { networkMode: pulumi.interpolate`container:${(containerNamed(ctx, containers, svc.networkOf, svc.name) as docker.Container).id}` }
          : { networksAdvanced: [{ name: ctx.networkName, aliases: [svc.name] }] }),
        // A container's labels are fixed at creation: a changed label replaces it.
        labels: replaceWhen ? [{ label: "rpcstack.replace-when", value: pulumi.all(replaceWhen).apply((v) => v.join(",")) }] : undefined,
        logDriver: "json-file",
        logOpts: { ...LOG_OPTIONS },
        removeVolumes: false,
        // One-shot init containers run to completion before their dependents start.
        attach: oneShot,
        logs: oneShot,
        mustRun: !oneShot,
        wait: waitHealthy,
        waitTimeout: waitHealthy ? healthyWithinSeconds(svc) : undefined,
      },
      {
        ...opts,
        dependsOn: [
          ...(ctx.dependsOn ?? []),
          ...svc.dependsOn.map((d) => containerNamed(ctx, containers, d.service, svc.name)),
          ...(options.gates?.[role] ? [options.gates[role]!(containers)] : []),
        ],
        // The container name is fixed: the old one must go before its replacement is created.
        ...(everyUpdate || svc.networkOf ? { deleteBeforeReplace: true } : {}),
      },
    );
    containers.set(svc.name, container);
    byRole[role] = container;
  }
  return byRole as RoleContainers<S>;
}

/** The container's variables; with secret ones the whole list is a Pulumi secret. */
function environment(ctx: DeployContext, svc: ServiceSpec): pulumi.Input<string[]> {
  const plain = Object.entries(svc.environment).map(([k, v]) => `${k}=${v}`);
  const wanted = Object.entries(svc.secretEnvironment ?? {});
  if (!wanted.length) return plain;
  if (!ctx.secrets) throw new Error(`service ${svc.name} needs secrets its component does not supply`);
  return pulumi.secret(
    ctx.secrets.apply((values) =>
      plain.concat(
        wanted.map(([k, name]) => {
          const v = values[name];
          if (v === undefined) throw new Error(`service ${svc.name}: no secret "${name}"`);
          return `${k}=${v}`;
        }),
      ),
    ),
  );
}

function fileContent(f: PlacedFile<pulumi.Input<string>>): pulumi.Input<string> {
  switch (f.from) {
    case "generated":
      return f.secret ? pulumi.secret(f.content) : f.content;
    case "bundle":
      return bundleSource(f.source);
    case "package":
      return readFileSync(join(PACKAGE_ROOT, f.source), "utf8");
  }
}

function volumeNamed(ctx: DeployContext, volumes: ReadonlyMap<string, docker.Volume>, key: string, service: string): docker.Volume {
  const v = volumes.get(key);
  if (!v) throw new pulumi.ResourceError(`service ${service} mounts volume "${key}", which its group does not define`, ctx.parent);
  return v;
}

function containerNamed(ctx: DeployContext, containers: ReadonlyMap<string, docker.Container>, name: string, service: string): pulumi.Input<pulumi.Resource> {
  const c = containers.get(name) ?? ctx.known?.get(name);
  if (!c) throw new pulumi.ResourceError(`service ${service} depends on "${name}", which is not created before it`, ctx.parent);
  return c;
}

/** How long Docker may take to call a container healthy: its start period and every retry, plus a margin. */
export function healthyWithinSeconds(svc: ServiceSpec): number {
  const h = svc.healthcheck;
  return h ? Math.max(600, h.startPeriodSeconds + h.retries * h.intervalSeconds + 60) : 600;
}
