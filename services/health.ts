/** Health checks that mean "serving requests", built for what each image ships. */
import type { HealthCheckSpec } from "./types.js";
import { shellQuote } from "./shell.js";

const JSONRPC_CONTENT_TYPE = "Content-Type: application/json";

export function jsonRpcBody(method: string): string {
  return JSON.stringify({ jsonrpc: "2.0", method, params: [], id: 1 });
}

const timing = { intervalSeconds: 30, timeoutSeconds: 10, retries: 5 };

/** A JSON-RPC call that must return a result, with curl (Juno's image ships it). */
export function curlJsonRpc(port: number, method: string, startPeriodSeconds: number, path = "/"): HealthCheckSpec {
  const cmd = `curl -fsS -m 8 -H ${shellQuote(JSONRPC_CONTENT_TYPE)} --data ${shellQuote(jsonRpcBody(method))} http://127.0.0.1:${port}${path} | grep -q '"result"'`;
  return { test: ["CMD-SHELL", cmd], ...timing, startPeriodSeconds };
}

/**
 * A JSON-RPC call that must return a result, with BusyBox wget (Alpine-based images such as
 * geth's). No `-T`: BusyBox 1.35's wget crashes with it on a chunked reply; Docker's own
 * healthcheck timeout bounds the call instead.
 */
export function wgetJsonRpc(port: number, method: string, startPeriodSeconds: number): HealthCheckSpec {
  const cmd = `wget -qO- --header ${shellQuote(JSONRPC_CONTENT_TYPE)} --post-data ${shellQuote(jsonRpcBody(method))} http://127.0.0.1:${port}/ | grep -q '"result"'`;
  return { test: ["CMD-SHELL", cmd], ...timing, startPeriodSeconds };
}

/**
 * An HTTP GET whose status must be one of `okStatuses`, spoken over bash's /dev/tcp: the
 * Lighthouse and Pathfinder images have bash but neither curl nor wget.
 */
export function bashHttpGet(port: number, path: string, okStatuses: readonly number[], startPeriodSeconds: number): HealthCheckSpec {
  const statuses = okStatuses.join("|");
  const script =
    `exec 3<>/dev/tcp/127.0.0.1/${port} && ` +
    `printf 'GET ${path} HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && ` +
    `IFS=' ' read -r _ status _ <&3 && [[ "$status" =~ ^(${statuses})$ ]]`;
  return { test: ["CMD", "bash", "-c", script], ...timing, startPeriodSeconds };
}

/** An HTTP GET that must answer 2xx, with Node's fetch: the Node.js image the package's own programs run in. */
export function nodeHttpGet(port: number, path: string, startPeriodSeconds: number): HealthCheckSpec {
  return {
    test: ["CMD", "node", "-e", `fetch("http://127.0.0.1:${port}${path}").then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))`],
    intervalSeconds: 30,
    timeoutSeconds: 10,
    retries: 3,
    startPeriodSeconds,
  };
}
