#!/usr/bin/env bash
# Builds node clients from their package registries, at the releases the stack pins, for the tests
# on machines that cannot pull their images: geth from its Go module (./cmd/geth). Binaries go into
# a cache folder outside the checkout, keyed by version, reused when present; the end-to-end test
# puts them into images (devtools/images/). Prints what it built or reused and how long it took.
set -uo pipefail

usage() {
  cat <<'EOF'
usage: bash scripts/clients/build.sh [--print-path CLIENT] [--help] [CLIENT...]
Builds each CLIENT (default: all) at the release pinned in config/networks/images.ts into
$RPCSTACK_CACHE/clients/<client>/<version>/ (RPCSTACK_CACHE defaults to ~/.cache/rpcstack).
Clients: geth (Go module github.com/ethereum/go-ethereum, ./cmd/geth; needs go and gcc).
  --print-path CLIENT   print where CLIENT's binary is (or will be) and exit
  --help                this text
Exit: 0 built or cached, 1 a build failed, 2 bad arguments.
EOF
}

root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${RPCSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rpcstack}"
CLIENTS=(geth)

# The pinned release of a client, from the image pin.
pinned() {
  case "$1" in
    geth) sed -n 's/.*"ethereum\/client-go:\(v[0-9][0-9.]*\)".*/\1/p' "$root/config/networks/images.ts" | head -n 1 ;;
  esac
}
binary() { echo "$cache/clients/$1/$(pinned "$1")/$1"; }
known() { local c; for c in "${CLIENTS[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }

wanted=()
while [ $# -gt 0 ]; do
  case "$1" in
    --help | -h) usage; exit 0 ;;
    --print-path)
      [ $# -ge 2 ] && known "$2" || { echo "build.sh: --print-path takes one of: ${CLIENTS[*]}" >&2; exit 2; }
      binary "$2"; exit 0 ;;
    -*) echo "build.sh: unknown option \"$1\"" >&2; usage >&2; exit 2 ;;
    *) known "$1" || { echo "build.sh: unknown client \"$1\" (clients: ${CLIENTS[*]})" >&2; exit 2; }; wanted+=("$1") ;;
  esac
  shift
done
[ "${#wanted[@]}" -gt 0 ] || wanted=("${CLIENTS[@]}")

status=0
for client in "${wanted[@]}"; do
  version="$(pinned "$client")"
  [ -n "$version" ] || { echo "clients: cannot read $client's pin from config/networks/images.ts"; status=1; continue; }
  bin="$(binary "$client")"
  dir="$(dirname "$bin")"
  if [ -x "$bin" ]; then echo "clients: $client $version: cached ($bin)"; continue; fi
  command -v go >/dev/null || { echo "clients: $client needs go (1.24+) to build"; status=1; continue; }
  mkdir -p "$dir"
  t0=$(date +%s)
  case "$client" in
    # cgo on: geth links its BLS and KZG libraries (blst, c-kzg) from C.
    geth) GOBIN="$dir" GOFLAGS="-buildvcs=false" CGO_ENABLED=1 go install -trimpath "github.com/ethereum/go-ethereum/cmd/geth@$version" >"$dir/build.log" 2>&1 ;;
  esac
  if [ -x "$bin" ]; then
    echo "clients: $client $version: built in $(( $(date +%s) - t0 )) s ($bin)"
  else
    echo "clients: $client $version: FAILED after $(( $(date +%s) - t0 )) s; the log ends:"; tail -n 5 "$dir/build.log"
    status=1
  fi
done
exit "$status"
