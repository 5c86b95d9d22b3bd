#!/usr/bin/env bash
# npm run bench: installs the load tool and the reference proxies from Debian (not in CI), then runs the benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
# The arguments are checked before anything is installed or started; --help stops here.
for a in "$@"; do case "$a" in -h|--help) exec npx tsx bench/args.ts --help ;; esac; done
npx tsx bench/args.ts "$@"
need=()
for p in wrk nginx caddy haproxy openssl; do command -v "$p" >/dev/null || need+=("$p"); done
if [ "${#need[@]}" -gt 0 ]; then
  echo "bench: installing ${need[*]} from Debian"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}";
  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; fi
fi
[ -d node_modules ] || npm ci --no-audit --no-fund
npx tsx bench/run.ts "$@"
# The response cache on a read mix against hardhat: adds ratios.cache and cache to latest.json.
exec npx tsx bench/cache.ts "$@"
