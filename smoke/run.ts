/** Entry point of the bundled smoke test: it is fed to `node -` on stdin, where require.main is not this module. */
import { main } from "./cli.js";

main(process.argv.slice(2)).then((code) => process.exit(code));
