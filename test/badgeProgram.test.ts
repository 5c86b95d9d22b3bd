/**
 * Badges in the Pulumi program (mock engine), on the local stack: the signing key made once per
 * generation and kept secret, the badge service container, the gateway's public key file, and a
 * gateway configuration Debian's HAProxy accepts with the container's files.
 */
import { createPublicKey, createPrivateKey } from "node:crypto";
import { describe, expect, it } from "vitest";
import { readSigningKey } from "../badges/token.js";
import { runProgram, type ProgramRun } from "./harness.js";
import { checkContainerFiles } from "./support/haproxy.js";

const badges = (generation?: number) => ({
  ...(generation ? { signingKeyGeneration: generation } : {}),
  projects: [{ projectId: "webapp", chains: ["ETHDEV", "STRKDEV"], origins: ["http://localhost:5173"] }],
});
const CONTAINER = "docker:index/container:Container";
const COMMAND = "command:local:Command";
const env = (c: { inputs: Record<string, any> }) => Object.fromEntries((c.inputs.envs as string[]).map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
const upload = (c: { inputs: Record<string, any> }, file: string) => (c.inputs.uploads as { file: string; content: string }[]).find((u) => u.file === file)?.content;

async function run(config: Record<string, unknown> = { badges: badges() }): Promise<ProgramRun> {
  const r = await runProgram({ stack: "local", config });
  if (r.error) throw r.error;
  return r;
}

describe("badges in the program", () => {
  it("a signing key made by a command once per generation, its output a secret and never logged", async () => {
    const r = await run();
    const component = r.one("rpcstack:index:BadgeSigningKey");
    const made = r.one(COMMAND, "rpcstack-badge-key-generate");
    expect(made.parent).toBe(component.urn);
    expect(made.inputs.logging).toBe("none");
    expect(made.inputs.triggers).toEqual([1]);
    expect(made.additionalSecretOutputs).toContain("stdout");
    expect(r.outputs.badgeServerUrl).toMatch(/^https:\/\/localhost(:\d+)?\/badge$/);
    // A new generation is a new key: the command's trigger changes.
    const next = await run({ badges: badges(2) });
    expect(next.one(COMMAND, "rpcstack-badge-key-generate").inputs.triggers).toEqual([2]);
  });

  it("the badge service gets the private key as a secret; the gateway gets only its public half, in the clear", async () => {
    const r = await run();
    const svc = r.one(CONTAINER, "rpcstack-gateway-badges");
    const vars = env(svc);
    expect(svc.secretInputs).toContain("envs");
    const key = readSigningKey(vars.RPCSTACK_BADGE_SIGNING_KEY);
    expect(JSON.parse(vars.RPCSTACK_BADGE_PROJECTS)[0]).toMatchObject({ projectId: "webapp", chains: { ETHDEV: "ethdev", STRKDEV: "strkdev" } });
    expect(upload(svc, "/badges/server.js")).toMatch(/rpcstack-badges/);
    const gw = r.one(CONTAINER, "rpcstack-gateway-haproxy");
    const pub = upload(gw, "/usr/local/etc/haproxy/badge.pub.pem")!;
    expect(pub).toBe(key.publicKeyPem);
    expect(createPublicKey(pub).asymmetricKeyType).toBe("ec");
    expect(() => createPrivateKey(pub)).toThrow();
    // Nothing in the outputs or in any clear-text input holds the private key.
    const clear = JSON.stringify(r.resources.map((x) => Object.fromEntries(Object.entries(x.inputs).filter(([k]) => !x.secretInputs.some((p) => p === k || p.startsWith(`${k}.`))))));
    expect(clear).not.toContain(vars.RPCSTACK_BADGE_SIGNING_KEY);
    expect(JSON.stringify(r.outputs)).not.toContain(vars.RPCSTACK_BADGE_SIGNING_KEY);
  });

  it("Debian's HAProxy accepts the gateway container's files with badges", async () => {
    const r = await run();
    const gw = r.one(CONTAINER, "rpcstack-gateway-haproxy");
    const files = Object.fromEntries((gw.inputs.uploads as { file: string; content: string }[]).map((u) => [u.file, u.content]));
    expect(checkContainerFiles(files)).toContain("Configuration file is valid");
  });

  it("a stack without badges has neither the key nor the service", async () => {
    const r = await run({});
    expect(r.byType("rpcstack:index:BadgeSigningKey")).toHaveLength(0);
    expect(r.outputs).not.toHaveProperty("badgeServerUrl");
    expect(r.byType(CONTAINER).map((c) => c.inputs.name)).not.toContain("rpcstack-badges");
  });
});
