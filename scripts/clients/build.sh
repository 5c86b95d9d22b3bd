#!/usr/bin/env bash
# Builds the software the stack's images run from its package registries, at the releases the stack
# pins, for the tests on machines that cannot pull those images: geth from its Go module (./cmd/geth),
# Starknet Devnet from crates.io, a Cosmos SDK chain (wasmd) and Prometheus from their Go modules.
# Binaries go into a cache folder outside the checkout, keyed by version, reused when present; the
# end-to-end test puts them into images (devtools/images/). Prints what it built or reused and how
# long it took.
set -uo pipefail

usage() {
  cat <<EOF
usage: bash scripts/clients/build.sh [--print-path CLIENT] [--help] [CLIENT...]
Builds each CLIENT (default: all) at the release config/networks/images.ts pins (wasmd: below) into
\$RPCSTACK_CACHE/clients/<client>/<version>/ (RPCSTACK_CACHE defaults to ~/.cache/rpcstack).
Clients: geth            Go module github.com/ethereum/go-ethereum, ./cmd/geth (needs go and gcc)
         starknet-devnet crate starknet-devnet from crates.io (needs cargo; ~30 min of CPU cold)
         wasmd           Go module github.com/CosmWasm/wasmd, ./cmd/wasmd, at $WASMD_VERSION: the
                         Cosmos chain the gateway's Cosmos tests run (needs go and gcc)
         prometheus      Go module github.com/prometheus/prometheus, ./cmd/prometheus and promtool
                         beside it, at the image pin (release 3.X.Y is module v0.3XX.Y; needs go)
         starknet-py     the Python client starknet-py $STARKNET_PY_VERSION from PyPI in a venv (its
                         path is the venv's python; needs python3 with venv)
  --print-path CLIENT   print where CLIENT's binary is (or will be) and exit
  --help                this text
Exit: 0 built or cached, 1 a build failed, 2 bad arguments.
EOF
}

root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${RPCSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rpcstack}"
CLIENTS=(geth starknet-devnet wasmd prometheus starknet-py)
# No stack deploys a Cosmos node (the gateway fronts the operator's own), so nothing pins one: this
# is a Cosmos SDK v0.54 application on CometBFT v0.39 that chains run in production, built as
# published (its main package is its own) from the module proxy.
WASMD_VERSION=v0.70.3
# A client library, not a node: the end-to-end test calls the gateway with it as developers do.
STARKNET_PY_VERSION=0.30.0

# The pinned release of a client, from the image pin.
pinned() {
  case "$1" in
    geth) sed -n 's/.*"ethereum\/client-go:\(v[0-9][0-9.]*\)".*/\1/p' "$root/config/networks/images.ts" | head -n 1 ;;
    starknet-devnet) sed -n 's/.*"shardlabs\/starknet-devnet-rs:\([0-9][0-9.]*\)".*/\1/p' "$root/config/networks/images.ts" | head -n 1 ;;
    wasmd) echo "$WASMD_VERSION" ;;
    prometheus) sed -n 's/.*"prom\/prometheus:v\([0-9][0-9.]*\)".*/\1/p' "$root/config/networks/images.ts" | head -n 1 ;;
    starknet-py) echo "$STARKNET_PY_VERSION" ;;
  esac
}
binary() {
  case "$1" in
    starknet-py) echo "$cache/clients/$1/$(pinned "$1")/venv/bin/python" ;;
    *) echo "$cache/clients/$1/$(pinned "$1")/$1" ;;
  esac
}
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

# Runs "$@" inside a writable copy of Go module $1 at version $2 (its go.mod's replace directives
# apply only to its own module, so `go install` of it is refused): as its own Makefile builds it.
in_module_copy() {
  local module="$1" version="$2" src work rc
  shift 2
  src="$(GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$src" ] || { echo "go mod download $module@$version gave no folder"; return 1; }
  work="$(mktemp -d)"
  if cp -r "$src/." "$work/" && chmod -R u+w "$work"; then (cd "$work" && "$@"); rc=$?; else rc=1; fi
  chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"
  return "$rc"
}

# Build tags and version stamps from wasmd's Makefile. Its CosmWasm VM is a shared library the
# wasmvm module ships; it goes beside the binary, found through an $ORIGIN run path.
wasmd_in_copy() {
  local version="$1" dir="$2" vm
  CGO_ENABLED=1 GOFLAGS="-buildvcs=false" go build -mod=readonly -trimpath -tags "netgo,ledger" \
    -ldflags "-X github.com/cosmos/cosmos-sdk/version.Name=wasm -X github.com/cosmos/cosmos-sdk/version.AppName=wasmd -X github.com/cosmos/cosmos-sdk/version.Version=$version -X github.com/cosmos/cosmos-sdk/version.BuildTags=netgo,ledger" \
    -o "$dir/wasmd.part" ./cmd/wasmd || return 1
  vm="$(go list -m -f '{{.Dir}}' github.com/CosmWasm/wasmvm/v3)/internal/api/libwasmvm.$(uname -m).so"
  install -m 0644 "$vm" "$dir/" && patchelf --set-rpath '$ORIGIN' "$dir/wasmd.part" && mv "$dir/wasmd.part" "$dir/wasmd"
}

