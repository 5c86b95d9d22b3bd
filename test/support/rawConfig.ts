/**
 * A stack's config from plain values, as `pulumi config` hands it to the program (keys without the
 * `rpcstack:` prefix, values encoded as the stack file holds them), and the problems it is refused with.
 */
import { expect } from "vitest";
import { ConfigError, loadConfig, type RpcStackConfig } from "../../config/index.js";
import { encodeConfigValue } from "../harness.js";

export type Raw = Record<string, unknown>;
export const SECRET_KEYS: ReadonlySet<string> = new Set(["projectKeys", "sshPrivateKey"]);

export function loadRaw(raw: Raw, secrets: ReadonlySet<string> = SECRET_KEYS): RpcStackConfig {
  const entries = Object.fromEntries(Object.entries(raw).map(([k, v]) => [`rpcstack:${k}`, encodeConfigValue(v)]));
  return loadConfig({ entries, isSecret: (k) => secrets.has(k) });
}

/** The problems `raw` is refused with; the test fails when it is accepted. */
export function problemsOf(raw: Raw, secrets?: ReadonlySet<string>): string[] {
  try {
    loadRaw(raw, secrets);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return [...(e as ConfigError).problems];
  }
  throw new Error("config was accepted");
}
