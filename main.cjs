// The Pulumi program's entry point (package.json `main`): the TypeScript sources run through tsx, as
// the tests run them. Their imports name `.js` files (module nodenext), which the ts-node that
// Pulumi's Node.js runtime bundles cannot map to `.ts`, so `runtime.options.typescript` is off.
// The program is an async function: Pulumi calls it, awaits it and takes its result as the outputs.
require("tsx/cjs");
module.exports = require("./index.ts").default;
