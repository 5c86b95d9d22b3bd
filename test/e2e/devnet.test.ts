/**
 * The default local stack (devnet: real geth --dev, real Starknet Devnet) on a real Docker
 * engine, from the package's own compose export: relays per chain and interface, starknet.js 10 and
 * starknet-py deploying an account and transferring through the gateway, badges from its badge service, and an operator's account changes made the compose way (a new export, then the
 * key sync run again) while a client per key calls the whole time. Every name carries a test
 * prefix; everything the test creates is removed in afterAll, also when it fails.
 *
 * Without a Docker daemon (or docker-compose) the file holds one test whose name says NOT RUN: it
 * fails where CI is set, and passes with a warning on a developer's machine.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RpcClient } from "../../client/index.js";
import { COMPOSE_FILES, projectName } from "../../export/compose.js";
import type { ProjectKey } from "../../gateway/build.js";
import { ROOT } from "../harness.js";
import { eventually } from "../support/http.js";
import { busy, Client } from "../support/keyClients.js";
import { freePort } from "../support/net.js";
import { gatewayClient, tlsFetch } from "./client.js";
import { exitedOk, exportStack, gatewayCa, upInOrder, type ComposeFile } from "./compose.js";
import { engineMissing, inspect, must, removeByPrefix, run } from "../../devtools/docker.js";
import { buildTestImages, type TestImages } from "../../devtools/images/build.js";
import { writeDevnetStackFile } from "./stackFiles.js";
import { describeNotRun } from "./notRun.js";
import { AMOUNT, predeployedAccounts, starknetJsJourney, starknetPyJourney } from "./starknetJourney.js";

const missing = engineMissing();

if (missing) {
  describeNotRun("devnet end-to-end test", missing);
} else {
  describe("end-to-end on a real Docker engine: the default local stack (devnet) from its compose export", () => {
    const prefix = `e2e${randomBytes(3).toString("hex")}-dev-`;
    const dir = mkdtempSync(join(tmpdir(), "rpcstack-e2e-devnet-"));
    const out = join(dir, "compose");
    const d = (name: string) => `${prefix}rpcstack-${name}`;
    const key = (name: string): ProjectKey => ({ name, key: randomBytes(32).toString("base64url") });
    const [steady, leaving, newcomer] = [key("steady"), key("leaving"), key("newcomer")];
    const badgeOrigin = "http://localhost:5173";
    const p: Record<string, number> = {};
    const dc = (file: ComposeFile, ...args: string[]) => must("docker-compose", ["-p", projectName(file, prefix), "-f", file, ...args], { cwd: out, timeoutMs: 600_000 });
    let images: TestImages;
    let gw: { url: string; ca: string };

    /**
     * The devnet stack file with `keys` and `quotas`, exported into `out`. Every client of the
     * test calls from the same address: the rate and the wrong-key limit are out of the way, so
     * a failed call can only be the change under test.
     */
    const exportWith = (keys: readonly ProjectKey[], quotas: readonly { name: string; calls: number; per: "day" | "month" }[]) => {
      writeDevnetStackFile(dir, images, {
        "rpcstack:badges": { projects: [{ projectId: "e2e-web", chains: ["ETHDEV"], origins: [badgeOrigin] }] },
      }, { rateLimitPerSecond: 1_000_000, wrongKeysPerMinute: 0, quotas });
      writeFileSync(join(dir, "keys.json"), JSON.stringify(keys), { mode: 0o600 });
      const publish = [`haproxy:443=127.0.0.1:${p.https}`, `haproxy:80=127.0.0.1:${p.http}`, `haproxy:9107=127.0.0.1:${p.usage}`, `geth:8545=${p.l1}`, `geth:8546=${p.l1ws}`, `starknet-devnet:5050=${p.l2}`].flatMap((x) => ["--publish", x]);
      exportStack(join(dir, "Pulumi.e2e-devnet.yaml"), out, prefix, ["--keys-file", join(dir, "keys.json"), ...publish]);
    };
    const clientFor = (chainIds: string, privateKey: string, retries = 2): RpcClient => gatewayClient(gw, chainIds, privateKey, retries);

    /** POST one eth_chainId with `k`: its status, body and RateLimit headers. */
    const post = async (k: ProjectKey) => {
      const res = await tlsFetch(gw.ca)(`${gw.url}/gateway/ethdev/rpc-http/${k.key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) }).catch((e) => {
        throw new Error(`POST with the key of ${k.name}: ${e}`);
      });
      return { status: res.status, body: await res.text(), limit: res.headers.get("ratelimit-limit"), remaining: res.headers.get("ratelimit-remaining"), retryAfter: res.headers.get("retry-after") };
    };

    beforeAll(async () => {
      images = buildTestImages((s) => console.log(`e2e images: ${s}`));
      for (const k of ["https", "http", "usage", "l1", "l1ws", "l2"]) p[k] = await freePort();
      // The badge service's signing key: compose reads it from the environment for every command on these files, `down` included.
      process.env.RPCSTACK_BADGE_SIGNING_KEY = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "der" }).toString("base64");
      exportWith([steady, leaving], [{ name: "steady", calls: 1_000_000, per: "day" }]);
      const t0 = Date.now();
      await upInOrder(dc, { "dc-l1.yaml": [d("geth")], "dc-l2.yaml": [d("starknet-devnet")], "dc-gateway.yaml": [d("sync-health"), d("gateway"), d("badges")] });
      gw = { url: `https://127.0.0.1:${p.https}`, ca: gatewayCa(d("gateway")) };
      // The gateway opens a route once its checks rise: allow it a few check intervals.
      const l2 = clientFor("STRKDEV", steady.key);
      while ((await l2.sendRelay({ method: "starknet_chainId", params: [] }).catch(() => undefined)) === undefined && Date.now() - t0 < 300_000) await new Promise((res) => setTimeout(res, 1000));
      console.log(`e2e devnet: healthy and relaying in ${Math.round((Date.now() - t0) / 1000)} s`);
    }, 900_000);

    afterAll(() => {
      for (const f of [...COMPOSE_FILES].reverse()) run("docker-compose", ["-p", projectName(f, prefix), "-f", f, "down", "-v", "--remove-orphans"], { cwd: out, timeoutMs: 300_000 });
      const remaining = removeByPrefix(prefix);
      delete process.env.RPCSTACK_BADGE_SIGNING_KEY;
      rmSync(dir, { recursive: true, force: true });
      expect(remaining, "the test leaves nothing behind").toEqual([]);
    }, 600_000);

    it("relays per chain and interface; a wrong key gets 401; its badge service issues badges the gateway container accepts", async () => {
      const r = run("npx", ["tsx", "readiness/cli.ts", "--l1", `http://127.0.0.1:${p.l1}`, "--l2", `http://127.0.0.1:${p.l2}/rpc`, "--timeout-minutes", "1", "--interval-seconds", "1"], { cwd: ROOT });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      const l1 = clientFor("ETHDEV", steady.key);
      const l2 = clientFor("STRKDEV", steady.key);
      expect(Number(await l1.sendRelay({ method: "eth_blockNumber", params: [] }))).toBeGreaterThan(0);
      expect(await l1.sendRelayWs({ method: "eth_chainId", params: [] })).toBe("0x539");
      expect(await l2.sendRelay({ method: "starknet_chainId", params: [] })).toBe("0x534e5f5345504f4c4941");
      expect(await l2.sendRelayWs({ method: "starknet_blockNumber", params: [] })).toBeGreaterThanOrEqual(0);
      const err = await clientFor("STRKDEV", `wrong-${steady.key.slice(6)}`, 0).sendRelay({ method: "starknet_chainId", params: [] }).catch((e) => e);
      expect(err.status).toBe(401);
      const asked = await tlsFetch(gw.ca)(`${gw.url}/badge`, { method: "POST", headers: { Origin: badgeOrigin, "Content-Type": "application/json" }, body: JSON.stringify({ projectId: "e2e-web", chainIds: ["ETHDEV"] }) });
      expect(asked.status).toBe(200);
      const { key: badge } = (await asked.json()) as { key: string };
      expect(await clientFor("ETHDEV", badge, 0).sendRelay({ method: "eth_chainId", params: [] })).toBe("0x539");
      expect((await clientFor("STRKDEV", badge, 0).sendRelay({ method: "starknet_chainId", params: [] }).catch((e) => e)).status).toBe(403);
      expect(must("docker", ["logs", d("badges")])).not.toContain(badge);
    }, 300_000);

    it("starknet.js 10 and starknet-py through the gateway, at the unversioned path and at /v0_10: an account deployed and a transfer that lands on the real Starknet Devnet", async () => {
      // Each run funds from a predeployed account of its own: their nonces never cross.
      const funders = await predeployedAccounts(`http://127.0.0.1:${p.l2}/rpc`);
      const path = `${gw.url}/gateway/strkdev/rpc-http/${steady.key}`;
      const runs = {
        "starknet.js at the unversioned path": await starknetJsJourney(path, gw.ca, funders[0]),
        "starknet.js at /v0_10": await starknetJsJourney(`${path}/v0_10`, gw.ca, funders[1]),
        "starknet-py at the unversioned path": starknetPyJourney(path, gw.ca, funders[2]),
        "starknet-py at /v0_10": starknetPyJourney(`${path}/v0_10`, gw.ca, funders[3]),
      };
      for (const [who, j] of Object.entries(runs)) {
        expect(j, who).toMatchObject({ chainId: "0x534e5f5345504f4c4941", deployed: { status: "SUCCEEDED" }, transfer: { status: "SUCCEEDED", inBlock: true } });
        expect(j.specVersion, who).toMatch(/^0\.10\./);
        expect(BigInt(j.deployed.classHash), who).toBeGreaterThan(0n);
        expect(j.blockNumber, who).toBeGreaterThanOrEqual(j.transfer.blockNumber);
        // The recipient gained exactly what was sent: the fee was the new account's.
        expect(BigInt(j.transfer.received), who).toBe(AMOUNT);
      }
      console.log(`e2e devnet: ${Object.entries(runs).map(([who, j]) => `${who}: account ${j.deployed.address} deployed, transfer in block ${j.transfer.blockNumber}`).join("; ")}`);
    }, 600_000);

    it("keys and quotas changed the compose way (a new export, the key sync run again) under load: no other key's call or socket fails, HAProxy's container stays", async () => {
      const haproxyBefore = inspect(d("gateway"), "{{.Id}} {{.State.StartedAt}}");
      const target = { httpsPort: p.https, chain: "ethdev" };
      const [s, l] = [new Client(target, steady), new Client(target, leaving)];
      /** A new export with `keys` and `quotas`, then the key sync run again as docs/accounts.md says; what it printed. */
      const change = async (keys: ProjectKey[], quotas: Parameters<typeof exportWith>[1]) => {
        exportWith(keys, quotas);
        dc("dc-gateway.yaml", "up", "-d", "--no-deps", "--force-recreate", "key-sync");
        await exitedOk(d("key-sync"));
        return run("docker", ["logs", d("key-sync")]).stdout;
      };
      try {
        await busy(20, s, l);

        // One step: the leaving key revoked, a newcomer added with a quota of 5 calls a day.
        const said = await change([steady, newcomer], [{ name: "steady", calls: 1_000_000, per: "day" }, { name: "newcomer", calls: 5, per: "day" }]);
        expect(said).toBe("key sync: 2 keys live: steady,newcomer\nkey sync: 2 quotas live: steady 1000000 day,newcomer 5 day\n");
        expect(said).not.toContain(newcomer.key);
        // In effect once the key sync has exited: the very next calls, no retry.
        const first = await post(newcomer);
        expect(first).toMatchObject({ status: 200, limit: "5", remaining: "4" });
        expect(await l.call()).toBe(401);
        await eventually("the revoked key's socket closed", async () => l.wsClose, (v) => v !== undefined);
        expect(l.wsClose).toEqual({ code: 1008, reason: "project key revoked" });
        for (let i = 0; i < 4; i++) expect((await post(newcomer)).status).toBe(200);
        const refused = await post(newcomer);
        expect(refused).toMatchObject({ status: 429, remaining: "0" });
        expect(JSON.parse(refused.body).error).toMatchObject({ code: -32005, message: expect.stringMatching(/^quota exceeded: 5 calls per day for this project key; it resets at \d{4}-\d\d-\d\dT00:00:00Z$/) });
        expect(Number(refused.retryAfter)).toBeGreaterThan(0);

        // A quota raised live applies at once: the newcomer's next call is served, the 5 spent stay counted.
        await change([steady, newcomer], [{ name: "steady", calls: 1_000_000, per: "day" }, { name: "newcomer", calls: 7, per: "day" }]);
        expect(await post(newcomer)).toMatchObject({ status: 200, limit: "7", remaining: "1" });
        await busy(Math.max(s.http.length, s.ws) + 20, s);
      } finally {
        await Promise.all([s.stop(), l.stop()]);
      }
      // The steady key called the whole time, over HTTP and one WebSocket: not one call failed, its socket was never closed.
      expect(s.failures()).toEqual({ http: 0, wsClosed: { code: 1000, reason: "" } });
      expect(s.http.length).toBeGreaterThan(40);
      console.log(`e2e devnet: the steady key made ${s.http.length} HTTP calls and ${s.ws} WebSocket calls through two key syncs, none failed`);
      expect(inspect(d("gateway"), "{{.Id}} {{.State.StartedAt}}"), "HAProxy's container is the same, never restarted").toBe(haproxyBefore);
    }, 300_000);

    it("a restart of HAProxy's container keeps the quota's spent calls: the usage keeper seeds the new process from its ledger", async () => {
      // The keeper has read the newcomer's 6 calls (5, then 1 after the quota went to 7; the 429 is no call).
      const today = new Date().toISOString().slice(0, 10);
      const spent = async () => {
        const r = await fetch(`http://127.0.0.1:${p.usage}/usage?since=${today}&key=newcomer`).then((x) => x.json()).catch(() => undefined);
        return (r?.rows ?? []).reduce((n: number, x: { calls: number }) => n + x.calls, 0);
      };
      await eventually("the keeper read the newcomer's calls", spent, (n) => n === 6, 30_000);
      const seeded = () => (run("docker", ["logs", d("usage")]).stdout.match(/quotas seeded with \d+ periods' calls/g) ?? []).length;
      const before = seeded();
      must("docker", ["restart", d("gateway")]);
      // Only once the keeper, restarted into HAProxy's new namespace, has seeded the new process does the quota hold what was spent.
      await eventually("the keeper seeded the new HAProxy process", async () => seeded(), (n) => n > before, 60_000);
      // A call while the node's check has not risen yet would spend a unit: the steady key asks first.
      await eventually("the gateway relays again", async () => (await post(steady)).status, (st) => st === 200, 60_000);
      expect(await post(newcomer)).toMatchObject({ status: 200, limit: "7", remaining: "0" });
      expect((await post(newcomer)).status).toBe(429);
      expect(run("docker", ["logs", d("usage")]).stdout + run("docker", ["logs", d("key-sync")]).stdout).not.toContain(newcomer.key);
    }, 180_000);
  });
}
