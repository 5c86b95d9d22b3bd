/**
 * `npm run export -- --stack testnet --out DIR`: writes dc-l1.yaml and dc-l2.yaml (and the
 * indexer files they mount) from the same specs `pulumi up` deploys.
 */
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config/index.js";
import { exportCompose } from "./compose.js";
import { readStackFile } from "./stackFile.js";

const ROOT = join(__dirname, "..");

export function runExport(argv: string[]): number {
  const { values } = parseArgs({ args: argv, options: { stack: { type: "string" }, out: { type: "string" } } });
  if (!values.stack || !values.out) {
    console.error("usage: npm run export -- --stack <local|testnet|mainnet> --out <dir>");
    return 2;
  }
  let files;
  try {
    const { entries } = readStackFile(ROOT, values.stack);
    // Compose files never carry secrets, so encrypted ones need not be read.
    files = exportCompose(loadConfig({ entries, withoutSecrets: true }));
  } catch (e) {
    console.error(e instanceof ConfigError ? e.message : `rpcstack export: ${(e as Error).message}`);
    return 1;
  }
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  for (const [name, text] of Object.entries(files.files)) {
    writeFileSync(join(out, name), text);
    console.log(`wrote ${join(out, name)}`);
  }
  for (const asset of files.assets) {
    mkdirSync(dirname(join(out, asset)), { recursive: true });
    copyFileSync(join(ROOT, asset), join(out, asset));
    console.log(`wrote ${join(out, asset)}`);
  }
  return 0;
}

if (require.main === module) process.exit(runExport(process.argv.slice(2)));
