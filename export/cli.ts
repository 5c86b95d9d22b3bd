/**
 * `npm run export -- --stack testnet --out DIR`: writes dc-l1.yaml, dc-l2.yaml and
 * dc-gateway.yaml (and the files they mount) from the same specs `pulumi up` deploys.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { bundleSource } from "../components/bundle.js";
import { ConfigError, loadConfig, type StackSettings } from "../config/index.js";
import { OPEN_FILES_SCRIPT, fitConnections, parseOpenFiles } from "../hosts/openFiles.js";
import { reportEntries } from "../hosts/preflight.js";
import { exportCompose, type ExportOptions } from "./compose.js";
import { readSigningKey } from "../badges/token.js";
import { systemReason } from "../kit/errors.js";
import { FileProblem, readFlagFile, readStackFile, readStackFilePath } from "./stackFile.js";

const ROOT = join(__dirname, "..");

export const USAGE = `usage: npm run export -- (--stack <local|testnet|mainnet> | --stack-file <Pulumi.NAME.yaml>) --out <dir> [options]
  --keys-file PATH        project keys, JSON like projectKeys: [{"name":"team","key":"<32+ chars>"}]
                          (or the environment variable RPCSTACK_PROJECT_KEYS); without them
                          dc-gateway.yaml is not written. The key map is written with mode 0600.
  --badge-key-file PATH   with rpcstack:badges: the badge signing key (EC P-256, PKCS#8 PEM or its DER
                          in base64), or the environment variable RPCSTACK_BADGE_SIGNING_KEY; the
                          gateway gets its public half, the badge service reads the key from
                          RPCSTACK_BADGE_SIGNING_KEY when compose runs
  --name-prefix P         put P before every container, network and volume name
  --publish S:PORT[/tcp|udp]=[ADDR:]HOSTPORT
                          publish service S's container PORT on HOSTPORT (and ADDR) instead;
                          repeatable, e.g. --publish haproxy:443=127.0.0.1:8443
  --help                  this text
Start the files in order: dc-l1.yaml, dc-l2.yaml, dc-gateway.yaml (see the header of each).`;

class UsageError extends Error {}

function parsePublish(specs: readonly string[]): NonNullable<ExportOptions["publish"]> {
  const out: Record<string, { address?: string; port: number }> = {};
  for (const s of specs) {
    const m = /^([a-z0-9-]+):(\d+)(?:\/(tcp|udp))?=(?:([0-9.]+|\[[0-9a-fA-F:]+\]):)?(\d+)$/.exec(s);
    if (!m || Number(m[5]) < 1 || Number(m[5]) > 65535) throw new UsageError(`--publish ${s}: expected SERVICE:PORT[/tcp|udp]=[ADDR:]HOSTPORT`);
    out[`${m[1]}:${m[2]}/${m[3] ?? "tcp"}`] = { address: m[4]?.replace(/^\[|\]$/g, ""), port: Number(m[5]) };
  }
  return out;
}

/**
 * The project keys' JSON from a file or the environment, for the stack's own config check (as
 * `pulumi config set --secret projectKeys` would be); errors never echo a key.
 */
function readKeysText(file: string | undefined): string | undefined {
  const text = file !== undefined ? readFlagFile("--keys-file", file) : process.env.RPCSTACK_PROJECT_KEYS;
  if (text === undefined || !text.trim()) return undefined;
  try {
    JSON.parse(text);
  } catch {
    throw new Error(`${file ?? "RPCSTACK_PROJECT_KEYS"} is not JSON (expected [{"name":"...","key":"..."}])`);
  }
  return text;
}

/**
 * A `local` stack runs on this machine's Docker daemon, as `pulumi up` checks it: the gateway's
 * maxConnections fitted to (unset) or checked against (set) what the daemon lets a container open.
 */
function fitThisMachine(settings: StackSettings): StackSettings {
  if (settings.host.kind !== "local") return settings;
  const report = execFileSync("/bin/sh", ["-c", OPEN_FILES_SCRIPT], { encoding: "utf8" });
  const fit = fitConnections(settings.gateway, parseOpenFiles(reportEntries(report)), "this machine");
  if ("problem" in fit) throw new Error(fit.problem);
  if (fit.note) console.log(fit.note);
  return { ...settings, gateway: { ...settings.gateway, maxConnections: fit.maxConnections } };
}

