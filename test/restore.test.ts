/**
 * rpcstack-restore, bundled as the init container ships it and run by the pinned runtime's Node
 * release, against a local HTTPS publisher (devtools/snapshotServer.js) serving
 * generated .tar.zst and .zst archives of a stand-in database. The disk-full case writes to a
 * small tmpfs of its own (mounted as root, removed afterwards).
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleSource } from "../components/bundle.js";
import { RESTORE_RESULT_PREFIX, type RestoreResult } from "../volumes/restoreStatus.js";
import { nodeRuntime } from "../devtools/nodeRuntime.js";
import { issueCert } from "./support/tls.js";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createSnapshotServer } = require("../devtools/snapshotServer.js");

const work = mkdtempSync(join(tmpdir(), "rpcstack-restore-"));
const srv = join(work, "srv");
const program = join(work, "restore.js");
let node: string;
let base: string;
let server: { server: import("node:https").Server; requests: { method: string; path: string; range: string | null }[] };

/** The stand-in database: a few files in a folder, one of them large enough to be cut halfway. */
function standInDb(dir: string): Record<string, string> {
  mkdirSync(join(dir, "sub"), { recursive: true });
  writeFileSync(join(dir, "CURRENT"), "MANIFEST-000001\n");
  writeFileSync(join(dir, "standin-head"), "424242");
  // Compressible but not trivially: half random, half repeated.
  writeFileSync(join(dir, "000001.sst"), Buffer.concat([randomBytes(3 << 20), Buffer.alloc(3 << 20, 7)]));
  writeFileSync(join(dir, "sub", "OPTIONS"), "x".repeat(1000));
  return digests(dir);
}

/** Every file under `dir` (relative path -> SHA-256). */
function digests(dir: string, prefix = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    const rel = prefix ? `${prefix}/${name}` : name;
    if (statSync(join(dir, rel)).isDirectory()) Object.assign(out, digests(dir, rel));
    else out[rel] = createHash("sha256").update(readFileSync(join(dir, rel))).digest("hex");
  }
  return out;
}

const zstd = (input: Buffer) => execFileSync("zstd", ["-q", "-3", "-c"], { input, maxBuffer: 1 << 30 });
const tarOf = (dir: string, endMarker = true) => {
  const tar = execFileSync("tar", ["-C", dir, "-cf", "-", "."], { maxBuffer: 1 << 30 });
  // GNU tar ends with two zero blocks and pads to 10 KiB: strip all trailing zero blocks to cut the marker.
  if (endMarker) return tar;
  let end = tar.length;
  while (end >= 512 && tar.subarray(end - 512, end).every((b) => b === 0)) end -= 512;
  return tar.subarray(0, end);
};

let dbDigests: Record<string, string>;
let archive: Buffer;

interface Run {
  readonly code: number | null;
  readonly out: string;
  readonly result?: RestoreResult;
}

function runRestore(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(node, [program, ...args], { env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = out.split("\n").find((l) => l.startsWith(RESTORE_RESULT_PREFIX));
      resolve({ code, out, result: line ? JSON.parse(line.slice(RESTORE_RESULT_PREFIX.length)) : undefined });
    });
  });
}

const volume = () => {
  const dir = mkdtempSync(join(work, "volume-"));
  return dir;
};
const restoreArgs = (dest: string, path: string, extra: string[] = []) => ["--url", `${base}${path}`, "--dest", dest, "--format", "tar.zst", "--need-bytes", "1000", "--progress-seconds", "0.2", ...extra];
const requestsFor = (path: string) => server.requests.filter((r) => r.path === path);

