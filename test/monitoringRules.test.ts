/**
 * The generated prometheus.yml and alert rules, checked by promtool at the pinned release: the configuration and
 * rules load, and each alert fires on series that should page someone, with the chain, node or
 * volume in its labels and summary, and stays quiet on series that must not.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { loadConfig } from "../config/index.js";
import { readStackFile } from "../export/stackFile.js";
import { planStack } from "../plan/index.js";
import { PROMETHEUS_RULES } from "../services/monitoring.js";
import { ROOT } from "./harness.js";
import { promtool, writeMonitoringFiles } from "./support/prometheus.js";

const { entries } = readStackFile(ROOT, "mainnet");
const plan = planStack(loadConfig({ entries, withoutSecrets: true })).monitoring!;
const rules = Object.fromEntries(
  (parse(plan.files.find((f) => f.name === PROMETHEUS_RULES)!.content).groups[0].rules as any[]).map((r) => [r.alert, r]),
);
const dir = writeMonitoringFiles(plan);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Case {
  readonly alert: string;
  /** Series (promtool's expanding notation, one sample a minute) that must make it fire by minute 20. */
  readonly firing: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly summary: string;
  /** Series that must not make it fire. */
  readonly quiet: Readonly<Record<string, string>>;
  /** Which of an alert's cases this is, where it has several. */
  readonly variant?: string;
}

const rot = (node: string, chain: string, layer: string) => `layer="${layer}",node="${node}",chain="${chain}",job="rotation",instance="sync-health:8080"`;
const vol = `volume="rpcstack-mainnet-geth",job="disk",instance="disk-watch:9105"`;
const thresholds = { 'rpcstack_volume_warn_ratio{job="disk",instance="disk-watch:9105"}': "0.85x30", 'rpcstack_volume_stop_ratio{job="disk",instance="disk-watch:9105"}': "0.95x30" };
const fe = (code: string) => `haproxy_frontend_http_responses_total{proxy="https",code="${code}",job="gateway",instance="haproxy:8405"}`;

