/**
 * The whole local stack on a real Docker engine, from the package's own compose export: real
 * health checks inside real images (Debian's HAProxy, certbot and Node.js; geth built from its Go
 * module at the pin; stand-ins for Lighthouse and Juno, passed through the stack's image keys),
 * relays through the gateway container with the client library, a node stopped and started,
 * volumes kept across `down`/`up`. geth cannot reach Sepolia here, so it stays at block 0 with no
 * peers: the gateway keeps the L1 route at 503 (not synced), which the test checks, and L1 relays
 * through the gateway are checked on devnet (devnet.test.ts), where geth --dev makes its own blocks. Every name
 * carries a test prefix, and everything the test creates is removed in afterAll, also when it fails.
 *
 * Without a Docker daemon (or docker-compose) the file holds one test whose name says NOT RUN:
 * it fails where CI is set, and passes with a warning on a developer's machine, so a run without
 * an engine never reads as a passed end-to-end test.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RelayError, type RpcClient } from "../../client/index.js";
import { COMPOSE_FILES, projectName } from "../../export/compose.js";
import { ROOT } from "../harness.js";
import { freePort, jsonRpc } from "../support/net.js";
import { buildTestImages, type TestImages } from "../../devtools/images/build.js";
import { gatewayClient, msUntil, tlsFetch, upgradeStatus } from "./client.js";
import { engineMissing, inspect, must, removeByPrefix, run, smallVolume, waitHealthy, type SmallVolume } from "../../devtools/docker.js";
import { writeStackFiles } from "./stackFiles.js";
import { exportStack, gatewayCa, upInOrder } from "./compose.js";
import { describeNotRun } from "./notRun.js";

const missing = engineMissing();

if (missing) {
  describeNotRun("end-to-end test", missing);
} else {
  describe("end-to-end on a real Docker engine (local stack on Sepolia: real geth offline, stand-in Lighthouse and Juno)", () => {
    const prefix = `e2e${randomBytes(3).toString("hex")}-`;
    const dir = mkdtempSync(join(tmpdir(), "rpcstack-e2e-"));
    const out = join(dir, "compose");
    // The Pathfinder variant of the L2 file, run beside the same L1 node at the end.
    const outPf = join(dir, "compose-pathfinder");
    const pfProject = `${prefix}rpcstack-l2-pathfinder`;
    const key = randomBytes(32).toString("base64url");
    const ports: Record<string, number> = {};
    const c = (name: string) => `${prefix}rpcstack-${name}`;
    const compose = (file: (typeof COMPOSE_FILES)[number], ...args: string[]) =>
      must("docker-compose", ["-p", projectName(file, prefix), "-f", file, ...args], { cwd: out, timeoutMs: 600_000 });
    let images: TestImages;
    // Juno's volume sits on a 64 MB ext4 file system of its own, so a test can fill it.
    const junoVolume = `${prefix}rpcstack-sepolia-juno`;
    let junoFs: SmallVolume | undefined;
    let ca: string;
    let gatewayUrl: string;

    // Deployed in the README's order: L1, then L2 + indexer, then the gateway file.
    const up = () => upInOrder(compose, { "dc-l1.yaml": [c("geth"), c("lighthouse")], "dc-l2.yaml": [c("juno")], "dc-gateway.yaml": [c("disk-watch"), c("sync-health"), c("gateway")] });

    const started = Date.now();

    beforeAll(async () => {
      const t0 = Date.now();
      images = buildTestImages((s) => console.log(`e2e images: ${s}`));
      console.log(`e2e images ready in ${Math.round((Date.now() - t0) / 1000)} s`);
      for (const p of ["https", "http", "usage", "gethHttp", "gethWs", "junoHttp", "pfHttp", "gethP2p", "lhP2p", "lhQuic"]) ports[p] = await freePort();

      writeStackFiles(dir, images);
      writeFileSync(join(dir, "keys.json"), JSON.stringify([{ name: "e2e", key }]), { mode: 0o600 });

      // Public ports (p2p, 80, 443) move to loopback ports of the test's choosing; the RPC ports
      // keep the address the package gives them, so the inspect test below checks the package.
      const publish = [
        `haproxy:443=127.0.0.1:${ports.https}`, `haproxy:80=127.0.0.1:${ports.http}`, `haproxy:9107=127.0.0.1:${ports.usage}`,
        `geth:30303/tcp=127.0.0.1:${ports.gethP2p}`, `geth:30303/udp=127.0.0.1:${ports.gethP2p}`,
        `lighthouse:9000/tcp=127.0.0.1:${ports.lhP2p}`, `lighthouse:9000/udp=127.0.0.1:${ports.lhP2p}`, `lighthouse:9001/udp=127.0.0.1:${ports.lhQuic}`,
        `geth:8545=${ports.gethHttp}`, `geth:8546=${ports.gethWs}`, `juno:6060=${ports.junoHttp}`,
      ].flatMap((p) => ["--publish", p]);
      exportStack(join(dir, "Pulumi.e2e.yaml"), out, prefix, ["--keys-file", join(dir, "keys.json"), ...publish]);

      junoFs = smallVolume(junoVolume, join(dir, "juno.ext4"));

      const t1 = Date.now();
      await up();
      console.log(`e2e stack healthy in ${Math.round((Date.now() - t1) / 1000)} s`);
      // HAProxy's first certificate, made by cert-init in the certificate volume: what a client must trust.
      ca = gatewayCa(c("gateway"));
      gatewayUrl = `https://127.0.0.1:${ports.https}`;
    }, 900_000);

    afterAll(() => {
      run("docker-compose", ["-p", pfProject, "-f", "dc-l2.yaml", "down", "-v"], { cwd: outPf, timeoutMs: 300_000 });
      const files = [...COMPOSE_FILES].reverse();
      for (const f of files) run("docker-compose", ["-p", projectName(f, prefix), "-f", f, "down", "-v", "--remove-orphans"], { cwd: out, timeoutMs: 300_000 });
      junoFs?.remove();
      const remaining = removeByPrefix(prefix);
      rmSync(dir, { recursive: true, force: true });
      console.log(`e2e: ${Math.round((Date.now() - started) / 1000)} s from the image check to the clean-up`);
      expect(remaining, "the test leaves nothing behind").toEqual([]);
    }, 600_000);

    const clientFor = (chainIds: string, privateKey = key, retries = 2, gw = { url: gatewayUrl, ca }): RpcClient => gatewayClient(gw, chainIds, privateKey, retries);

    /** STRKS through the gateway: 200, or the status the relay failed with. */
    const strksStatus = () => clientFor("STRKS", key, 0).sendRelay({ method: "starknet_blockNumber", params: [] }).then(() => 200, (e: RelayError) => e.status ?? 0);
    const until = (want: number, boundMs: number) => msUntil(strksStatus, want, boundMs);
    /** Asks the L2 chain's id every second until the gateway relays it; `seen` is told each result. Throws after `boundMs`. */
    const relaysAgain = async (client: RpcClient, boundMs: number, seen: (r: unknown) => void = () => {}) => {
      const t0 = Date.now();
      for (;;) {
        const r = await client.sendRelay({ method: "starknet_chainId", params: [] }).catch((e) => e);
        seen(r);
        if (r === "0x534e5f5345504f4c4941") return;
        if (Date.now() - t0 > boundMs) throw new Error(`the gateway did not relay again within ${boundMs / 1000} s: ${r}`);
        await new Promise((res) => setTimeout(res, 1000));
      }
    };

    it("every container turns healthy by its own health check; the init steps ran once and succeeded", () => {
      for (const name of ["geth", "lighthouse", "juno", "sync-health", "gateway"]) expect(inspect(c(name), "{{.State.Health.Status}}"), name).toBe("healthy");
      for (const name of ["jwt-init", "cert-init"]) expect(inspect(c(name), "{{.State.Status}} {{.State.ExitCode}}"), name).toBe("exited 0");
      expect(inspect(c("indexer"), "{{.State.Status}} {{.RestartCount}}")).toBe("running 0");
    });

    it("rpcstack-ready through the published loopback ports: L2 synced; real geth, offline, waiting at block 0", () => {
      const r = run("npx", ["tsx", "readiness/cli.ts", "--l2", `http://127.0.0.1:${ports.junoHttp}`, "--timeout-minutes", "2", "--interval-seconds", "1"], { cwd: ROOT });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^rpcstack-ready: synced: l2: synced \| /m);
      const l1 = run("npx", ["tsx", "readiness/cli.ts", "--l1", `http://127.0.0.1:${ports.gethHttp}`, "--report-only"], { cwd: ROOT });
      expect(l1.status, l1.stdout + l1.stderr).toBe(0);
      expect(l1.stdout).toMatch(/l1: waiting \| /);
    });

    it("relays through the gateway container over TLS, one call per chain and interface; an L1 that is not synced gets 503; a wrong key gets 401", async () => {
      const sep1 = clientFor("SEP1", key, 0);
      const strks = clientFor("STRKS");
      // The real geth, Sepolia's chain id on its own port, is held out of the gateway until it syncs.
      expect(await jsonRpc(`http://127.0.0.1:${ports.gethHttp}`, "eth_chainId")).toBe("0xaa36a7");
      const err = await sep1.sendRelay({ method: "eth_blockNumber", params: [] }).then(() => undefined, (e) => e);
      expect(err).toBeInstanceOf(RelayError);
      expect(err.status).toBe(503);
      expect(await upgradeStatus(`${gatewayUrl.replace(/^https/, "wss")}/gateway/sep1/rpc/${key}?secret=null`, ca)).toBe(503);
      expect(await strks.sendRelay({ method: "starknet_chainId", params: [] })).toBe("0x534e5f5345504f4c4941");
      expect(await strks.sendRelayWs({ method: "starknet_blockNumber", params: [] })).toBeGreaterThan(0);
      for (const chain of ["SEP1", "STRKS"]) {
        const err = await clientFor(chain, `wrong-${key.slice(6)}`).sendRelay({ method: "eth_blockNumber", params: [] }).catch((e) => e);
        expect(err, chain).toBeInstanceOf(RelayError);
        expect(err.status, chain).toBe(401);
      }
      // The indexer follows the L2 node inside the private network.
      expect(run("docker", ["logs", c("indexer")]).stdout).toMatch(/^\{"block":\d+,/m);
    });

    it("usage: the keeper counts the key's calls exactly, through a restart of the gateway container, and npm run usage prints them", async () => {
      const today = new Date().toISOString().slice(0, 10);
      const strks = clientFor("STRKS");
      /** The key's HTTP calls on the L2 chain today, as npm run usage prints them; what it said when it could not. */
      const calls = (): number | string => {
        const r = run(join(ROOT, "node_modules/.bin/tsx"), [join(ROOT, "cli/usage.ts"), "--url", `http://127.0.0.1:${ports.usage}`, "--since", today, "--key", "e2e", "--format", "json"], { cwd: ROOT });
        if (r.status !== 0) return `exit ${r.status}: ${r.stderr.trim()}`;
        return (JSON.parse(r.stdout) as { chain: string; interface: string; calls: number }[]).filter((x) => x.chain === "strks" && x.interface === "http").reduce((n, x) => n + x.calls, 0);
      };
      // The keeper reads every 5 s; after HAProxy's container restarts it is back within ~15 s.
      const counted = async (want: number) => {
        for (let i = 0; ; i++) {
          const n = calls();
          if (n === want) return;
          if ((typeof n === "number" && n > want) || i > 60) throw new Error(`npm run usage shows ${n} calls, ${want} were sent`);
          await new Promise((r) => setTimeout(r, 1000));
        }
      };
      // Whatever earlier tests sent has been read once the count holds still.
      await new Promise((r) => setTimeout(r, 6000));
      const before = calls();
      if (typeof before !== "number") throw new Error(`npm run usage: ${before}`);
      for (let i = 0; i < 3; i++) await strks.sendRelay({ method: "starknet_chainId", params: [] });
      const batch = await tlsFetch(ca)(`${gatewayUrl}/gateway/strks/rpc-http/${key}`, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify([1, 2].map((id) => ({ jsonrpc: "2.0", id, method: "starknet_chainId", params: [] }))),
      });
      expect(batch.status).toBe(200);
      await counted(before + 5);
      // HAProxy's container restarts: its counters start again at 0, the keeper restarts into its
      // new network namespace, and nothing counted is lost.
      must("docker", ["restart", c("gateway")]);
      // Without retries, so that each call the gateway answered (a 503 while its node check
      // settles included) is known: those are counted; calls it never took are not.
      let answered = 0;
      await relaysAgain(clientFor("STRKS", key, 0), 60_000, (r) => {
        if (typeof r === "string" || (r instanceof RelayError && (r.kind === "http" || r.kind === "jsonrpc"))) answered++;
      });
      await counted(before + 5 + answered);
      expect(run("docker", ["logs", c("usage")]).stdout).not.toContain(key);
      // Its container starts as root; the keeper itself runs as 1000 and owns its ledger.
      expect(must("docker", ["exec", c("usage"), "cat", "/proc/1/status"])).toMatch(/^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
      expect(must("docker", ["exec", c("usage"), "stat", "-c", "%u:%g %a", "/var/lib/rpcstack-usage", "/var/lib/rpcstack-usage/usage.json"]).trim().split("\n")).toEqual(["1000:1000 755", "1000:1000 600"]);
    }, 240_000);

    it("stopping the L2 node turns its route to 503 within the health-check window; starting it brings 200 back", async () => {
      const cfg = readFileSync(join(out, "gateway/haproxy.cfg"), "utf8");
      // fastinter/downinter only shorten the checks after a failure: inter stays the upper bound.
      // The check goes through the disk watcher, which asks the node's own /ready/sync each time.
      const server = /server s1 disk-watch:\d+ check inter (\d+)(?: fastinter \d+)?(?: downinter \d+)? fall (\d+) rise (\d+)/.exec(cfg);
      expect(server, "haproxy.cfg checks the L2 node through the disk watcher").not.toBeNull();
      const connectMs = Number(/timeout connect (\d+)s/.exec(cfg)![1]) * 1000;
      const [inter, fall, rise] = server!.slice(1).map(Number);
      // A stopped container's address stops answering: each failing check may wait out the connect timeout.
      const downBound = fall * (inter + connectMs) + 10_000;
      must("docker", ["stop", c("juno")]);
      try {
        const toDown = await until(503, downBound);
        console.log(`e2e: 503 ${toDown} ms after the L2 node stopped (bound ${downBound} ms)`);
        // The L1 node is untouched.
        expect(await jsonRpc(`http://127.0.0.1:${ports.gethHttp}`, "eth_chainId")).toBe("0xaa36a7");
      } finally {
        must("docker", ["start", c("juno")]);
      }
      const toUp = await until(200, rise * inter + 30_000);
      console.log(`e2e: 200 ${toUp} ms after the L2 node started`);
    });

    it("a data volume filled past disk.stopPercent takes its node out of the gateway (503); freeing it brings 200 back", async () => {
      const onVolume = (...cmd: string[]) => must("docker", ["run", "--rm", "--user", "0", "--entrypoint", "sh", "-v", `${junoVolume}:/data`, images.node, "-c", cmd.join(" ")]);
      // As root, so the reserved blocks fill too: the volume reads 100% used.
      onVolume("dd if=/dev/zero of=/data/rpcstack-e2e-fill bs=1M 2>/dev/null; true");
      try {
        const toDown = await until(503, 60_000);
        console.log(`e2e: 503 ${toDown} ms after the Juno volume filled`);
        const metrics = must("docker", ["exec", c("disk-watch"), "node", "-e", "fetch('http://127.0.0.1:9105/metrics').then(r => r.text()).then(t => process.stdout.write(t))"]);
        expect(Number(/rpcstack_volume_used_ratio\{volume="juno"\} ([0-9.]+)/.exec(metrics)?.[1])).toBeGreaterThan(0.95);
        expect(run("docker", ["logs", c("disk-watch")]).stdout).toMatch(/volume juno is \d+\.\d% full .*the gateway stops routing to its node/);
        // The node itself still answers: the disk, not the node, took it out.
        expect(run("docker", ["inspect", "--format", "{{.State.Running}}", c("juno")]).stdout.trim()).toBe("true");
      } finally {
        onVolume("rm -f /data/rpcstack-e2e-fill");
      }
      const toUp = await until(200, 60_000);
      console.log(`e2e: 200 ${toUp} ms after the fill was removed`);
    });

    it("docker inspect: RPC ports only on loopback, engine/metrics/health ports unpublished, indexer non-root and reading its script", () => {
      const published = (name: string) => JSON.parse(inspect(c(name), "{{json .HostConfig.PortBindings}}")) as Record<string, { HostIp: string; HostPort: string }[] | null>;
      for (const name of ["geth", "lighthouse", "juno", "indexer", "sync-health", "gateway"]) {
        for (const [port, bindings] of Object.entries(published(name))) {
          for (const b of bindings ?? []) expect(b.HostIp, `${name} ${port}`).toBe("127.0.0.1");
        }
      }
      const never: [string, string[]][] = [
        ["geth", ["8551/tcp", "6060/tcp"]],
        ["lighthouse", ["5052/tcp", "5054/tcp"]],
        ["juno", ["6061/tcp", "9090/tcp"]],
        ["sync-health", ["8080/tcp"]],
        ["gateway", ["8405/tcp"]],
      ];
      for (const [name, list] of never) for (const p of list) expect(published(name)[p], `${name} ${p}`).toBeUndefined();
      expect(Object.keys(published("geth")).sort()).toEqual(["30303/tcp", "30303/udp", "8545/tcp", "8546/tcp"]);
      expect(Object.keys(published("juno"))).toEqual(["6060/tcp"]);

      expect(must("docker", ["exec", c("indexer"), "id", "-u"])).toBe("1000");
      expect(must("docker", ["exec", c("indexer"), "head", "-1", "/indexer/indexer.sh"])).toBe("#!/bin/sh");
      expect(must("docker", ["exec", c("indexer"), "test", "-r", "/indexer/indexer.mjs", "-a", "-x", "/indexer/indexer.sh"])).toBe("");
      expect(must("docker", ["exec", c("sync-health"), "id", "-u"])).toBe("1000");
    });

    it("down (without -v) and up: the JWT secret, the chain volumes and the certificate survive, and the gateway relays again", async () => {
      const digest = (container: string, file: string) => createHash("sha256").update(must("docker", ["exec", container, "cat", file])).digest("hex");
      const before = {
        jwt: digest(c("geth"), "/jwt/jwt.hex"),
        nodekey: digest(c("geth"), "/root/.ethereum/geth/nodekey"),
        cert: digest(c("gateway"), "/certs/gateway.pem"),
        l2Head: Number(must("docker", ["exec", c("juno"), "cat", "/var/lib/juno/standin-head"])),
      };
      expect(must("docker", ["exec", c("geth"), "wc", "-c", "/jwt/jwt.hex"])).toMatch(/^64 /);
      for (const f of [...COMPOSE_FILES].reverse()) compose(f, "down");
      const volumes = must("docker", ["volume", "ls", "-q", "--filter", `name=${prefix}`]).split("\n").sort();
      expect(volumes).toEqual(
        ["gateway-certs", "gateway-keys", "gateway-run", "gateway-usage", "sepolia-geth", "sepolia-jwt", "sepolia-juno", "sepolia-lighthouse"].map((v) => `${prefix}rpcstack-${v}`).sort(),
      );
      // Same order, without waiting on every health check again: the relay below is what counts.
      for (const f of COMPOSE_FILES) compose(f, "up", "-d");
      expect(digest(c("geth"), "/jwt/jwt.hex")).toBe(before.jwt);
      expect(digest(c("geth"), "/root/.ethereum/geth/nodekey")).toBe(before.nodekey);
      expect(digest(c("gateway"), "/certs/gateway.pem")).toBe(before.cert);
      expect(Number(must("docker", ["exec", c("juno"), "cat", "/var/lib/juno/standin-head"]))).toBeGreaterThanOrEqual(before.l2Head);
      expect(run("docker", ["logs", c("jwt-init")]).stdout + run("docker", ["logs", c("cert-init")]).stdout).toMatch(/exists; keeping it/);
      await relaysAgain(clientFor("STRKS"), 120_000);
    }, 600_000);

    it("Pathfinder: the L2 file for l2.client pathfinder turns healthy as uid 1000 on its volume, beside the same L1 node", async () => {
      exportStack(join(dir, "Pulumi.e2e-pathfinder.yaml"), outPf, prefix, ["--publish", `pathfinder:9545=${ports.pfHttp}`]);
      must("docker-compose", ["-p", pfProject, "-f", "dc-l2.yaml", "up", "-d"], { cwd: outPf });
      await waitHealthy([c("pathfinder")], 240_000);
      expect(inspect(c("pathfinder"), "{{.Config.User}}")).toBe("1000:1000");
      expect(must("docker", ["exec", c("pathfinder"), "stat", "-c", "%u", "/usr/share/pathfinder/data/standin-head"])).toBe("1000");
      const r = run("npx", ["tsx", "readiness/cli.ts", "--l2", `http://127.0.0.1:${ports.pfHttp}/rpc/v0_9`, "--timeout-minutes", "1", "--interval-seconds", "1"], { cwd: ROOT });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      // The RPC port on loopback only; the monitor port (health) is not published.
      expect(JSON.parse(inspect(c("pathfinder"), "{{json .HostConfig.PortBindings}}"))).toEqual({ "9545/tcp": [{ HostIp: "127.0.0.1", HostPort: String(ports.pfHttp) }] });
      must("docker-compose", ["-p", pfProject, "-f", "dc-l2.yaml", "down", "-v"], { cwd: outPf });
    }, 400_000);
  });
}