export function runExport(argv: string[]): number {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        stack: { type: "string" },
        "stack-file": { type: "string" },
        out: { type: "string" },
        "keys-file": { type: "string" },
        "badge-key-file": { type: "string" },
        "name-prefix": { type: "string" },
        publish: { type: "string", multiple: true },
        help: { type: "boolean" },
      },
    }));
  } catch (e) {
    const unknown = /Unknown option '([^']+)'/.exec((e as Error).message);
    console.error(`rpcstack export: ${unknown ? `unknown option ${unknown[1]}` : (e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if ((!values.stack === !values["stack-file"]) || !values.out) {
    console.error(`rpcstack export: give --out and one of --stack or --stack-file\n${USAGE}`);
    return 2;
  }
  let out;
  try {
    const prefix = values["name-prefix"];
    if (prefix !== undefined && !/^[a-z0-9][a-z0-9_.-]*$/.test(prefix)) throw new UsageError(`--name-prefix ${prefix}: use lowercase letters, digits, '_', '.' and '-'`);
    const publish = parsePublish(values.publish ?? []);
    const { entries } = values.stack ? readStackFile(ROOT, values.stack) : readStackFilePath(values["stack-file"]!);
    // Compose files never carry secrets, so encrypted ones need not be read; keys given here are
    // checked with the rest of the config, in one pass.
    const keys = readKeysText(values["keys-file"]);
    const settings = keys === undefined
      ? loadConfig({ entries, withoutSecrets: true })
      : loadConfig({ entries: { ...entries, "rpcstack:projectKeys": keys }, isSecret: (k) => (k === "projectKeys" ? true : undefined), withoutSecrets: true });
    const projectKeys = keys === undefined ? undefined : [...settings.projectKeys];
    const badgeKey = values["badge-key-file"] !== undefined ? readFlagFile("--badge-key-file", values["badge-key-file"]) : process.env.RPCSTACK_BADGE_SIGNING_KEY;
    const badgePublicKey = badgeKey?.trim() ? readSigningKey(badgeKey).publicKeyPem : undefined;
    out = exportCompose(fitThisMachine(settings), { projectKeys, badgePublicKey, namePrefix: prefix, publish });
  } catch (e) {
    if (e instanceof UsageError || e instanceof FileProblem) {
      console.error(`rpcstack export: ${e.message}${e instanceof UsageError ? `\n${USAGE}` : ""}`);
      return 2;
    }
    console.error(e instanceof ConfigError ? e.message : `rpcstack export: ${(e as Error).message}`);
    return 1;
  }
  const dir = resolve(values.out);
  const write = (path: string, mode: number, put: (target: string) => void) => {
    const target = join(dir, path);
    try {
      mkdirSync(dirname(target), { recursive: true });
      put(target);
      // Explicit modes: an operator's umask must not hide the scripts from the containers' users.
      chmodSync(target, mode);
    } catch (e) {
      throw new FileProblem(`cannot write ${target} (--out ${values.out}): ${systemReason(e)}`);
    }
    console.log(`wrote ${target}`);
  };
  try {
    writeAll(out, write);
  } catch (e) {
    if (!(e instanceof FileProblem)) throw e;
    console.error(`rpcstack export: ${e.message}`);
    return 1;
  }
  for (const [name, why] of Object.entries(out.skipped)) console.log(`not written: ${name}: ${why}`);
  return 0;
}

/** The compose files, then every file they mount, through `write`. */
function writeAll(out: ReturnType<typeof exportCompose>, write: (path: string, mode: number, put: (target: string) => void) => void): void {
  for (const [name, text] of Object.entries(out.files)) write(name, 0o644, (t) => writeFileSync(t, text));
  for (const f of out.mounted) {
    const from = f.from;
    write(f.path, f.mode, (t) =>
      "copy" in from ? copyFileSync(join(ROOT, from.copy), t) : writeFileSync(t, "bundle" in from ? bundleSource(from.bundle) : from.text, { mode: f.mode }),
    );
  }
}

if (require.main === module) process.exit(runExport(process.argv.slice(2)));
