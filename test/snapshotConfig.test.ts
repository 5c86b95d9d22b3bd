/** `l2.snapshot`: what an operator may write, what is refused and why, and what the stack deploys from it. */
import { describe, expect, it } from "vitest";
import { PUBLISHED_SNAPSHOTS, RESOURCES } from "../config/index.js";
import { TEST_PROJECT_KEYS } from "./harness.js";
import { loadRaw as load, problemsOf } from "./support/rawConfig.js";

type Raw = Record<string, unknown>;
const base = (l2: Raw, extra: Raw = {}): Raw => ({ network: "testnet", tier: "recommended", host: { kind: "local" }, projectKeys: TEST_PROJECT_KEYS, l2, ...extra });

describe("l2.snapshot", () => {
  it("is absent by default: the node syncs from genesis", () => {
    expect(load(base({})).l2.snapshot).toBeUndefined();
  });

  it("latest is the client's published snapshot for the stack's network, in the client's format", () => {
    const juno = load(base({ client: "juno", snapshot: { url: "latest" } })).l2.snapshot!;
    expect(juno).toMatchObject({ url: "https://juno-snapshots.nethermind.io/files/sepolia/latest", from: "latest", format: { kind: "tar.zst" } });
    const pf = load(base({ client: "pathfinder", snapshot: { url: "latest" } })).l2.snapshot!;
    expect(pf).toMatchObject({ url: PUBLISHED_SNAPSHOTS.pathfinder!.testnet!.url, format: { kind: "zst", file: "testnet-sepolia.sqlite" } });
  });

  it("an https URL is used as given, with its checksum and size; the unpacked size defaults to the resource table's", () => {
    const sha256 = "ab".repeat(32);
    const s = load(base({ snapshot: { url: "https://snapshots.example.com/juno.tar.zst", sha256, sizeBytes: 1234 } })).l2.snapshot!;
    expect(s).toMatchObject({ url: "https://snapshots.example.com/juno.tar.zst", from: "url", sha256, sizeBytes: 1234, unpackedGB: RESOURCES.testnet.juno.diskGB, unpackedFrom: "resource table" });
    expect(load(base({ snapshot: { url: "latest", unpackedGB: 70 } })).l2.snapshot).toMatchObject({ unpackedGB: 70, unpackedFrom: "l2.snapshot.unpackedGB" });
  });

  it("the shorthand `l2.snapshot: latest` (or a URL) is `{ url: ... }`; another kind of value is refused with the forms it accepts", () => {
    expect(load(base({ client: "juno", snapshot: "latest" })).l2.snapshot).toEqual(load(base({ client: "juno", snapshot: { url: "latest" } })).l2.snapshot);
    expect(load(base({ snapshot: "https://snapshots.example.com/juno.tar.zst" })).l2.snapshot).toMatchObject({ url: "https://snapshots.example.com/juno.tar.zst", from: "url" });
    expect(problemsOf(base({ snapshot: "newest" }))).toEqual([expect.stringMatching(/^rpcstack:l2\.snapshot\.url: must be "latest" or an https:\/\/ URL/)]);
    expect(problemsOf(base({ snapshot: 7 }))).toEqual(['rpcstack:l2.snapshot: must be "latest", an https:// URL, or { url, sha256, sizeBytes, unpackedGB } with url one of those']);
  });

  it.each([
    ["an http URL", { url: "http://snapshots.example.com/juno.tar.zst" }, /^rpcstack:l2\.snapshot\.url: must be "latest" or an https:\/\/ URL/],
    ["a URL with credentials", { url: "https://user:pw@snapshots.example.com/x" }, /^rpcstack:l2\.snapshot\.url: must be "latest" or an https:\/\/ URL \(without user:password@\)/],
    ["a word other than latest", { url: "newest" }, /^rpcstack:l2\.snapshot\.url: must be "latest" or an https:\/\/ URL/],
    ["no url", { sha256: "ab".repeat(32) }, /^rpcstack:l2\.snapshot\.url: is required/],
    ["a short checksum", { url: "latest", sha256: "abc" }, /^rpcstack:l2\.snapshot\.sha256: must be the archive's SHA-256: 64 lowercase hex digits/],
    ["an unknown key", { url: "latest", md5: "x" }, /^rpcstack:l2\.snapshot\.md5: is not a known key/],
  ])("%s is refused with a message naming the key", (_what, snapshot, message) => {
    expect(problemsOf(base({ snapshot }))).toEqual([expect.stringMatching(message)]);
  });

  it("is refused on devnet, where Starknet Devnet keeps its chain in memory", () => {
    const raw = { network: "devnet", host: { kind: "local" }, projectKeys: TEST_PROJECT_KEYS, l2: { snapshot: { url: "latest" } } };
    expect(problemsOf(raw)).toEqual([expect.stringMatching(/^rpcstack:l2\.snapshot: does not apply to network devnet: Starknet Devnet keeps its chain in memory/)]);
  });

  it("a restore bigger than the disk is refused before anything is deployed, naming the snapshot", () => {
    const p = problemsOf(base({ snapshot: { url: "latest", unpackedGB: 1500 } }));
    expect(p).toEqual([expect.stringMatching(/^rpcstack:tier: the nodes this stack deploys need \d+ GB of disk \(.*juno 1500 GB \(restored from a snapshot: l2\.snapshot\.unpackedGB\)/)]);
  });
});
