/** The loopback helpers live in devtools/, shared with the bench. */
export * from "../../devtools/net.js";
