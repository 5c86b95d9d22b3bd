/**
 * rpcstack-badges: the badge service the badges container runs.
 *   node server.js --port N [--host ADDR]
 * Projects from RPCSTACK_BADGE_PROJECTS (JSON), the signing key from RPCSTACK_BADGE_SIGNING_KEY.
 */
import { parseArgs } from "node:util";
import { BADGE_PATH } from "../gateway/badgeContract.js";
import { parseProjects } from "./issue.js";
import { createBadgeServer } from "./server.js";
import { readSigningKey } from "./token.js";

const USAGE = `usage: rpcstack-badges --port N [--host ADDR]
Issues badges (short-lived signed keys) to web pages of the projects' allowed origins: POST ${BADGE_PATH}.
  --port N      listen port
  --host ADDR   listen address (default 0.0.0.0)
  --help        this text
Environment: RPCSTACK_BADGE_PROJECTS (JSON list of projects), RPCSTACK_BADGE_SIGNING_KEY
(an EC P-256 private key, PKCS#8 PEM or its DER in base64).`;

export function main(argv: string[]): number {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { port: { type: "string" }, host: { type: "string" }, help: { type: "boolean" } } }));
  } catch (e) {
    console.error(`rpcstack-badges: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const port = Number(values.port);
  if (!values.port || !Number.isInteger(port) || port < 1 || port > 65535) {
    console.error(`rpcstack-badges: --port must be a port number (got "${values.port}")`);
    return 2;
  }
  let server;
  try {
    const projects = parseProjects(process.env.RPCSTACK_BADGE_PROJECTS);
    const keyText = process.env.RPCSTACK_BADGE_SIGNING_KEY;
    if (!keyText) throw new Error("RPCSTACK_BADGE_SIGNING_KEY is not set");
    server = createBadgeServer({ projects, key: readSigningKey(keyText) });
  } catch (e) {
    console.error(`rpcstack-badges: ${(e as Error).message}`);
    return 2;
  }
  const host = values.host ?? "0.0.0.0";
  server.listen(port, host, () => console.log(`rpcstack-badges: serving POST ${BADGE_PATH} on ${host}:${port}`));
  for (const sig of ["SIGTERM", "SIGINT"] as const) process.on(sig, () => server.close(() => process.exit(0)));
  return -1;
}

if (require.main === module) {
  const code = main(process.argv.slice(2));
  if (code >= 0) process.exit(code);
}
