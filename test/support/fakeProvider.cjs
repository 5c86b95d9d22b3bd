// A stand-in provider plugin for tests of the engine build: serves gRPC on a port it prints, as a
// Pulumi provider does in attach mode, and answers GetPluginInfo with the version given as argv[2].
const grpc = require("@grpc/grpc-js");
const { ResourceProviderService } = require("@pulumi/pulumi/proto/provider_grpc_pb");
const { PluginInfo } = require("@pulumi/pulumi/proto/plugin_pb");

const server = new grpc.Server();
server.addService(ResourceProviderService, {
  getPluginInfo: (_call, done) => done(null, new PluginInfo().setVersion(process.argv[2])),
});
server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, port) => {
  if (e) throw e;
  console.log(port);
});
process.on("SIGINT", () => server.forceShutdown());