beforeAll(async () => {
  node = nodeRuntime();
  writeFileSync(program, bundleSource("restore/restoreMain.ts"));
  mkdirSync(srv);
  const db = join(work, "db");
  dbDigests = standInDb(db);
  archive = zstd(tarOf(db));
  writeFileSync(join(srv, "db.tar.zst"), archive);
  // A corrupt copy: bytes flipped in the middle of the zstd stream.
  const corrupt = Buffer.from(archive);
  for (let i = 0; i < 64; i++) corrupt[Math.floor(corrupt.length / 2) + i] ^= 0xff;
  writeFileSync(join(srv, "corrupt.tar.zst"), corrupt);
  // Served whole, but only the first 60% of the archive: the publisher's file itself is cut.
  writeFileSync(join(srv, "truncated.tar.zst"), archive.subarray(0, Math.floor(archive.length * 0.6)));
  // A valid zstd stream of a tar that stops at a file boundary, without the end-of-archive blocks.
  writeFileSync(join(srv, "noend.tar.zst"), zstd(tarOf(db, false)));
  writeFileSync(join(srv, "mainnet.sqlite.zst"), zstd(Buffer.concat([Buffer.from("SQLite format 3\0"), randomBytes(200_000)])));
  // GNU tar keeps a symlink's absolute target; node-tar notes that it strips the leading "/".
  const linked = join(work, "linked");
  mkdirSync(linked);
  writeFileSync(join(linked, "CURRENT"), "MANIFEST-000002\n");
  execFileSync("ln", ["-s", "/var/lib/juno/CURRENT", join(linked, "LINK")]);
  writeFileSync(join(srv, "linked.tar.zst"), zstd(tarOf(linked)));
  writeFileSync(join(srv, "big.tar.zst"), zstd(execFileSync("tar", ["-C", db, "-cf", "-", "000001.sst"], { maxBuffer: 1 << 30 })));
  server = createSnapshotServer({ dir: srv, cert: issueCert(["localhost"]), rate: 4 << 20 });
  await new Promise<void>((r) => server.server.listen(0, "127.0.0.1", r));
  base = `https://localhost:${(server.server.address() as AddressInfo).port}`;
}, 600_000);

afterAll(async () => {
  if (server) await new Promise((r) => server.server.close(r));
  rmSync(work, { recursive: true, force: true });
});

