/**
 * How many connections the gateway can hold on a host's Docker daemon. HAProxy needs two open files
 * per connection (services/gateway.ts asks the container for 2 x maxConnections + 1024, soft and
 * hard alike). runc sets a container's limit from the daemon's side, and raising a hard limit takes
 * CAP_SYS_RESOURCE: a root daemon that has it can give a container up to fs.nr_open, any other
 * (rootless, or a daemon in a container without the capability, as on this CI) no more than its own
 * hard limit ("error setting rlimit type 7" otherwise). The daemon's soft limit does not count: the
 * container gets the soft limit it asks for, and HAProxy raises its own soft limit up to the hard one.
 */
import { openFilesFor } from "../services/gateway.js";

/** Shell lines (part of the preflight) printing the daemon's limits as key=value; empty values when unknown. */
export const OPEN_FILES_SCRIPT = String.raw`docker_nofile=""
docker_nofile_raise=""
dockerd_pid=$(pidof dockerd 2>/dev/null | awk '{print $1}' || true)
if [ -n "$dockerd_pid" ] && [ -r "/proc/$dockerd_pid/limits" ]; then
  docker_nofile=$(awk '/^Max open files/ {print $5}' "/proc/$dockerd_pid/limits")
  # Root with CAP_SYS_RESOURCE (bit 24 of CapEff) may raise a container past its own hard limit.
  caps=$(awk '/^CapEff:/ {print $2}' "/proc/$dockerd_pid/status")
  uid=$(awk '/^Uid:/ {print $3}' "/proc/$dockerd_pid/status")
  docker_nofile_raise=0
  if [ "$uid" = 0 ] && [ -n "$caps" ] && [ $(( (0x$caps >> 24) & 1 )) -eq 1 ]; then docker_nofile_raise=1; fi
fi
echo "docker_nofile=$docker_nofile"
echo "docker_nofile_raise=$docker_nofile_raise"
echo "nr_open=$(cat /proc/sys/fs/nr_open 2>/dev/null || true)"
`;

export interface DaemonOpenFiles {
  /** The daemon's hard open-file limit; undefined when unknown or unlimited. */
  readonly dockerNofile?: number;
  /** Whether the daemon may raise a container's limit past its own (root with CAP_SYS_RESOURCE). */
  readonly dockerNofileRaise?: boolean;
  /** The kernel's ceiling for any process's open-file limit (fs.nr_open). */
  readonly nrOpen?: number;
}

/** The report's open-file lines as facts. */
export function parseOpenFiles(kv: ReadonlyMap<string, string>): DaemonOpenFiles {
  const int = (k: string) => (/^\d+$/.test(kv.get(k) ?? "") ? Number(kv.get(k)) : undefined);
  return { dockerNofile: int("docker_nofile"), dockerNofileRaise: kv.has("docker_nofile_raise") ? kv.get("docker_nofile_raise") === "1" : undefined, nrOpen: int("nr_open") };
}

/** The largest open-file limit a container on this daemon can be given; undefined when unknown. */
export function containerOpenFiles(f: DaemonOpenFiles): number | undefined {
  if (f.dockerNofile === undefined) return undefined;
  return f.dockerNofileRaise && f.nrOpen !== undefined ? Math.max(f.dockerNofile, f.nrOpen) : f.dockerNofile;
}

/** The most connections a container limit of `files` carries. */
export const connectionsFor = (files: number) => Math.floor((files - openFilesFor(0)) / 2);

/** The least gateway.maxConnections the schema accepts. */
export const MIN_CONNECTIONS = 100;

export const RAISE_LIMIT_HINT =
  "or raise the daemon's open-file limit: for a daemon systemd runs, `sudo systemctl edit docker`, add `[Service]` and `LimitNOFILE=1048576`, then `sudo systemctl restart docker`; " +
  "for a daemon started by hand, stop it and start it again from a root shell after `ulimit -Hn 1048576; ulimit -Sn 1048576`";

export type ConnectionsFit = { readonly maxConnections: number; readonly note?: string } | { readonly problem: string };

/**
 * gateway.maxConnections for a host whose daemon reported `facts`: an explicit value is kept when it
 * fits and refused when it does not; an unset one is the default, lowered to what the daemon allows.
 */
export function fitConnections(gateway: { readonly maxConnections: number; readonly maxConnectionsSet: boolean }, facts: DaemonOpenFiles, host: string): ConnectionsFit {
  const cap = containerOpenFiles(facts);
  const key = "rpcstack:gateway.maxConnections";
  if (cap === undefined) {
    if (gateway.maxConnectionsSet) return { maxConnections: gateway.maxConnections };
    return { maxConnections: gateway.maxConnections, note: `${key} is not set: ${gateway.maxConnections}, the default (${host}'s Docker daemon did not show its open-file limit)` };
  }
  const fits = connectionsFor(cap);
  const allows = `${host}'s Docker daemon lets a container open ${cap} files`;
  if (!gateway.maxConnectionsSet) {
    if (fits < MIN_CONNECTIONS) return { problem: `${allows}, too few for the gateway's least ${MIN_CONNECTIONS} connections (${openFilesFor(MIN_CONNECTIONS)} files): ${RAISE_LIMIT_HINT}` };
    const n = Math.min(fits, gateway.maxConnections);
    return { maxConnections: n, note: `${key} is not set: ${n}${n < gateway.maxConnections ? `, what fits (${allows}; 2 per connection + 1024; the default is ${gateway.maxConnections})` : `, the default (${allows})`}` };
  }
  if (gateway.maxConnections <= fits) return { maxConnections: gateway.maxConnections };
  const need = openFilesFor(gateway.maxConnections);
  const instead = fits >= MIN_CONNECTIONS ? `set it to ${fits} or less (or unset it: then it is what fits), ` : "";
  return { problem: `${key} ${gateway.maxConnections} needs ${need} open files in the gateway container (2 per connection + 1024), and ${allows}: ${instead}${RAISE_LIMIT_HINT}` };
}
