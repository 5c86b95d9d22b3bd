/** Leaf certificates from the run's test CA (see test/globalSetup.ts). */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function caDir(): string {
  const dir = process.env.RPCSTACK_TEST_CA_DIR;
  if (!dir) throw new Error("RPCSTACK_TEST_CA_DIR is not set: test/globalSetup.ts did not run");
  return dir;
}

/** A PEM with the certificate and its key, valid for the given DNS names and 127.0.0.1. */
export function issueCert(names: readonly string[]): string {
  const ca = caDir();
  const work = mkdtempSync(join(tmpdir(), "rpcstack-leaf-"));
  try {
    const san = [...names.map((n) => `DNS:${n}`), "IP:127.0.0.1"].join(",");
    writeFileSync(join(work, "ext.cnf"), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
    execFileSync("openssl", ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", join(work, "leaf.key"), "-out", join(work, "leaf.csr"), "-subj", `/CN=${names[0]}`], { stdio: "pipe" });
    execFileSync("openssl", ["x509", "-req", "-in", join(work, "leaf.csr"), "-CA", join(ca, "ca.pem"), "-CAkey", join(ca, "ca.key"), "-set_serial", `0x${randomBytes(8).toString("hex")}`, "-out", join(work, "leaf.pem"), "-days", "1", "-extfile", join(work, "ext.cnf")], { stdio: "pipe" });
    return readFileSync(join(work, "leaf.pem"), "utf8") + readFileSync(join(work, "leaf.key"), "utf8");
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
