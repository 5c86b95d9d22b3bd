/** The JSON schema of rpcstack:badges (docs/badges.md), a part of config/schema.ts. */
export const badgesSchema = {
  type: "object",
  properties: {
    // A badge is meant to be renewed often: long enough for a page's burst, short enough that a copied one is soon useless.
    lifetimeSeconds: { type: "integer", minimum: 30, maximum: 3600, default: 300 },
    perAddressPerMinute: { type: "integer", minimum: 1, maximum: 10000, default: 20 },
    signingKeyGeneration: { type: "integer", minimum: 1, maximum: 1000000, default: 1 },
    projects: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        properties: {
          projectId: { type: "string", pattern: "^[A-Za-z0-9_.-]{1,64}$", "x-hint": "must be 1-64 letters, digits, '.', '_' or '-'" },
          chains: { type: "array", minItems: 1, uniqueItems: true, items: { type: "string", pattern: "^[A-Z0-9]+$", "x-hint": "must be a chain id like \"ETH1\" or \"STRK\"" } },
          origins: {
            type: "array",
            minItems: 1,
            uniqueItems: true,
            items: { type: "string", pattern: "^https?://[a-z0-9.-]+(:[0-9]{1,5})?$", "x-hint": "must be an exact origin like \"https://app.example.com\" (scheme, lowercase host, optional port; no path, no wildcard)" },
          },
          lifetimeSeconds: { type: "integer", minimum: 30, maximum: 3600 },
          allowance: { type: "integer", minimum: 1, maximum: 100000000, default: 1000 },
          // The project's badges together, apart from any project key's rate: what a page's visitors may spend a second.
          ratePerSecond: { type: "integer", minimum: 1, maximum: 1000000 },
        },
        required: ["projectId", "chains", "origins"],
        additionalProperties: false,
      },
    },
  },
  required: ["projects"],
  additionalProperties: false,
} as const;
