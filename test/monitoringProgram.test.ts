/** The Monitoring component under the mock engine: what `pulumi up` deploys for Prometheus. */
import { describe, expect, it } from "vitest";
import { MONITORING_IMAGES } from "../config/networks/images.js";
import { TEST_PROJECT_KEYS, runProgram } from "./harness.js";

const CONTAINER = "docker:index/container:Container";

describe("Monitoring under the mock engine", () => {
  it("mainnet: Prometheus pinned, on the host's loopback only, with its configuration and rules in the clear, after the gateway", async () => {
    const run = await runProgram({ stack: "mainnet" });
    const prom = run.one(CONTAINER, "rpcstack-monitoring-prometheus");
    expect(run.one("docker:index/remoteImage:RemoteImage", "rpcstack-monitoring-prometheus-image").inputs.name).toBe(MONITORING_IMAGES.prometheus);
    expect(prom.inputs.ports.map((p: any) => `${p.ip}:${p.external}->${p.internal}`)).toEqual(["127.0.0.1:9090->9090"]);
    expect(prom.inputs.uploads.map((u: any) => u.file)).toEqual(["/etc/prometheus/prometheus.yml", "/etc/prometheus/rpcstack-alerts.yml"]);
    expect(prom.secretInputs ?? []).toEqual([]);
    for (const k of TEST_PROJECT_KEYS) expect(JSON.stringify(prom.inputs)).not.toContain(k.key);
    expect(prom.dependencies).toContain(run.one(CONTAINER, "rpcstack-gateway-haproxy").urn);
    expect(run.one("docker:index/volume:Volume", "rpcstack-monitoring-prometheus-data").retainOnDelete).toBe(true);
  });

  it("local: none unless switched on", async () => {
    expect((await runProgram({ stack: "local" })).byType(CONTAINER).map((c) => c.inputs.name)).not.toContain("rpcstack-prometheus");
    const on = await runProgram({ stack: "local", config: { monitoring: { enabled: true } } });
    expect(on.one(CONTAINER, "rpcstack-monitoring-prometheus").inputs.name).toBe("rpcstack-prometheus");
  });
});
