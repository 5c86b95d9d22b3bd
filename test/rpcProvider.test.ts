import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config/index.js";
import { stackFileConfig } from "./harness.js";

beforeAll(async () => {
  await pulumi.runtime.setMocks({ newResource: (a) => ({ id: `${a.name}_id`, state: a.inputs }), call: (a) => a.inputs }, "rpcstack", "guards");
});

const settingsOf = (stack: "testnet" | "local") => loadConfig({ entries: stackFileConfig(stack), withoutSecrets: true });

describe("RpcProvider guards its mutually exclusive arguments", () => {
  it("an ssh host without sshPrivateKey is a ResourceError naming the key", async () => {
    const { RpcProvider } = await import("../components/rpcProvider.js");
    const make = () => new RpcProvider("guard-ssh", { settings: settingsOf("testnet"), projectKeys: [] });
    expect(make).toThrow(pulumi.ResourceError);
    expect(make).toThrow("RpcProvider: host kind ssh needs sshPrivateKey (rpcstack:sshPrivateKey)");
  });

  it("an sshPrivateKey for a host that is not ssh is refused", async () => {
    const { RpcProvider } = await import("../components/rpcProvider.js");
    const make = () => new RpcProvider("guard-local", { settings: settingsOf("local"), projectKeys: [], sshPrivateKey: "k" });
    expect(make).toThrow(pulumi.ResourceError);
    expect(make).toThrow("sshPrivateKey is only for host kind ssh, not local");
  });
});
