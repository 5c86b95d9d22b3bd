/** The hardhat node helper lives in devtools/, shared with the bench. */
import { afterAll, beforeAll } from "vitest";
import { startHardhat, type EvmNode } from "../../devtools/hardhat.js";

export * from "../../devtools/hardhat.js";

/** A hardhat node for the enclosing tests: started before them, stopped after them, also when they fail. */
export function hardhatForTests(): () => EvmNode {
  let evm: EvmNode | undefined;
  beforeAll(async () => {
    evm = await startHardhat();
  }, 90_000);
  afterAll(async () => {
    await evm?.stop();
  });
  return () => {
    if (!evm) throw new Error("the hardhat node did not start");
    return evm;
  };
}