describe("rpcstack-restore", () => {
  it("restores a .tar.zst into an empty volume: the files are the database's, nothing of the restore is left, progress was logged", async () => {
    const dest = volume();
    const r = await runRestore(restoreArgs(dest, "/slow/db.tar.zst"));
    expect(r.code, r.out).toBe(0);
    expect(r.result).toMatchObject({ outcome: "restored", bytes: archive.length, resumes: 0, restarts: 0 });
    expect(digests(dest)).toEqual(dbDigests);
    expect(readdirSync(dest)).not.toContain(".rpcstack-restore");
    expect(r.out).toMatch(/rpcstack-restore: \d+\.\d MB of \d+\.\d MB \(\d+\.\d%\), \d+(\.\d)? [kM]B\/s, about \d+s left; /);
    expect(r.out).toMatch(/rpcstack-restore: restored \d+\.\d MB from localhost:\d+\/slow\/db\.tar\.zst \(\d+\.\d MB written\) in \d+s/);
  });

  it("a download cut halfway resumes with a range request where the server allows it", async () => {
    const dest = volume();
    const r = await runRestore(restoreArgs(dest, "/cut/db.tar.zst"));
    expect(r.code, r.out).toBe(0);
    expect(r.result).toMatchObject({ outcome: "restored", resumes: 1, restarts: 0 });
    const gets = requestsFor("/cut/db.tar.zst");
    expect(gets.map((g) => g.range)).toEqual([null, expect.stringMatching(/^bytes=[1-9]\d*-$/)]);
    // Where the cut connection stopped (the server cut at half; bytes in flight are lost with it).
    expect(Number(/bytes=(\d+)-/.exec(gets[1].range!)![1])).toBeLessThanOrEqual(Math.floor(archive.length / 2));
    expect(r.out).toMatch(/the connection broke after .*; resuming at byte \d+ in 1 s \(retry 1 of 5\)/);
    expect(digests(dest)).toEqual(dbDigests);
  });

  it("a download that stalls (the connection open, nothing sent) counts as dropped and resumes", async () => {
    const dest = volume();
    const r = await runRestore(restoreArgs(dest, "/stall/db.tar.zst", ["--stall-seconds", "1"]));
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/the download stalled \(no data for 1 s\) after .*; resuming at byte [1-9]\d* in 1 s \(retry 1 of 5\)/);
    expect(requestsFor("/stall/db.tar.zst").map((g) => g.range)).toEqual([null, expect.stringMatching(/^bytes=[1-9]\d*-$/)]);
    expect(digests(dest)).toEqual(dbDigests);
  });

  it("where the server cannot resume, it starts over cleanly and still restores the database", async () => {
    const dest = volume();
    const r = await runRestore(restoreArgs(dest, "/cutnoranges/db.tar.zst"));
    expect(r.code, r.out).toBe(0);
    expect(r.result).toMatchObject({ outcome: "restored", restarts: 1 });
    expect(r.out).toMatch(/the server does not resume downloads \(it answered 200, not 206, to a range request\); starting again from the first byte/);
    expect(digests(dest)).toEqual(dbDigests);
  });

  it.each([
    ["a 404", "/plain/nothing-here.tar.zst", [], /^rpcstack-restore: FAILED: localhost:\d+\/plain\/nothing-here\.tar\.zst answered HTTP 404 Not Found\. The volume is empty again/m],
    ["a corrupt archive", "/plain/corrupt.tar.zst", [], /^rpcstack-restore: FAILED: corrupt: /m],
    ["a truncated archive", "/plain/truncated.tar.zst", [], /^rpcstack-restore: FAILED: truncated: /m],
    ["a tar without its end marker", "/plain/noend.tar.zst", [], /^rpcstack-restore: FAILED: truncated: the tar archive has no end-of-archive marker/m],
    ["a checksum that does not match", "/plain/db.tar.zst", ["--sha256", "0".repeat(64)], /^rpcstack-restore: FAILED: corrupt: the archive's SHA-256 is [0-9a-f]{64}, rpcstack:l2\.snapshot\.sha256 says 0{64}/m],
    ["another size than expected", "/plain/db.tar.zst", ["--size-bytes", "12345"], /^rpcstack-restore: FAILED: the server offers \d+ bytes but rpcstack:l2\.snapshot\.sizeBytes says 12345/m],
  ])("%s fails with the cause and leaves the volume empty", async (_what, path, extra, message) => {
    const dest = volume();
    const r = await runRestore(restoreArgs(dest, path, extra as string[]));
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(message);
    expect(r.result?.outcome).toBe("failed");
    expect(readdirSync(dest)).toEqual([]);
  });

  it("an archive node-tar only has a note about (an absolute link target) restores, with the note logged", async () => {
    const dest = volume();
    const r = await runRestore(restoreArgs(dest, "/plain/linked.tar.zst"));
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/rpcstack-restore: note: stripping \/ from absolute linkpath/);
    expect(readdirSync(dest).sort()).toEqual(["CURRENT", "LINK"]);
  });

  it("the right checksum and size pass", async () => {
    const dest = volume();
    const sha = createHash("sha256").update(archive).digest("hex");
    const r = await runRestore(restoreArgs(dest, "/plain/db.tar.zst", ["--sha256", sha, "--size-bytes", String(archive.length)]));
    expect(r.code, r.out).toBe(0);
    expect(digests(dest)).toEqual(dbDigests);
  });

  it("a disk that fills while unpacking fails as disk full and leaves the volume empty", async () => {
    const dest = volume();
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", dest]);
    try {
      const r = await runRestore(restoreArgs(dest, "/plain/big.tar.zst"));
      expect(r.code, r.out).toBe(1);
      expect(r.out).toMatch(/^rpcstack-restore: FAILED: disk full: no space left on the volume while writing the database\./m);
      expect(readdirSync(dest)).toEqual([]);
    } finally {
      execFileSync("umount", [dest]);
    }
  });

  it("a snapshot that does not fit is refused before any byte is downloaded", async () => {
    const dest = volume();
    const before = requestsFor("/plain/db.tar.zst").length;
    const r = await runRestore(restoreArgs(dest, "/plain/db.tar.zst").map((a) => (a === "1000" ? String(1e15) : a)));
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/^rpcstack-restore: FAILED: does not fit: the restored database needs 1000000\.0 GB and the volume has [\d.]+ [GMk]?B free; refused before downloading anything/m);
    expect(requestsFor("/plain/db.tar.zst").length).toBe(before);
    expect(readdirSync(dest)).toEqual([]);
  });

  it("a volume that already holds data is left byte-identical, and nothing is downloaded", async () => {
    const dest = volume();
    writeFileSync(join(dest, "CURRENT"), "MANIFEST-000009\n");
    mkdirSync(join(dest, "wal"));
    writeFileSync(join(dest, "wal", "000010.log"), randomBytes(10_000));
    const before = digests(dest);
    const mtime = statSync(join(dest, "CURRENT")).mtimeMs;
    const gets = server.requests.length;
    const r = await runRestore(restoreArgs(dest, "/plain/db.tar.zst"));
    expect(r.code, r.out).toBe(0);
    expect(r.result).toEqual({ outcome: "kept", entries: 2 });
    expect(r.out).toMatch(/holds a database \(2 entries\): left as it is/);
    expect(digests(dest)).toEqual(before);
    expect(statSync(join(dest, "CURRENT")).mtimeMs).toBe(mtime);
    expect(server.requests.length).toBe(gets);
  });

  it("an interrupted earlier restore (its staging folder, never verified) is removed and the restore starts again", async () => {
    const dest = volume();
    mkdirSync(join(dest, ".rpcstack-restore", "db"), { recursive: true });
    writeFileSync(join(dest, ".rpcstack-restore", "db", "half.sst"), "half");
    const r = await runRestore(restoreArgs(dest, "/plain/db.tar.zst"));
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/found an interrupted restore \(never verified\); removing it/);
    expect(digests(dest)).toEqual(dbDigests);
  });

  it("Pathfinder's format: one zstd file written under its database name, owned by the node's user", async () => {
    const dest = volume();
    const r = await runRestore(["--url", `${base}/plain/mainnet.sqlite.zst`, "--dest", dest, "--format", "zst:mainnet.sqlite", "--need-bytes", "1", "--owner", "1000:1000"]);
    expect(r.code, r.out).toBe(0);
    expect(readdirSync(dest)).toEqual(["mainnet.sqlite"]);
    expect(readFileSync(join(dest, "mainnet.sqlite")).subarray(0, 16).toString()).toBe("SQLite format 3\0");
    expect([statSync(join(dest, "mainnet.sqlite")).uid, statSync(dest).uid]).toEqual([1000, 1000]);
  });

  it("answers --help with exit 0 and a bad argument with a message and exit 2", async () => {
    const help = await runRestore(["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^usage: rpcstack-restore --url URL/);
    const bad = await runRestore(["--url", "http://example.com/x", "--dest", "/tmp", "--format", "tar.zst", "--need-bytes", "1"]);
    expect(bad.code).toBe(2);
    expect(bad.out).toMatch(/^rpcstack-restore: --url must be an https:\/\/ URL \(got "http:\/\/example\.com\/x"\)/);
    const fmt = await runRestore(["--url", "https://example.com/x", "--dest", "/tmp", "--format", "zip", "--need-bytes", "1"]);
    expect(fmt.out).toMatch(/--format must be tar\.zst or zst:FILE \(got "zip"\)/);
  });
});
