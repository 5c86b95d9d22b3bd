/** geth as the benches run it: on loopback ports of its own, in dev mode, and idle before it is measured. */
import { basename, dirname } from "node:path";
import { freePort, start, type Child } from "../devtools/net.js";
import { cpuMs } from "./measure.js";

export interface GethPorts {
  readonly http: number;
  readonly ws: number;
  readonly auth: number;
  readonly p2p: number;
}

/** The release folder scripts/clients/build.sh puts the binary in (clients/geth/<release>/geth). */
export const gethRelease = (geth: string) => basename(dirname(geth));

/**
 * geth on loopback ports it is given, on `datadir`, in dev mode sealing a block every
 * `periodSeconds` (0: only when a transaction comes) and blocks of `gasLimit`, with the stack's public APIs.
 */
export function startGeth(geth: string, datadir: string, periodSeconds: number, gasLimit: number, ports: GethPorts, extra: string[] = []): Child {
  return start(geth, [
    "--dev", `--dev.period=${periodSeconds}`, `--dev.gaslimit=${gasLimit}`, `--datadir=${datadir}`,
    "--ipcdisable", "--nodiscover", "--maxpeers=0", `--port=${ports.p2p}`, "--verbosity=2",
    "--http", "--http.addr=127.0.0.1", `--http.port=${ports.http}`, "--http.api=eth,net,web3", "--http.vhosts=*",
    "--ws", "--ws.addr=127.0.0.1", `--ws.port=${ports.ws}`, "--ws.api=eth,net,web3", "--ws.origins=*",
    "--authrpc.addr=127.0.0.1", `--authrpc.port=${ports.auth}`,
    ...extra,
  ]);
}

/** Free loopback ports for one geth. */
export const pickPorts = async (): Promise<GethPorts> => ({ http: await freePort(), ws: await freePort(), auth: await freePort(), p2p: await freePort() });


/**
 * Waits until geth is idle: under 5% of a core over two seconds running, at most 120 s. After a
 * start on an existing chain geth works in the background for a while (its log index among others:
 * eth_getLogs got faster as it went), and a bench that started meanwhile measured a node whose
 * calls per second doubled from its first round to its last at the same load.
 */
export async function settle(pid: number): Promise<{ seconds: number; cpuMs: number }> {
  const t0 = Date.now();
  const c0 = cpuMs([pid]);
  let quiet = 0;
  while (quiet < 2 && Date.now() - t0 < 120_000) {
    const before = cpuMs([pid]);
    await new Promise((r) => setTimeout(r, 1000));
    quiet = cpuMs([pid]) - before < 50 ? quiet + 1 : 0;
  }
  return { seconds: Math.round((Date.now() - t0) / 1000), cpuMs: Math.round(cpuMs([pid]) - c0) };
}
