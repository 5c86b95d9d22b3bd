/** Typed relay failures: what went wrong is in `kind`, with the HTTP status and JSON-RPC error when there are. */
export type RelayErrorKind = "http" | "jsonrpc" | "timeout" | "connection" | "badge";

export class RelayError extends Error {
  constructor(
    readonly kind: RelayErrorKind,
    message: string,
    readonly details: { readonly status?: number; readonly code?: number; readonly data?: unknown; readonly chainId?: string } = {},
  ) {
    super(message);
    this.name = "RelayError";
  }
  get status() {
    return this.details.status;
  }
  get code() {
    return this.details.code;
  }
}
