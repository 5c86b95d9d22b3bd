/** A stack configuration that cannot be deployed: one line per problem, each naming its full key. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(
      `Invalid rpcstack stack configuration (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n` +
        problems.map((p) => `  ${p}`).join("\n"),
    );
    this.name = "ConfigError";
  }
}

export const NAMESPACE = "rpcstack";

/** `gateway.chains[0].path` for the path segments ["gateway", "chains", 0, "path"]. */
export function keyName(segments: readonly (string | number)[]): string {
  return segments.reduce<string>(
    (acc, s) => (typeof s === "number" ? `${acc}[${s}]` : acc ? `${acc}.${s}` : s),
    "",
  );
}

export const problem = (segments: readonly (string | number)[], message: string) =>
  `${NAMESPACE}:${keyName(segments)}: ${message}`;
