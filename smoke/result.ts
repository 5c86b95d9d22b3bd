/** The smoke runner's one result line: its tag and shape, which `pulumi up` reads from the command's output. */
export const SMOKE_PREFIX = "RPCSTACK_SMOKE ";

export interface SmokeResult {
  readonly ok: { chainId: string; iface: string; block: number }[];
  readonly failed: { chainId: string; iface: string; error: string }[];
}
