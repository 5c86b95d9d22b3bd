// usage: node scripts/engine/pluginVersion.cjs <pulumi-resource-NAME binary>
// Prints the version a provider plugin reports, asked the way the Pulumi engine asks it: start the
// binary with no engine address (attach mode: it prints the port it serves gRPC on), then call
// ResourceProvider.GetPluginInfo. Exit 1, with the reason on stderr, when it cannot be asked.
const { spawn } = require("node:child_process");
const grpc = require("@grpc/grpc-js");
const { ResourceProviderClient } = require("@pulumi/pulumi/proto/provider_grpc_pb");
const { Empty } = require("google-protobuf/google/protobuf/empty_pb");

const bin = process.argv[2];
if (!bin || process.argv.length > 3 || bin === "--help") {
  console.error("usage: node scripts/engine/pluginVersion.cjs <pulumi-resource-NAME binary>");
  process.exit(bin === "--help" ? 0 : 2);
}
const fail = (why) => {
  console.error(`${bin}: ${why}`);
  child.kill("SIGKILL");
  process.exit(1);
};
const child = spawn(bin, [], { stdio: ["ignore", "pipe", "pipe"] });
let out = "";
let err = "";
child.on("error", (e) => fail(`does not start (${e.code ?? e.message})`));
child.on("exit", (code) => fail(`exited (${code}) before it served gRPC${err.trim() ? `: ${err.trim().split("\n").pop()}` : ""}`));
child.stderr.on("data", (d) => (err += d));
const timer = setTimeout(() => fail("printed no port within 30 s"), 30_000);
child.stdout.on("data", (d) => {
  out += d;
  const port = /^(\d+)\s*$/m.exec(out)?.[1];
  if (!port) return;
  clearTimeout(timer);
  child.removeAllListeners("exit");
  const client = new ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  client.getPluginInfo(new Empty(), { deadline: Date.now() + 30_000 }, (e, info) => {
    if (e) fail(`GetPluginInfo failed: ${e.details || e.message}`);
    console.log(info.getVersion().replace(/^v/, ""));
    client.close();
    child.kill("SIGINT");
    process.exit(0);
  });
});
