/** The hardhat node helper lives in devtools/, shared with the bench. */
export * from "../../devtools/hardhat.js";