const CASES: Case[] = [
  {
    alert: "RpcstackTargetDown",
    firing: { 'up{job="juno",instance="juno:9090",node="juno"}': "1 1 0x20" },
    labels: { job: "juno", instance: "juno:9090", node: "juno" },
    summary: "juno at juno:9090 does not answer Prometheus",
    quiet: { 'up{job="juno",instance="juno:9090",node="juno"}': "1 0 1x20" },
  },
  {
    alert: "RpcstackNodeOutOfRotation",
    firing: { [`rpcstack_node_out_reason{${rot("juno", "strk", "l2")},reason="lagging"}`]: "0 0 1x20", [`rpcstack_node_out_reason{${rot("juno", "strk", "l2")},reason="unreachable"}`]: "0x22" },
    labels: { layer: "l2", node: "juno", chain: "strk", reason: "lagging", job: "rotation", instance: "sync-health:8080" },
    summary: "Node juno of chain strk is out of rotation: lagging",
    // One check out, then back in: not worth a page.
    quiet: { [`rpcstack_node_out_reason{${rot("juno", "strk", "l2")},reason="lagging"}`]: "0 1 0x20" },
  },
  {
    alert: "RpcstackNoNodeInRotation",
    firing: { [`rpcstack_node_in_rotation{${rot("geth", "eth", "l1")}}`]: "1 0x20", [`rpcstack_node_in_rotation{${rot("geth-2", "eth", "l1")}}`]: "1 1 0x20" },
    labels: { chain: "eth", layer: "l1" },
    summary: "No node of chain eth is fit to serve: its relays answer 503",
    // One node of two out: the other still serves.
    quiet: { [`rpcstack_node_in_rotation{${rot("geth", "eth", "l1")}}`]: "1 0x20", [`rpcstack_node_in_rotation{${rot("geth-2", "eth", "l1")}}`]: "1x22" },
  },
  {
    alert: "RpcstackVolumeFilling",
    firing: { ...thresholds, [`rpcstack_volume_used_ratio{${vol}}`]: "0.8 0.9x20" },
    labels: { volume: "rpcstack-mainnet-geth", job: "disk", instance: "disk-watch:9105" },
    summary: "Data volume rpcstack-mainnet-geth is 90% full",
    quiet: { ...thresholds, [`rpcstack_volume_used_ratio{${vol}}`]: "0.8x22" },
  },
  {
    alert: "RpcstackVolumeFull",
    firing: { ...thresholds, [`rpcstack_volume_used_ratio{${vol}}`]: "0.9 0.96x20" },
    labels: { volume: "rpcstack-mainnet-geth", job: "disk", instance: "disk-watch:9105" },
    summary: "Data volume rpcstack-mainnet-geth is past disk.stopPercent: its node is out of rotation",
    quiet: { ...thresholds, [`rpcstack_volume_used_ratio{${vol}}`]: "0.9x22" },
  },
  {
    alert: "RpcstackNoPeers",
    firing: { 'p2p_peers{job="geth",instance="geth:6060",node="geth"}': "25 0x20", 'libp2p_peers{job="lighthouse",instance="lighthouse:5054",node="geth"}': "80x22" },
    labels: { job: "geth", instance: "geth:6060", node: "geth" },
    summary: "geth of node geth has no peers",
    // A few minutes without peers after a restart is normal.
    quiet: { 'p2p_peers{job="geth",instance="geth:6060",node="geth"}': "25 0 0 0 0 3x20", 'libp2p_peers{job="lighthouse",instance="lighthouse:5054",node="geth"}': "80x22" },
  },
  {
    alert: "RpcstackNoPeers",
    variant: "a Lighthouse that never had a peer",
    // A Lighthouse that never had a peer exports no libp2p_peers at all (the gauge is set on a peer's connect or disconnect).
    firing: { 'p2p_peers{job="geth",instance="geth:6060",node="geth"}': "25x22", 'up{job="lighthouse",instance="lighthouse:5054",node="geth"}': "1x22" },
    labels: { job: "lighthouse", instance: "lighthouse:5054", node: "geth" },
    summary: "lighthouse of node geth has no peers",
    quiet: { 'p2p_peers{job="geth",instance="geth:6060",node="geth"}': "25x22", 'up{job="lighthouse",instance="lighthouse:5054",node="geth"}': "1x22", 'libp2p_peers{job="lighthouse",instance="lighthouse:5054",node="geth"}': "80x22" },
  },
  {
    alert: "RpcstackGateway5xx",
    // 100 answers a minute, 10 of them 5xx: 10%.
    firing: { [fe("2xx")]: "0+90x22", [fe("5xx")]: "0+10x22" },
    labels: { proxy: "https" },
    summary: "10% of the gateway's answers on https are 5xx",
    // 1%: within what a busy gateway sees.
    quiet: { [fe("2xx")]: "0+99x22", [fe("5xx")]: "0+1x22" },
  },
];

const series = (s: Readonly<Record<string, string>>) => Object.entries(s).map(([k, values]) => ({ series: k.includes("{") ? k : k, values }));
const test = (c: Case, firing: boolean) => ({
  interval: "1m",
  input_series: series(firing ? c.firing : c.quiet),
  alert_rule_test: [
    {
      eval_time: "20m",
      alertname: c.alert,
      exp_alerts: firing ? [{ exp_labels: { severity: rules[c.alert].labels.severity, ...c.labels }, exp_annotations: { summary: c.summary, action: rules[c.alert].annotations.action } }] : [],
    },
  ],
});

describe("alert rules with promtool (the pinned Prometheus release's)", () => {
  it("promtool accepts the generated prometheus.yml and its rule file", () => {
    const config = promtool(["check", "config", "prometheus.yml"], dir);
    expect(config.status, config.output).toBe(0);
    const r = promtool(["check", "rules", PROMETHEUS_RULES], dir);
    expect(r.status, r.output).toBe(0);
  });

  it("covers every rule a mainnet stack gets", () => {
    expect(Object.keys(rules).sort()).toEqual([...new Set(CASES.map((c) => c.alert))].sort());
  });

  it.each(CASES.map((c) => [c.variant ? `${c.alert} (${c.variant})` : c.alert, c] as const))("%s fires on series that should page and stays quiet on series that should not", (name, c) => {
    const file = join(dir, `${name.replace(/\W+/g, "-")}.test.yml`);
    writeFileSync(file, stringify({ rule_files: [PROMETHEUS_RULES], evaluation_interval: "1m", tests: [test(c, true), test(c, false)] }));
    const r = promtool(["test", "rules", file], dir);
    expect(r.status, r.output).toBe(0);
  });
});
