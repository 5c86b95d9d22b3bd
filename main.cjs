// The Pulumi program's entry point (Pulumi.yaml `main`): the TypeScript sources run through tsx, as
// the tests run them. Their imports name `.js` files (module nodenext), which the ts-node that
// Pulumi's Node.js runtime bundles cannot map to `.ts`, so `runtime.options.typescript` is off.
require("tsx/cjs");
module.exports = require("./index.ts");
