/** The tag before the readiness program's one result line, which `pulumi up` reads from the container's logs. */
export const RESULT_PREFIX = "RPCSTACK_READINESS ";
