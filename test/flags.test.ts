/**
 * Every flag (and Pathfinder environment variable) the service specs pass exists in that
 * client's own flag list at the pinned release. The lists are small fixtures extracted from the
 * upstream source at the pinned tag (test/fixtures/flags/<client>.json names repository, paths
 * and tag); bumping a pin without its fixture fails here, and so does a flag the release lacks.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IMAGES, loadConfig, parseImageRef, type StackSettings } from "../config/index.js";
import { l1Services } from "../services/l1.js";
import { l2Node } from "../services/l2.js";
import type { ServiceSpec } from "../services/types.js";
import { TEST_PROJECT_KEYS, encodeConfigValue } from "./harness.js";

interface FlagFixture {
  readonly client: string;
  readonly image: string;
  /** The revision the names were read at: the release tag, or a commit where the tag was not to be had. */
  readonly tag: string;
  /** The image tag this list is checked for. */
  readonly pin: string;
  /** Why `tag` is not `pin`, when it is not. */
  readonly note?: string;
  readonly repository: string;
  readonly paths: readonly string[];
  readonly extracted: string;
  readonly kind: "flags" | "env";
  readonly names: readonly string[];
}

const fixture = (file: string): FlagFixture => JSON.parse(readFileSync(join(__dirname, "fixtures", "flags", file), "utf8"));

/** `--http.addr=0.0.0.0` and `--ws` give `http.addr` and `ws`; values on their own are skipped. */
export function flagNames(args: readonly string[]): string[] {
  return args.filter((a) => a.startsWith("--")).map((a) => a.slice(2).split("=")[0]);
}

/** What a spec hands its client: flags (Lighthouse's after the `bn` subcommand) or PATHFINDER_* variables. */
function passed(client: string, spec: ServiceSpec): string[] {
  if (client === "pathfinder") return Object.keys(spec.environment).filter((k) => k.startsWith("PATHFINDER_"));
  if (client === "lighthouse") {
    expect(spec.command.slice(0, 2)).toEqual(["lighthouse", "bn"]);
    return flagNames(spec.command.slice(2));
  }
  return flagNames(spec.command);
}

function settings(network: string, l2Client: string): StackSettings {
  // The devnet trial has no tier and picks its own L2 node.
  const raw = network === "devnet" ? { network, host: { kind: "local" } } : { network, tier: "recommended", host: { kind: "local", diskGB: 4000 }, l2: { client: l2Client } };
  const entries = Object.fromEntries(
    Object.entries({ ...raw, projectKeys: TEST_PROJECT_KEYS }).map(([k, v]) => [
      `rpcstack:${k}`,
      encodeConfigValue(v),
    ]),
  );
  return loadConfig({ entries });
}

/** The specs of every client, on every network the package serves (geth also in dev mode). */
function specsOf(client: string): ServiceSpec[] {
  const networks = client === "geth" ? ["mainnet", "testnet", "devnet"] : ["mainnet", "testnet"];
  return networks.flatMap((network) => {
    if (client === "geth" || client === "lighthouse") {
      return l1Services(settings(network, "juno")).services.filter((s) => s.name === client);
    }
    return [l2Node(settings(network, client))];
  });
}

const CLIENTS = [
  ["geth", IMAGES.geth],
  ["lighthouse", IMAGES.lighthouse],
  ["juno", IMAGES.juno],
  ["pathfinder", IMAGES.pathfinder],
] as const;

describe.each(CLIENTS)("%s flags against its flag list at the pinned release", (client, pinned) => {
  const f = fixture(`${client}.json`);

  it("the fixture is for the pinned tag, from a named source", () => {
    const ref = parseImageRef(pinned);
    expect(`${f.image}:${f.pin}`).toBe(`${ref.repository}:${ref.tag}`);
    // A list read anywhere but at the pinned tag says why, so the pin table can flag it.
    if (f.tag !== f.pin) expect((f.note ?? "").length).toBeGreaterThan(40);
    expect(f.repository).toMatch(/^[\w.-]+\/[\w.-]+$/);
    expect(f.paths.length).toBeGreaterThan(0);
    expect(f.names.length).toBeGreaterThan(10);
  });

  it("every flag the specs pass exists in that release", () => {
    const specs = specsOf(client);
    expect(specs.length).toBe(client === "geth" ? 3 : 2);
    for (const spec of specs) {
      const names = passed(client, spec);
      expect(names.length).toBeGreaterThan(3);
      const missing = names.filter((n) => !f.names.includes(n));
      expect(missing, `${client} ${f.tag} (${f.repository}) has no ${missing.join(", ")}`).toEqual([]);
    }
  });
});

describe("Juno's poll flag rename, as the releases show it", () => {
  it("the last v0.15 release has --pending-poll-interval; the pinned release has only --preconfirmed-poll-interval", () => {
    const old = fixture("juno-v0.15.json");
    const pinned = fixture("juno.json");
    expect(old.pin).toMatch(/^v0\.15\.\d+$/);
    expect(old.names).toContain("pending-poll-interval");
    expect(pinned.names).not.toContain("pending-poll-interval");
    expect(pinned.names).toContain("preconfirmed-poll-interval");
  });

  it("a flag the pinned release lacks is reported by name", () => {
    const spec = specsOf("juno")[0];
    const withOld = { ...spec, command: [...spec.command, "--pending-poll-interval", "3s"] };
    const names = passed("juno", withOld).filter((n) => !fixture("juno.json").names.includes(n));
    expect(names).toEqual(["pending-poll-interval"]);
  });
});
