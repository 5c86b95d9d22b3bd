/**
 * rpcstack-usage: the usage keeper the usage container runs.
 *   node usage.js --admin HOST:PORT|PATH --file PATH --listen ADDR:PORT [--interval-seconds N]
 */
import { parseArgs } from "node:util";
import { systemReason } from "../kit/errors.js";
import { numberArg, UsageError } from "../kit/args.js";
import { checkStoreUrl, openCounterStore } from "./counterStore.js";
import { startKeeper, type KeeperOptions } from "./keeper.js";
import { parseRunAs, runAs, type RunAs } from "./runAs.js";
import { LedgerFileError } from "./store.js";

const USAGE = `usage: rpcstack-usage --admin HOST:PORT|PATH --file PATH --listen ADDR:PORT [--interval-seconds N] [--give-up-seconds N]
Reads the gateway's usage counters (table st_usage) from HAProxy's runtime API every interval and
keeps them per UTC day in a ledger file that survives restarts of HAProxy and of this program.
  --admin HOST:PORT|PATH   HAProxy's runtime API (TCP, or a Unix socket's path)
  --file PATH              the ledger (JSON, mode 0600); created when missing, never replaced
                           when it cannot be read (the program stops instead)
  --listen ADDR:PORT       serves GET /metrics (Prometheus), GET /usage?since=YYYY-MM-DD
                           &until=YYYY-MM-DD&key=NAME (JSON rows per day) and GET /healthz;
                           port 0 takes a free port and prints it
  --interval-seconds N     between readings (5)
  --give-up-seconds N      exit 1 (after saving) once HAProxy has not answered for N seconds, so
                           that a container sharing HAProxy's network namespace is restarted into
                           the new one after HAProxy's restarts (0, the default: never)
  --quota-used-map PATH    HAProxy's quota_used.map: seeded from the ledger when a new HAProxy
                           process answers, so a restart does not give quotas back
  --store redis://HOST:PORT
                           the counter store the gateway's replicas share (Redis or Valkey):
                           each reading publishes this ledger's quota counts there and adds the
                           other replicas' to --quota-used-map (which it needs)
  --rate-others-map PATH   with --store: HAProxy's rate_others.map, where each reading puts the
                           other replicas' calls per key name in their rate windows
  --run-as UID:GID         started as root: hand the ledger's folder (which must hold nothing
                           else) and the ledger to this user, then run as it (a new Docker
                           volume, and a ledger kept by an older keeper, belong to root); an
                           --admin socket path must then be one that user may open
  --help                   this text
SIGTERM or SIGINT: one last reading is saved, then exit 0 (1 when it could not be saved).`;

export function parseKeeperArgs(argv: string[]): (Omit<KeeperOptions, "log" | "store"> & { readonly runAs?: RunAs; readonly storeUrl?: string }) | "help" {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { admin: { type: "string" }, file: { type: "string" }, listen: { type: "string" }, "interval-seconds": { type: "string" }, "give-up-seconds": { type: "string" }, "quota-used-map": { type: "string" }, store: { type: "string" }, "rate-others-map": { type: "string" }, "run-as": { type: "string" }, help: { type: "boolean" } } }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return "help";
  for (const name of ["admin", "file", "listen"] as const) if (!values[name]) throw new UsageError(`--${name} is required`);
  const listen = /^(.+):(\d+)$/.exec(values.listen!);
  const port = Number(listen?.[2]);
  if (!listen || !Number.isInteger(port) || port > 65535) throw new UsageError(`--listen must be ADDR:PORT (got "${values.listen}")`);
  const intervalMs = numberArg("interval-seconds", values["interval-seconds"], 5, { min: 0.1, max: 3600 }) * 1000;
  const giveUpMs = numberArg("give-up-seconds", values["give-up-seconds"], 0, { min: 0, max: 86400 }) * 1000;
  const quotaUsedMap = values["quota-used-map"];
  const store = values.store;
  if (store !== undefined) {
    const bad = checkStoreUrl(store);
    if (bad) throw new UsageError(`--store: ${bad}`);
    if (!quotaUsedMap) throw new UsageError("--store goes with --quota-used-map: the other replicas' counts are handed to HAProxy there");
  }
  const rateOthersMap = values["rate-others-map"];
  if (rateOthersMap !== undefined && store === undefined) throw new UsageError("--rate-others-map goes with --store: the other replicas' rates come from it");
  let who: RunAs | undefined;
  try {
    who = values["run-as"] === undefined ? undefined : parseRunAs(values["run-as"]);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return {
    ...(who ? { runAs: who } : {}), admin: values.admin!, file: values.file!, intervalMs, giveUpMs, listen: { host: listen[1].replace(/^\[(.*)\]$/, "$1"), port }, ...(quotaUsedMap ? { quotaUsedMap } : {}), ...(store ? { storeUrl: store } : {}), ...(rateOthersMap ? { rateOthersMap } : {}) };
}

export async function main(argv: string[]): Promise<number> {
  let options;
  try {
    options = parseKeeperArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`rpcstack-usage: ${e.message}\n${USAGE}`);
    return 2;
  }
  if (options === "help") {
    console.log(USAGE);
    return 0;
  }
  const log = (line: string) => console.log(`rpcstack-usage: ${line}`);
  let keeper;
  let giveUp = () => {};
  try {
    if (options.runAs) runAs(options.file, options.runAs);
  } catch (e) {
    console.error(`rpcstack-usage: ${(e as Error).message}`);
    return 1;
  }
  try {
    const { storeUrl, ...rest } = options;
    let storeProblem = "";
    // Its host only: a URL may carry the store's password.
    const where = storeUrl ? new URL(storeUrl).host : "";
    const store = storeUrl
      ? openCounterStore(storeUrl, (e) => {
          // The client retries by itself; one line per new problem.
          if (e.message !== storeProblem) log(`the counter store at ${where}: ${e.message}`);
          storeProblem = e.message;
        })
      : undefined;
    keeper = startKeeper({ ...rest, log, onGiveUp: () => giveUp(), ...(store ? { store } : {}) });
  } catch (e) {
    if (!(e instanceof LedgerFileError)) throw e;
    console.error(`rpcstack-usage: ${e.message}`);
    return 1;
  }
  try {
    const port = await keeper.ready;
    log(`keeping ${options.file}, reading ${options.admin} every ${options.intervalMs / 1000} s, serving /metrics and /usage on ${options.listen.host}:${port}`);
  } catch (e) {
    await keeper.stop();
    console.error(`rpcstack-usage: cannot listen on ${options.listen.host}:${options.listen.port}: ${systemReason(e)}`);
    return 2;
  }
  const gaveUp = await new Promise<boolean>((resolve) => {
    for (const sig of ["SIGTERM", "SIGINT"] as const) process.once(sig, () => resolve(false));
    giveUp = () => resolve(true);
  });
  return (await keeper.stop()) && !gaveUp ? 0 : 1;
}

if (require.main === module) void main(process.argv.slice(2)).then((code) => process.exit(code));