# Prometheus's release build (.promu.yml: prometheus and promtool, tags netgo and builtinassets, the
# version stamped) without builtinassets: the web UI's compiled assets are not in the module, and
# scrapes, the API and promtool need none. promtool goes beside it; prometheus last, as the mark.
prometheus_in_copy() {
  local version="$1" dir="$2" b
  mkdir -p "$dir/part" || return 1
  CGO_ENABLED=0 GOFLAGS="-buildvcs=false" go build -mod=readonly -trimpath -tags netgo \
    -ldflags "-X github.com/prometheus/common/version.Version=$version" -o "$dir/part/" ./cmd/prometheus ./cmd/promtool || return 1
  for b in promtool prometheus; do mv "$dir/part/$b" "$dir/$b" || return 1; done
  rmdir "$dir/part"
}

status=0
for client in "${wanted[@]}"; do
  version="$(pinned "$client")"
  [ -n "$version" ] || { echo "clients: cannot read $client's pin from config/networks/images.ts"; status=1; continue; }
  bin="$(binary "$client")"
  dir="$cache/clients/$client/$version"
  # A venv counts as built once its install finished (it marks itself so).
  if [ -x "$bin" ] && { [ "$client" != starknet-py ] || [ -f "$dir/venv/.complete" ]; }; then echo "clients: $client $version: cached ($bin)"; continue; fi
  case "$client" in starknet-devnet) tool=cargo ;; starknet-py) tool=python3 ;; *) tool=go ;; esac
  command -v "$tool" >/dev/null || { echo "clients: $client needs $tool to build"; status=1; continue; }
  mkdir -p "$dir"
  t0=$(date +%s)
  case "$client" in
    # cgo on: geth links its BLS and KZG libraries (blst, c-kzg) from C.
    geth) GOBIN="$dir" GOFLAGS="-buildvcs=false" CGO_ENABLED=1 go install -trimpath "github.com/ethereum/go-ethereum/cmd/geth@$version" >"$dir/build.log" 2>&1 ;;
    # The crate's own lock file (--locked), as its release was built; cargo's build folder is
    # dropped afterwards (several GB), the binary kept.
    starknet-devnet)
      { cargo install starknet-devnet --version "$version" --locked --root "$dir/cargo" --target-dir "$dir/target" \
          && mv "$dir/cargo/bin/starknet-devnet" "$bin"; } >"$dir/build.log" 2>&1
      rm -rf "$dir/target" "$dir/cargo" ;;
    wasmd) in_module_copy github.com/CosmWasm/wasmd "$version" wasmd_in_copy "$version" "$dir" >"$dir/build.log" 2>&1 ;;
    # Release 3.X.Y is published as module v0.3XX.Y (Go modules cannot take a v3 without renaming).
    prometheus)
      if [[ "$version" =~ ^3\.([0-9]+)\.([0-9]+)$ ]]; then
        in_module_copy github.com/prometheus/prometheus "v0.$((300 + BASH_REMATCH[1])).${BASH_REMATCH[2]}" prometheus_in_copy "$version" "$dir" >"$dir/build.log" 2>&1
      else
        echo "clients: prometheus $version: only 3.x releases map onto the module's v0.3XX.Y versions" >"$dir/build.log"
      fi ;;
    # Built aside and moved into place once pip is done: an interrupted install never looks built.
    # The venv's scripts name its path, so it is made where it will stay and moved only by name.
    starknet-py)
      rm -rf "$dir/venv" "$dir/venv.part"
      { python3 -m venv "$dir/venv" && "$dir/venv/bin/pip" install -q --disable-pip-version-check "starknet-py==$version" \
          && "$dir/venv/bin/python" -c "import starknet_py" && touch "$dir/venv/.complete"; } >"$dir/build.log" 2>&1
      [ -f "$dir/venv/.complete" ] || rm -rf "$dir/venv" ;;
  esac
  if [ -x "$bin" ]; then
    echo "clients: $client $version: built in $(( $(date +%s) - t0 )) s ($bin)"
  else
    echo "clients: $client $version: FAILED after $(( $(date +%s) - t0 )) s; the log ends:"; tail -n 5 "$dir/build.log"
    status=1
  fi
done
exit "$status"
