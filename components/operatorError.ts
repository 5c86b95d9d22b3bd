import * as pulumi from "@pulumi/pulumi";

/**
 * A failure the operator fixes (a node that does not sync, a relay the gateway refuses), thrown in
 * an apply: the engine prints its message alone (hideStack), and the message stays as written. The
 * SDK prefixes the message of an error thrown while it serializes a resource's outputs with
 * `error serializing property "outputs": ` (`runtime/rpc.js`), which says nothing to an operator.
 */
export class OperatorError extends pulumi.ResourceError {
  constructor(message: string, resource: pulumi.Resource) {
    super(message, resource, true);
    Object.defineProperty(this, "message", { get: () => message, set: () => undefined });
  }
}
