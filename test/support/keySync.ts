/** Runs the key sync (gateway/keys/sync.sh) as its container would, with the environment given. */
import { execFile } from "node:child_process";
import { join } from "node:path";

export function runKeySync(env: Readonly<Record<string, string>>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile("bash", [join(__dirname, "../../gateway/keys/sync.sh")], { env: { ...process.env, ...env } }, (e, stdout, stderr) =>
      resolve({ code: e ? Number(e.code ?? 1) : 0, out: stdout + stderr }),
    );
    child.stdin?.end();
  });
}
