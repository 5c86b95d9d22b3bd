/**
 * A throwaway certificate authority for the real-TLS tests, made once per run. Workers start
 * after this, so NODE_EXTRA_CA_CERTS makes every client (fetch, https, ws, ethers) trust it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { haproxyBinary } from "../devtools/haproxy.js";

export default function setup() {
  // The gateway's HAProxy, unpacked once here rather than by several test workers at once.
  haproxyBinary();
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-test-ca-"));
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", join(dir, "ca.key"), "-out", join(dir, "ca.pem"), "-days", "2", "-subj", "/CN=rpcstack test CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ], { stdio: "pipe" });
  process.env.RPCSTACK_TEST_CA_DIR = dir;
  process.env.NODE_EXTRA_CA_CERTS = join(dir, "ca.pem");
  return () => rmSync(dir, { recursive: true, force: true });
}
