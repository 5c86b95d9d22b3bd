/**
 * The restore's throughput against the operator's manual way, in one run: rpcstack-restore (bundled,
 * on the pinned runtime's Node release) and `curl | zstd -d | tar -x` fetch the same .tar.zst of a
 * generated stand-in database from the same local HTTPS publisher, alternating, N rounds; prints
 * each round and the median ratio. Not part of the test run.
 *
 *   npx tsx bench/restore.ts [--rounds N] [--restore-mb N]
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleSource } from "../components/bundle.js";
import { nodeRuntime } from "../devtools/nodeRuntime.js";
import { BENCH_DEFAULTS, benchArgs } from "./args.js";
import { selfSignedCert } from "./gateway.js";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createSnapshotServer } = require("../devtools/snapshotServer.js");

const USAGE = `usage: npx tsx bench/restore.ts [options]
  --rounds N       rounds, the two ways alternating within each (3)
  --restore-mb N   the stand-in database's size in MB, in files of 60 MB (600)
  --help           this text`;

// The options are npm run bench's one list (bench/args.ts), with this bench's own usage and 3 rounds.
const args = benchArgs(process.argv.slice(2), USAGE, { ...BENCH_DEFAULTS, rounds: 3 });

async function main(): Promise<number> {
  const rounds = args.rounds;
  const mb = args["restore-mb"];
  const work = mkdtempSync(join(tmpdir(), "rpcstack-bench-restore-"));
  const node = nodeRuntime();
  try {
    // Half random, half repeated, in 60 MB files: compresses about 2:1, like the stand-in in the tests.
    const db = join(work, "db");
    mkdirSync(db);
    for (let i = 0; i < Math.ceil(mb / 60); i++) writeFileSync(join(db, `${String(i).padStart(6, "0")}.sst`), Buffer.concat([randomBytes(30 << 20), Buffer.alloc(30 << 20, 97)]));
    mkdirSync(join(work, "srv"));
    execFileSync("sh", ["-c", `tar -C ${db} -cf - . | zstd -q -3 -T0 -c > ${join(work, "srv", "db.tar.zst")}`]);
    const { cert, both } = selfSignedCert(work);
    const { server } = createSnapshotServer({ dir: join(work, "srv"), cert: readFileSync(both, "utf8") });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `https://localhost:${(server.address() as AddressInfo).port}/plain/db.tar.zst`;
    const program = join(work, "restore.js");
    writeFileSync(program, bundleSource("restore/restoreMain.ts"));
    const fresh = () => {
      const d = join(work, "out");
      rmSync(d, { recursive: true, force: true });
      mkdirSync(d);
      return d;
    };
    const ratios: number[] = [];
    for (let i = 1; i <= rounds; i++) {
      // The publisher runs in this process: the children are spawned asynchronously so it can serve.
      const ours = await timedAsync(() => run(node, [program, "--url", url, "--dest", fresh(), "--format", "tar.zst", "--need-bytes", "1"], { NODE_EXTRA_CA_CERTS: cert }));
      const manual = await timedAsync(() => run("sh", ["-c", `curl -sf --cacert ${cert} ${url} | zstd -q -d | tar -C ${fresh()} -xf -`], {}));
      ratios.push(ours / manual);
      process.stdout.write(`round ${i}: rpcstack-restore ${ours.toFixed(2)} s, curl | zstd | tar ${manual.toFixed(2)} s, ratio ${(ours / manual).toFixed(2)}\n`);
    }
    const sorted = [...ratios].sort((a, b) => a - b);
    process.stdout.write(`median ratio (rpcstack-restore / curl | zstd | tar): ${sorted[Math.floor(sorted.length / 2)].toFixed(2)} over ${rounds} rounds, ${mb} MB database\n`);
    server.close();
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function run(cmd: string, args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "inherit"] });
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}`))));
  });
}

async function timedAsync(f: () => Promise<void>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await f();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

main().then((code) => process.exit(code));
