#!/usr/bin/env bash
# npm run bench: installs the load tool and the reference proxies from Debian (not in CI), then runs the benchmark.
# npm run bench -- --cases peers: the gateway against eRPC and proxyd instead (bench/peers.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
peers=0 help=0 prev=""
for a in "$@"; do
  case "$a" in
    -h|--help) help=1 ;;
    --cases=peers) peers=1 ;;
    peers) [ "$prev" = "--cases" ] && peers=1 ;;
  esac
  prev="$a"
done
if [ "$help" = 1 ] && [ "$peers" = 0 ]; then
  cat <<'USAGE'
usage: npm run bench [-- options]
  (no options)          the gateway against direct, nginx and Caddy (bench/run.ts), then the response cache (bench/cache.ts)
  --rounds N --seconds N --ws-seconds N --connections N --threads N
                        rounds and lengths of each case
  --pin CPUS            taskset CPU list for wrk (e.g. 1)
  --cases a,b           only these relay cases (direct, gateway, nginx, caddy, variant, baselines); no results file
  --variant JSON        a second gateway with the generated config edited: [["search","replace"],...]
  --baseline name=DIR   the gateway builder of another checkout, as its own case
  --cases peers         the gateway against eRPC and proxyd (bench/peers.ts; its options: --cases peers --help)
USAGE
  exit 0
fi
need=()
for p in wrk haproxy openssl; do command -v "$p" >/dev/null || need+=("$p"); done
[ "$peers" = 1 ] || for p in nginx caddy; do command -v "$p" >/dev/null || need+=("$p"); done
if [ "${#need[@]}" -gt 0 ]; then
  echo "bench: installing ${need[*]} from Debian"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}";
  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; fi
fi
[ -d node_modules ] || npm ci --no-audit --no-fund
if [ "$peers" = 1 ]; then exec npx tsx bench/peers.ts "$@"; fi
npx tsx bench/run.ts "$@"
# The response cache on a read mix against hardhat: adds ratios.cache and cache to latest.json.
exec npx tsx bench/cache.ts "$@"
