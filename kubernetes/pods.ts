/**
 * A service spec (services/) as a container of a pod: the only place that knows how a ServiceSpec
 * field maps onto Kubernetes. Pure.
 */
import type { HealthCheckSpec, PortSpec, ServiceSpec } from "../services/index.js";

export interface Resources {
  readonly requests: Readonly<Record<string, string>>;
  readonly limits?: Readonly<Record<string, string>>;
}

/** A file a container mounts, by its key in the workload's ConfigMap or Secret. */
export interface FileMount {
  readonly path: string;
  readonly key: string;
  readonly secret: boolean;
}

/** Volume names a container mounts: a claim, an emptyDir, or the workload's files. */
export const FILES_VOLUME = "files";
export const SECRET_FILES_VOLUME = "secret-files";

/** A Kubernetes port name: at most 15 characters, lowercase letters, digits and '-'. */
export const portName = (p: Pick<PortSpec, "purpose" | "container" | "protocol">) => `${p.purpose}-${p.container}${p.protocol === "udp" ? "u" : ""}`.slice(0, 15);

/** Each port once: a spec lists a port again where Docker publishes it twice (p2p on several addresses). */
export function uniquePorts<P extends Pick<PortSpec, "container" | "protocol">>(ports: readonly P[]): P[] {
  const seen = new Set<string>();
  return ports.filter((p) => !seen.has(`${p.container}/${p.protocol}`) && seen.add(`${p.container}/${p.protocol}`));
}

/** A ConfigMap or Secret key for a file's path in the container. */
export const fileKey = (path: string) => path.replace(/^\/+/, "").replace(/[^A-Za-z0-9._-]/g, "_");

/** A Docker health check as an exec probe: CMD-SHELL runs in /bin/sh, CMD as given. */
export function probe(h: HealthCheckSpec): Record<string, unknown> {
  const [kind, ...rest] = h.test;
  const command = kind === "CMD-SHELL" ? ["/bin/sh", "-c", rest.join(" ")] : rest;
  return { exec: { command }, periodSeconds: h.intervalSeconds, timeoutSeconds: h.timeoutSeconds, failureThreshold: h.retries };
}

/** `1000:1000`, `root` or a number: the user (and group) the container runs as. */
export function securityContext(user: string | undefined): Record<string, unknown> | undefined {
  if (user === undefined) return undefined;
  if (user === "root") return { runAsUser: 0 };
  const [u, g] = user.split(":").map(Number);
  if (!Number.isInteger(u)) throw new Error(`kubernetes: user "${user}" is not a user id`);
  return { runAsUser: u, ...(Number.isInteger(g) ? { runAsGroup: g } : {}) };
}

/**
 * The container of one service. `volumes` maps the spec's volume keys to the pod's volume names
 * (a key absent: the mount is dropped, its content comes as files instead); `secretName` holds
 * the values of its secretEnvironment; p2p ports are bound on the cluster node (hostPort), as
 * Docker publishes them on the host.
 */
export function container(svc: ServiceSpec, o: { volumes: ReadonlyMap<string, string>; files: readonly FileMount[]; resources: Resources; secretName: string }): Record<string, unknown> {
  const ports = uniquePorts(svc.ports).map((p) => ({
    name: portName(p),
    containerPort: p.container,
    protocol: p.protocol.toUpperCase(),
    ...(p.purpose === "p2p" && p.publish ? { hostPort: p.publish.port } : {}),
  }));
  const env = [
    ...Object.entries(svc.environment).map(([name, value]) => ({ name, value })),
    ...Object.entries(svc.secretEnvironment ?? {}).map(([name, key]) => ({ name, valueFrom: { secretKeyRef: { name: o.secretName, key } } })),
  ];
  const volumeMounts = [
    ...svc.volumes.filter((m) => o.volumes.has(m.volume)).map((m) => ({ name: o.volumes.get(m.volume)!, mountPath: m.path, ...(m.readOnly ? { readOnly: true } : {}) })),
    ...o.files.map((f) => ({ name: f.secret ? SECRET_FILES_VOLUME : FILES_VOLUME, mountPath: f.path, subPath: f.key, readOnly: true })),
  ];
  const sc = securityContext(svc.user);
  return {
    name: svc.name,
    image: svc.image,
    ...(svc.entrypoint ? { command: [...svc.entrypoint] } : {}),
    args: [...svc.command],
    ...(env.length ? { env } : {}),
    ...(ports.length ? { ports } : {}),
    ...(volumeMounts.length ? { volumeMounts } : {}),
    ...(svc.healthcheck && svc.restart !== "no" ? { readinessProbe: probe(svc.healthcheck) } : {}),
    ...(svc.preStop ? { lifecycle: { preStop: { exec: { command: [...svc.preStop] } } } } : {}),
    resources: o.resources,
    ...(sc ? { securityContext: sc } : {}),
  };
}
