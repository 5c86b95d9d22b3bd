/**
 * How the smoke test trusts a gateway whose certificate is self-signed (a stack without a domain:
 * the local stack, or devnet on an ssh host): it reads the certificate (never the key beside it)
 * from the gateway container and passes it to Node as an extra CA, so the relays still check the
 * name and the chain instead of skipping verification.
 */
import { shellQuote } from "../services/shell.js";
import { sshCommand, type SshTarget } from "../hosts/preflight.js";

/** Prints the certificate blocks of the gateway's PEM bundle; the private key stays in the container. */
export function certificateReadCommand(container: string, certFile: string, ssh?: SshTarget): string {
  const read = ["docker", "exec", container, "sed", "-n", "/-----BEGIN CERTIFICATE-----/,/-----END CERTIFICATE-----/p", certFile];
  return ssh ? sshCommand(ssh, read, { stdin: false }) : read.map(shellQuote).join(" ");
}

/** Runs `run` (which reads stdin) with the certificate `read` prints trusted as a CA. */
export function withTrustedCertificate(read: string, run: string): string {
  return [
    "set -eu",
    'ca=$(mktemp)',
    'trap \'rm -f "$ca"\' EXIT',
    `${read} > "$ca"`,
    `grep -q 'BEGIN CERTIFICATE' "$ca" || { echo "rpcstack smoke: no certificate read from the gateway" >&2; exit 1; }`,
    `NODE_EXTRA_CA_CERTS="$ca" ${run}`,
  ].join("\n");
}
