#!/usr/bin/env bash
# npm run bench: installs the load tool and the reference proxies from Debian (not in CI), then runs the benchmark.
# npm run bench -- --cases peers: the gateway against eRPC and proxyd instead (bench/peers.ts).
# npm run bench -- --cases merge: identical reads merged on a moving head (bench/merge.ts) alone.
# npm run bench -- --cases hit: what a cache hit costs against a native return and a relay (bench/hit.ts) alone.
# npm run bench -- --cases instructions: instructions per request under callgrind, the relay's and the hit's cases (bench/instructions.ts).
# npm run bench -- --cases all: every part in one run into one latest.json (relay, hit, cache, peers, merge, instructions), then its summary.
set -euo pipefail
cd "$(dirname "$0")/.."
cases="" prev=""
for a in "$@"; do
  case "$a" in
    --cases=*) cases="${a#--cases=}" ;;
    *) [ "$prev" = "--cases" ] && cases="$a" ;;
  esac
  prev="$a"
done
# The arguments are checked before anything is installed or started (one list, bench/args.ts);
# --help stops here, with the peers bench's own usage after --cases peers.
for a in "$@"; do case "$a" in -h|--help) [ "$cases" = peers ] && exec npx tsx bench/peers.ts --help; exec npx tsx bench/args.ts --help ;; esac; done
npx tsx bench/args.ts "$@"
need=()
for p in wrk patchelf openssl; do command -v "$p" >/dev/null || need+=("$p"); done
[ "$cases" = peers ] || for p in nginx caddy; do command -v "$p" >/dev/null || need+=("$p"); done
# perf: where a cache hit's CPU goes (bench/hit.ts); Debian packages it as linux-perf.
case "$cases" in all|hit) command -v perf >/dev/null || need+=(linux-perf) ;; esac
# valgrind: callgrind counts the instructions per request (bench/instructions.ts).
case "$cases" in all|instructions) command -v callgrind_control >/dev/null || need+=(valgrind) ;; esac
if [ "${#need[@]}" -gt 0 ]; then
  echo "bench: installing ${need[*]} from Debian"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}";
  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; fi
fi
[ -d node_modules ] || npm ci --no-audit --no-fund
# The gateway's HAProxy: the release production pins (scripts/haproxy/build.sh; cached after the first time).
bash scripts/haproxy/build.sh
if [ "$cases" = peers ]; then exec npx tsx bench/peers.ts "$@"; fi
if [ "$cases" = merge ]; then exec npx tsx bench/merge.ts "$@"; fi
if [ "$cases" = hit ]; then exec npx tsx bench/hit.ts "$@"; fi
if [ "$cases" = instructions ]; then exec npx tsx bench/instructions.ts "$@"; fi
npx tsx bench/run.ts "$@"
# What a cache hit costs, on the same bytes as a native return and a relay (bench/hit.ts).
if [ "$cases" = all ]; then npx tsx bench/hit.ts "$@"; fi
# The response cache on a read mix against geth on the bench chain (bench/chain.ts): adds ratios.cache and cache to latest.json.
npx tsx bench/cache.ts "$@"
# The peers last, into the same file (without their binaries this part says why it is skipped).
if [ "$cases" = all ]; then npx tsx bench/peers.ts "$@"; fi
# Identical reads merged on a moving head: geth every 2 s and 12 s, hardhat every 150 ms.
if [ "$cases" = all ]; then npx tsx bench/merge.ts "$@"; fi
# Instructions per request under callgrind: the relay's and the hit's cases, a count that a busy machine does not move.
if [ "$cases" = all ]; then npx tsx bench/instructions.ts "$@"; fi
# The summary (bench/summary.ts) of a whole run; a run of some cases writes no results of its own.
if [ -z "$cases" ] || [ "$cases" = all ]; then exec npx tsx bench/summary.ts "$@"; fi
