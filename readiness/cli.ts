/**
 * rpcstack-ready: poll the L1 and L2 nodes until both are synced (exit 0) or the timeout passes
 * (exit 1; 3 when an endpoint never answered). With --serve PORT it keeps polling and answers
 * GET /ready/l1, /ready/l2 and /ready with 200 (synced) or 503, for the gateway's health checks;
 * with several nodes per layer also GET /ready/<layer>/<node> (in rotation: rotation.ts) and
 * GET /metrics. With --await LAYER/NODE it waits until that node is in rotation (a rolling
 * upgrade's step).
 */
import { RESULT_PREFIX } from "./result.js";
import { UsageError } from "../kit/args.js";
import { serveUntilSignal } from "../kit/serve.js";
import { HelpRequested, parseCli, USAGE, type CliOptions } from "./readyArgs.js";
import { runWait } from "./waitSynced.js";
import { runAwait } from "./awaitRotation.js";
import { serveHealth } from "./healthServer.js";

export { RESULT_PREFIX };

export async function main(argv: string[]): Promise<number> {
  let opts: CliOptions;
  try {
    opts = parseCli(argv);
  } catch (e) {
    if (e instanceof HelpRequested) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`rpcstack-ready: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  if (opts.await) return runAwait(opts);
  if (opts.serve) {
    const host = opts.serve.host;
    return serveUntilSignal("rpcstack-ready", serveHealth(opts), (port) => `serving /ready/l1, /ready/l2, /ready on ${host}:${port}`);
  }
  return runWait(opts);
}

if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
