/** The JSON schema of rpcstack:monitoring (docs/monitoring.md), a part of config/schema.ts. */
const image = { type: "string", pattern: "^[a-z0-9]+([._/-][a-zA-Z0-9]+)*(:[a-zA-Z0-9._-]+|@sha256:[a-f0-9]{64})$" } as const;

export const monitoringSchema = {
  type: "object",
  properties: {
    // No `default`: it follows the host kind (config/monitoring.ts), on for public stacks.
    enabled: { type: "boolean" },
    // Long enough to compare this week with last week's sync and traffic; the size cap below bounds the disk.
    retentionDays: { type: "integer", minimum: 1, maximum: 3650, default: 30 },
    retentionGB: { type: "integer", minimum: 1, maximum: 10000, default: 20 },
    scrapeIntervalSeconds: { type: "integer", minimum: 5, maximum: 300, default: 15 },
    port: { type: "integer", minimum: 1024, maximum: 65535, default: 9090 },
    prometheusImage: { ...image, "x-hint": 'must be an image reference like "prom/prometheus:v3.5.0"' },
    // No default: Grafana runs only where the operator names the image it can pull, and pins it.
    grafanaImage: { ...image, "x-hint": 'must be a pinned image reference like "grafana/grafana:12.1.1"' },
    grafanaPort: { type: "integer", minimum: 1024, maximum: 65535, default: 3000 },
  },
  additionalProperties: false,
} as const;
