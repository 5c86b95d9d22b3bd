/**
 * The L2 restore from a snapshot on a real Docker engine, from the package's compose export: a
 * local HTTPS publisher (a container on the stack's network, devtools/snapshotServer.js)
 * serves a generated .tar.zst of a stand-in Juno database; the export's l2-restore init service
 * (the bundled program, on the pinned Node release) restores it before the Juno stand-in starts,
 * which then continues from the restored head. Cut, corrupt, truncated, already-filled and too-small
 * volumes each behave as the operator is promised. Names carry a test prefix; everything is removed
 * in afterAll, also on failure.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { projectName } from "../../export/compose.js";
import { ROOT } from "../harness.js";
import { freePort } from "../support/net.js";
import { caDir, issueCert } from "../support/tls.js";
import { buildTestImages, type TestImages } from "../../devtools/images/build.js";
import { nodeRuntimeImage } from "../../devtools/images/nodeRuntime.js";
import { engineMissing, inspect, must, run, smallVolume, type SmallVolume } from "../../devtools/docker.js";
import { describeNotRun } from "./notRun.js";

const missing = engineMissing();
/** The head the stand-in database was restored at: the Juno stand-in continues from it. */
const RESTORED_HEAD = 424242;

if (missing) {
  describeNotRun("restore end-to-end test", missing);
} else {
  describe("restore from a snapshot on a real Docker engine (compose export, Juno stand-in)", () => {
    const prefix = `e2er${randomBytes(3).toString("hex")}-`;
    const dir = mkdtempSync(join(tmpdir(), "rpcstack-e2e-restore-"));
    const srv = join(dir, "srv");
    const c = (name: string) => `${prefix}rpcstack-${name}`;
    const server = `${prefix}snapshots`;
    const volume = c("sepolia-juno");
    const ports: Record<string, number> = {};
    let images: TestImages;
    let runtime: string;
    let archiveBytes = 0;
    let small: SmallVolume | undefined;
    const started = Date.now();

    /** The compose files of the stack with `snapshot` as l2.snapshot, in `out`. */
    const exportWith = (out: string, snapshot: Record<string, unknown>) => {
      const stack = parse(readFileSync(join(ROOT, "stacks/Pulumi.local.yaml"), "utf8"));
      Object.assign(stack.config, {
        "rpcstack:network": "testnet",
        "rpcstack:tier": "recommended",
        "rpcstack:l1": { executionImage: images.geth, consensusImage: images.lighthouse },
        "rpcstack:l2": { client: "juno", pendingPollInterval: "3s", image: images.juno, snapshot },
        "rpcstack:indexer": { enabled: false },
        "rpcstack:readiness": { ...stack.config["rpcstack:readiness"], image: runtime },
      });
      const file = join(dir, `Pulumi.${out}.yaml`);
      writeFileSync(file, stringify(stack));
      const publish = [
        `geth:8545=${ports.gethHttp}`, `geth:8546=${ports.gethWs}`, `geth:30303/tcp=127.0.0.1:${ports.gethP2p}`, `geth:30303/udp=127.0.0.1:${ports.gethP2p}`,
        `lighthouse:9000/tcp=127.0.0.1:${ports.lhP2p}`, `lighthouse:9000/udp=127.0.0.1:${ports.lhP2p}`, `lighthouse:9001/udp=127.0.0.1:${ports.lhQuic}`, `juno:6060=${ports.junoHttp}`,
      ].flatMap((p) => ["--publish", p]);
      must("npx", ["tsx", "export/cli.ts", "--stack-file", file, "--out", join(dir, out), "--name-prefix", prefix, ...publish], { cwd: ROOT });
      return join(dir, out);
    };
    const compose = (out: string, file: string, ...args: string[]) => run("docker-compose", ["-p", projectName(file, prefix), "-f", file, ...args], { cwd: out, timeoutMs: 300_000 });
    /** The L2 file up with the restore first; down -v afterwards (the volume goes with it). */
    const l2Up = (out: string) => compose(out, "dc-l2.yaml", "up", "-d");
    const l2Down = (out: string) => compose(out, "dc-l2.yaml", "down", "-v");
    const restoreLogs = () => run("docker", ["logs", c("l2-restore")]).stdout;
    const onVolume = (cmd: string) => must("docker", ["run", "--rm", "--user", "0", "--entrypoint", "sh", "-v", `${volume}:/data`, images.node, "-c", cmd]);
    const serverRequests = () =>
      run("docker", ["logs", server]).stdout.split("\n").filter((l) => l.startsWith("request ")).map((l) => JSON.parse(l.slice(8)) as { method: string; path: string; range: string | null });
    /** A JSON-RPC result from `url` once it answers (the nodes' Docker health checks first run 30 s after the start). */
    const rpcAnswers = async (url: string, method: string, boundMs = 60_000): Promise<unknown> => {
      const t0 = Date.now();
      for (;;) {
        // A stand-in that is still starting may take the connection and not answer yet.
        const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }), signal: AbortSignal.timeout(5000) })
          .then((res) => res.json() as Promise<{ result?: unknown }>)
          .catch(() => ({ result: undefined }));
        if (r.result !== undefined) return r.result;
        if (Date.now() - t0 > boundMs) throw new Error(`${url} did not answer ${method} within ${boundMs / 1000} s`);
        await new Promise((res) => setTimeout(res, 500));
      }
    };
    /** The L2 node's head through its published port. */
    const headBlock = async () => (await rpcAnswers(`http://127.0.0.1:${ports.junoHttp}`, "starknet_blockNumber")) as number;

    beforeAll(async () => {
      images = buildTestImages((s) => console.log(`e2e images: ${s}`));
      runtime = nodeRuntimeImage(images.node, join(caDir(), "ca.pem"));
      for (const p of ["gethHttp", "gethWs", "gethP2p", "lhP2p", "lhQuic", "junoHttp"]) ports[p] = await freePort();

      // The stand-in database and its archives, as a publisher would serve them.
      const db = join(dir, "db");
      mkdirSync(db, { recursive: true });
      writeFileSync(join(db, "standin-head"), String(RESTORED_HEAD));
      writeFileSync(join(db, "000001.sst"), Buffer.concat([randomBytes(24 << 20), Buffer.alloc(24 << 20, 3)]));
      writeFileSync(join(db, "CURRENT"), "MANIFEST-000001\n");
      mkdirSync(srv);
      const archive = execFileSync("sh", ["-c", `tar -C ${db} -cf - . | zstd -q -3 -c`], { maxBuffer: 1 << 30 });
      archiveBytes = archive.length;
      writeFileSync(join(srv, "db.tar.zst"), archive);
      const corrupt = Buffer.from(archive);
      for (let i = 0; i < 64; i++) corrupt[Math.floor(corrupt.length / 2) + i] ^= 0xff;
      writeFileSync(join(srv, "corrupt.tar.zst"), corrupt);
      writeFileSync(join(srv, "truncated.tar.zst"), archive.subarray(0, Math.floor(archive.length * 0.6)));
      writeFileSync(join(dir, "cert.pem"), issueCert(["snapshots"]), { mode: 0o644 });

      // L1 first (the Juno stand-in checks the L1 chain id), on the network the L1 file creates.
      const l1 = exportWith("base", { url: "https://snapshots:8443/plain/db.tar.zst", unpackedGB: 1 });
      must("docker-compose", ["-p", projectName("dc-l1.yaml", prefix), "-f", "dc-l1.yaml", "up", "-d"], { cwd: l1, timeoutMs: 300_000 });
      // geth answering is enough (the Juno stand-in asks it for the chain id); its health check first runs only 30 s in.
      await rpcAnswers(`http://127.0.0.1:${ports.gethHttp}`, "eth_chainId", 120_000);
      must("docker", [
        "run", "-d", "--name", server, "--network", `${prefix}rpcstack`, "--network-alias", "snapshots",
        // Debian's Node image with the script from this checkout (the stand-in images stay as main builds them).
        "-v", `${srv}:/srv:ro`, "-v", `${join(dir, "cert.pem")}:/cert.pem:ro`, "-v", `${join(ROOT, "devtools/snapshotServer.js")}:/opt/snapshot-server.js:ro`,
        "--entrypoint", "node", images.node, "/opt/snapshot-server.js", "--dir", "/srv", "--cert", "/cert.pem", "--port", "8443",
      ]);
    }, 900_000);

    afterAll(() => {
      for (const out of ["ok", "cut", "corrupt", "truncated", "kept", "nofit", "base"]) run("docker-compose", ["-p", projectName("dc-l2.yaml", prefix), "-f", "dc-l2.yaml", "down", "-v"], { cwd: join(dir, out), timeoutMs: 120_000 });
      run("docker-compose", ["-p", projectName("dc-l1.yaml", prefix), "-f", "dc-l1.yaml", "down", "-v", "--remove-orphans"], { cwd: join(dir, "base"), timeoutMs: 300_000 });
      run("docker", ["rm", "-f", server]);
      small?.remove();
      const left = (kind: string, args: string[]) => run("docker", [kind, "ls", ...args, "-q", "--filter", `name=${prefix}`]).stdout.split("\n").filter(Boolean);
      const containers = left("container", ["-a"]);
      if (containers.length) run("docker", ["rm", "-f", "-v", ...containers]);
      for (const v of left("volume", [])) run("docker", ["volume", "rm", "-f", v]);
      for (const n of left("network", [])) run("docker", ["network", "rm", n]);
      // The per-run CA layer (the runtime image under it stays cached).
      if (runtime) run("docker", ["rmi", runtime]);
      rmSync(dir, { recursive: true, force: true });
      console.log(`e2e restore: ${Math.round((Date.now() - started) / 1000)} s from the image check to the clean-up`);
      const remaining = ["container", "volume", "network"].flatMap((k) => left(k, k === "container" ? ["-a"] : []).map((id) => `${k} ${id}`));
      expect(remaining, "the test leaves nothing behind").toEqual([]);
    }, 600_000);

    it("restores the archive before the node starts, and the node starts on it (continuing from the restored head)", async () => {
      const out = exportWith("ok", { url: "https://snapshots:8443/plain/db.tar.zst", unpackedGB: 1 });
      const up = l2Up(out);
      expect(up.status, up.stderr + up.stdout).toBe(0);
      expect(inspect(c("l2-restore"), "{{.State.Status}} {{.State.ExitCode}}")).toBe("exited 0");
      const logs = restoreLogs();
      const summary = /restored ([\d.]+ MB) from snapshots:8443\/plain\/db\.tar\.zst \(([\d.]+ MB) written\) in (\d+)s, ([\d.]+ MB)\/s/.exec(logs);
      expect(summary, logs).not.toBeNull();
      console.log(`e2e restore: ${summary![1]} archive (${archiveBytes} bytes), ${summary![2]} written, in ${summary![3]} s: ${summary![4]}/s (publisher on the same engine, not throttled)`);
      // The node started after the restore had finished.
      expect(Date.parse(inspect(c("juno"), "{{.State.StartedAt}}"))).toBeGreaterThanOrEqual(Date.parse(inspect(c("l2-restore"), "{{.State.FinishedAt}}")));
      expect(await headBlock()).toBeGreaterThanOrEqual(RESTORED_HEAD);
      expect(onVolume("ls -A /data | sort | tr '\\n' ' '")).toBe("000001.sst CURRENT standin-head");
      expect(l2Down(out).status).toBe(0);
    }, 300_000);

    it("a download cut halfway resumes with a range request, and the node starts", async () => {
      const out = exportWith("cut", { url: "https://snapshots:8443/cut/db.tar.zst", unpackedGB: 1 });
      const up = l2Up(out);
      expect(up.status, up.stderr + up.stdout).toBe(0);
      expect(restoreLogs()).toMatch(/the connection broke after .*; resuming at byte \d+ in 1 s \(retry 1 of 5\)/);
      expect(serverRequests().filter((r) => r.path === "/cut/db.tar.zst").map((r) => r.range)).toEqual([null, expect.stringMatching(/^bytes=\d+-$/)]);
      expect(await headBlock()).toBeGreaterThanOrEqual(RESTORED_HEAD);
      expect(l2Down(out).status).toBe(0);
    }, 300_000);

    it.each([
      ["corrupt", /^rpcstack-restore: FAILED: corrupt: /m],
      ["truncated", /^rpcstack-restore: FAILED: truncated: /m],
    ])("a %s archive fails the update with the cause, the node never starts, and the volume is left empty", async (what, cause) => {
      const out = exportWith(what, { url: `https://snapshots:8443/plain/${what}.tar.zst`, unpackedGB: 1 });
      const up = l2Up(out);
      expect(up.status, up.stdout + up.stderr).not.toBe(0);
      expect(restoreLogs()).toMatch(cause);
      expect(inspect(c("l2-restore"), "{{.State.ExitCode}}")).toBe("1");
      const juno = run("docker", ["inspect", "--format", "{{.State.Running}} {{.State.StartedAt}}", c("juno")]);
      // Either never created, or created and never started.
      if (juno.status === 0) expect(juno.stdout.trim()).toBe("false 0001-01-01T00:00:00Z");
      expect(onVolume("ls -A /data")).toBe("");
      console.log(`e2e restore (${what}): docker-compose said: ${(up.stderr + up.stdout).trim().split("\n").slice(-2).join(" / ")}`);
      l2Down(out);
    }, 300_000);

    it("a volume that already holds data is left byte-identical, nothing is downloaded, and the node starts on it", async () => {
      must("docker", ["volume", "create", volume]);
      onVolume("echo 777 > /data/standin-head && head -c 100000 /dev/urandom > /data/000009.sst && mkdir /data/wal && echo x > /data/wal/1.log");
      // The stand-in rewrites its head file once it runs: every other file must stay as it was.
      const digest = () => onVolume("cd /data && find . -type f ! -name standin-head | sort | xargs sha256sum && find . | sort | xargs stat -c '%n %s %Y'");
      const before = digest();
      const gets = serverRequests().length;
      const out = exportWith("kept", { url: "https://snapshots:8443/plain/db.tar.zst", unpackedGB: 1 });
      const up = l2Up(out);
      expect(up.status, up.stderr + up.stdout).toBe(0);
      expect(restoreLogs()).toMatch(/\/data holds a database \(3 entries\): left as it is, no snapshot restored/);
      expect(serverRequests().length).toBe(gets);
      // The node runs on the data it had (head 777 and on), not on the snapshot's.
      const head = await headBlock();
      expect(head).toBeGreaterThanOrEqual(777);
      expect(head).toBeLessThan(RESTORED_HEAD);
      must("docker", ["stop", c("juno")]);
      const strip = (d: string) => d.replace(/^\.\/standin-head .*$/m, "").replace(/^\. \d+ \d+$/m, "");
      expect(strip(digest())).toBe(strip(before));
      l2Down(out);
    }, 300_000);

    it("a snapshot that does not fit is refused before any byte is downloaded", async () => {
      small = smallVolume(volume, join(dir, "small.ext4"));
      const gets = serverRequests().length;
      const out = exportWith("nofit", { url: "https://snapshots:8443/plain/db.tar.zst", unpackedGB: 1 });
      const up = l2Up(out);
      expect(up.status, up.stdout + up.stderr).not.toBe(0);
      expect(restoreLogs()).toMatch(/^rpcstack-restore: FAILED: does not fit: the restored database needs 1\.0 GB and the volume has [\d.]+ MB free; refused before downloading anything/m);
      expect(serverRequests().length).toBe(gets);
      expect(onVolume("ls -A /data")).toBe("lost+found");
      l2Down(out);
      small.remove();
      small = undefined;
    }, 300_000);
  });
}
