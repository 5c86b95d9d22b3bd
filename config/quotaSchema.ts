/** The JSON schema of rpcstack:gateway.quotas (docs/accounts.md#quotas), a part of config/schema.ts. */
export const quotasSchema = {
  type: "array",
  items: {
    type: "object",
    properties: {
      name: { type: "string", pattern: "^(badge:)?[A-Za-z0-9_.-]{1,64}$", "x-hint": "must be a project key's name, or badge: and a badge project's id" },
      calls: { type: "integer", minimum: 1, maximum: 1000000000000, "x-hint": "must be a positive whole number of calls" },
      per: { type: "string", enum: ["day", "month"] },
    },
    required: ["name", "calls", "per"],
    additionalProperties: false,
  },
} as const;
