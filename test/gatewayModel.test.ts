/** The HAProxy model's serializer keeps the order HAProxy runs rules in, whatever order the builders give. */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/index.js";
import { readStackFile } from "../export/stackFile.js";
import { req, serialize, useBackend } from "../gateway/model.js";
import { planStack } from "../plan/index.js";
import { ROOT } from "./harness.js";

describe("the gateway model's serializer", () => {
  it("writes tcp-request, then every http-request, then use_backend, then default_backend", () => {
    const text = serialize({
      sections: [
        {
          header: ["frontend", "f"],
          directives: [["bind", ":443"]],
          rules: [
            useBackend("be_a", ["is_a"]),
            { phase: "default_backend", action: ["be_none"] },
            req(["deny"], ["bad"], "Why it is denied."),
            { phase: "tcp-request connection", action: ["reject"], cond: ["flood"] },
            req(["set-var(txn.x)", "str(it has spaces)"]),
          ],
        },
      ],
    });
    expect(text).toBe(
      [
        "frontend f",
        "    bind :443",
        "    tcp-request connection reject if flood",
        "    # Why it is denied.",
        "    http-request deny if bad",
        "    http-request set-var(txn.x) 'str(it has spaces)'",
        "    use_backend be_a if is_a",
        "    default_backend be_none",
        "",
      ].join("\n"),
    );
  });

  it.each(["local", "testnet", "mainnet"] as const)("the %s stack's frontend routes only after its last http-request rule", (stack) => {
    const plan = planStack(loadConfig({ entries: readStackFile(ROOT, stack).entries, withoutSecrets: true }));
    const lines = plan.gatewayConfig.compiled.config.split("\n");
    const start = lines.indexOf("frontend https");
    const end = lines.findIndex((l, i) => i > start && l !== "" && !l.startsWith(" "));
    const frontend = lines.slice(start, end);
    const lastRequest = frontend.map((l) => l.trim().startsWith("http-request ")).lastIndexOf(true);
    const firstRoute = frontend.findIndex((l) => l.trim().startsWith("use_backend "));
    expect(lastRequest).toBeGreaterThan(0);
    expect(firstRoute).toBeGreaterThan(lastRequest);
  });
});
