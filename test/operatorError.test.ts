/** What the operator reads of a failure thrown in an apply (the real engine showed the SDK's prefix on it). */
import { describe, expect, it } from "vitest";
import { OperatorError } from "../components/operatorError.js";

describe("OperatorError", () => {
  it("keeps its message as written when the SDK prefixes it while serializing outputs, and hides the stack", () => {
    const e = new OperatorError("rpcstack: the nodes were not synced", undefined as never);
    // What @pulumi/pulumi's runtime/rpc.js does to an error thrown while it serializes a property.
    e.message = `error serializing property "outputs": ${e.message}`;
    expect(e.message).toBe("rpcstack: the nodes were not synced");
    expect(e.hideStack).toBe(true);
  });
});
