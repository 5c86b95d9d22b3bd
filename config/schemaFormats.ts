/**
 * Value formats the keys of the `rpcstack:` configuration schema (config/schema.ts) share; a string
 * format carries the `x-hint` an operator sees when a value does not match.
 */
export const hostname = {
  type: "string",
  pattern: "^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$",
  "x-hint": 'must be a lowercase DNS hostname like "rpc.example.com"',
} as const;
export const address = {
  type: "string",
  pattern: "^([0-9]{1,3}(\\.[0-9]{1,3}){3}|[0-9a-fA-F:]+:[0-9a-fA-F:]*|([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)$",
  "x-hint": "must be a hostname or an IP address",
} as const;
export const url = (schemes: string[]) =>
  ({
    type: "string",
    format: "uri",
    pattern: `^(${schemes.join("|")})://[^\\s/?#]+`,
    "x-hint": `must be a ${schemes.map((s) => s + "://").join(" or ")} URL`,
  }) as const;
export const image = {
  type: "string",
  pattern: "^[a-z0-9]+([._/:-][a-zA-Z0-9]+)*(@sha256:[a-f0-9]{64})?$",
  "x-hint": 'must be an image reference like "ethereum/client-go:v1.17.5"',
} as const;
export const duration = {
  type: "string",
  pattern: "^[1-9][0-9]*(ms|s|m)$",
  "x-hint": 'must be a duration like "3s"',
} as const;
export const release = {
  type: "string",
  pattern: "^v?[0-9]+\\.[0-9]+\\.[0-9]+$",
  "x-hint": 'must be a release like "v0.17.0"',
} as const;
export const cidr = {
  type: "string",
  pattern:
    "^(([0-9]{1,3}\\.){3}[0-9]{1,3}/([0-9]|[12][0-9]|3[0-2])|[0-9a-fA-F:]+:[0-9a-fA-F:]*/([0-9]|[1-9][0-9]|1[01][0-9]|12[0-8]))$",
  "x-hint": 'must be a CIDR block like "203.0.113.7/32"',
} as const;
export const port = { type: "integer", minimum: 1, maximum: 65535 } as const;
