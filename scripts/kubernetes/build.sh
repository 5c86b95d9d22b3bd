#!/usr/bin/env bash
# Builds Kubernetes from the Go module proxy for the tests on a real cluster: the control plane
# (test/support/kubeCluster.ts: etcd, kube-apiserver, kube-controller-manager) and a one-node
# cluster's node (test/support/kubeNode.ts: kube-scheduler, kubelet, kube-proxy, containerd with
# its runc shim and ctr, the pause image's binary, and CoreDNS for the cluster's DNS). Binaries go
# into a cache folder outside the checkout, keyed by version, reused when present. Prints what it
# built or reused and how long it took.
set -uo pipefail

# etcd v3.7 is the line kube-apiserver v1.37 is built against (its go.mod requires etcd's client
# v3.7.0); v3.7.3 is that line's newest patch release on the proxy.
ETCD_VERSION=v3.7.3
KUBE_VERSION=v1.37.2
# containerd's RELEASES.md (v2.4.2) lists 2.4.0+ and 2.3.0+ for Kubernetes 1.37; Debian's 1.6 is
# not among them.
CONTAINERD_VERSION=v2.4.2
# build/pause/Makefile's TAG in k8s.io/kubernetes at KUBE_VERSION, whose pause.c this builds.
PAUSE_VERSION=3.10.2
# kubeadm's CoreDNSVersion (cmd/kubeadm/app/constants) in k8s.io/kubernetes at KUBE_VERSION, also the
# image cluster/addons/dns/coredns deploys and the newest release the Corefile migration library
# that release requires (corefile-migration v1.0.34) knows. The proxy also serves v1.14.7 and
# v1.15.0, which Kubernetes v1.37.2 does not name.
COREDNS_VERSION=v1.14.6
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy containerd containerd-shim-runc-v2 ctr pause coredns)
CONTAINERD_BINARIES=(containerd containerd-shim-runc-v2 ctr)

usage() {
  cat <<EOF
usage: bash scripts/kubernetes/build.sh [--print-path BINARY] [--help] [BINARY...]
Builds each BINARY (default: all) into \$RPCSTACK_CACHE/kubernetes/<name>/<version>/
(RPCSTACK_CACHE defaults to ~/.cache/rpcstack), or reuses what an earlier run built there.
  etcd                     $ETCD_VERSION, module go.etcd.io/etcd/server/v3 (its main package is the module root)
  kube-apiserver           $KUBE_VERSION, module k8s.io/kubernetes, ./cmd/kube-apiserver
  kube-controller-manager  $KUBE_VERSION, module k8s.io/kubernetes, ./cmd/kube-controller-manager
  kube-scheduler           $KUBE_VERSION, module k8s.io/kubernetes, ./cmd/kube-scheduler
  kubelet                  $KUBE_VERSION, module k8s.io/kubernetes, ./cmd/kubelet
  kube-proxy               $KUBE_VERSION, module k8s.io/kubernetes, ./cmd/kube-proxy
  containerd               $CONTAINERD_VERSION, module github.com/containerd/containerd/v2, ./cmd/containerd
  containerd-shim-runc-v2  $CONTAINERD_VERSION, same module, ./cmd/containerd-shim-runc-v2 (beside containerd)
  ctr                      $CONTAINERD_VERSION, same module, ./cmd/ctr (beside containerd)
  pause                    $PAUSE_VERSION, build/pause/linux/pause.c of k8s.io/kubernetes $KUBE_VERSION, gcc -static
  coredns                  $COREDNS_VERSION, module github.com/coredns/coredns (its main package is the module root)
  --print-path BINARY      print where BINARY is (or will be) and exit
  --help                   this text
Needs: go (1.26+), and gcc with a static libc (libc6-dev) for pause. Exit: 0 built or cached, 1 a build failed, 2 bad arguments.
EOF
}

cache="${RPCSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rpcstack}"
containerd_part() { local b; for b in "${CONTAINERD_BINARIES[@]}"; do [ "$b" = "$1" ] && return 0; done; return 1; }
version() {
  case "$1" in etcd) echo "$ETCD_VERSION" ;; pause) echo "$PAUSE_VERSION" ;; coredns) echo "$COREDNS_VERSION" ;; *) containerd_part "$1" && echo "$CONTAINERD_VERSION" || echo "$KUBE_VERSION" ;; esac
}
# containerd finds its shim beside its own binary: the three share one folder.
binary() { if containerd_part "$1"; then echo "$cache/kubernetes/containerd/$CONTAINERD_VERSION/$1"; else echo "$cache/kubernetes/$1/$(version "$1")/$1"; fi; }
known() { local b; for b in "${BINARIES[@]}"; do [ "$b" = "$1" ] && return 0; done; return 1; }

wanted=()
while [ $# -gt 0 ]; do
  case "$1" in
    --help | -h) usage; exit 0 ;;
    --print-path)
      [ $# -ge 2 ] && known "$2" || { echo "build.sh: --print-path takes one of: ${BINARIES[*]}" >&2; exit 2; }
      binary "$2"; exit 0 ;;
    -*) echo "build.sh: unknown option \"$1\"" >&2; usage >&2; exit 2 ;;
    *) known "$1" || { echo "build.sh: unknown binary \"$1\" (binaries: ${BINARIES[*]})" >&2; exit 2; }; wanted+=("$1") ;;
  esac
  shift
done
[ "${#wanted[@]}" -gt 0 ] || wanted=("${BINARIES[@]}")

say() { echo "kubernetes: $*"; }
missing=()
for b in "${wanted[@]}"; do
  if [ -x "$(binary "$b")" ]; then say "$b $(version "$b"): cached ($(binary "$b"))"; else missing+=("$b"); fi
done
[ "${#missing[@]}" -gt 0 ] || exit 0
command -v go >/dev/null || { say "go is not installed (needs Go 1.26 or newer)"; exit 1; }

work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0
log="$cache/kubernetes/log"
mkdir -p "$log"

# Builds BINARY=PACKAGE pairs $3... (main packages) in a module of ours ($1, go.mod text $2) into the cache.
# Both modules replace their sibling modules with paths of their own source tree, so neither can be
# `go install`ed: a small module of ours requires them instead, where those replaces do not apply.
build_in_module() {
  local name="$1" gomod="$2"; shift 2
  mkdir -p "$work/$name" && printf '%s\n' "$gomod" >"$work/$name/go.mod" || return 1
  local pair pkg bin
  for pair in "$@"; do
    pkg="${pair#*=}" bin="$(binary "${pair%%=*}")"
    mkdir -p "$(dirname "$bin")"
    (cd "$work/$name" && go build -trimpath ${TAGS:+-tags "$TAGS"} -ldflags "-s -w ${LDFLAGS:-}" -o "$bin.part" "$pkg") >>"$log/$name.log" 2>&1 \
      && mv "$bin.part" "$bin" || return 1
  done
}

status=0
report() { # what t0 binaries...
  local what="$1" t0="$2" b; shift 2
  for b in "$@"; do
    if [ -x "$(binary "$b")" ]; then continue; fi
    say "$what: FAILED after $(( $(date +%s) - t0 )) s; the log ($log) ends:"; tail -n 5 "$log"/*.log; status=1; return
  done
  local paths=(); for b in "$@"; do paths+=("$(binary "$b")"); done
  say "$what: built in $(( $(date +%s) - t0 )) s (${paths[*]})"
}

for b in "${missing[@]}"; do [ "$b" = etcd ] || continue
  t0=$(date +%s)
  : >"$log/etcd.log"
  build_in_module etcd "$(printf 'module rpcstack.local/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s' "$ETCD_VERSION")" \
    etcd=go.etcd.io/etcd/server/v3
  report "etcd $ETCD_VERSION" "$t0" etcd
done

kube=() ctrd=()
for b in "${missing[@]}"; do
  case "$b" in etcd | pause | coredns) ;; *) if containerd_part "$b"; then ctrd+=("$b"); else kube+=("$b"); fi ;; esac
done
if [ "${#kube[@]}" -gt 0 ]; then
  t0=$(date +%s)
  : >"$log/kube.log"
  # k8s.io/kubernetes requires its staging modules (k8s.io/api, apimachinery, client-go, apiserver,
  # ...) at v0.0.0 and replaces them with ./staging/src/...: each is mapped to its published
  # release, v0.<minor>.<patch> for v1.<minor>.<patch>.
  staging="v0.${KUBE_VERSION#v1.}"
  gomod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" 2>>"$log/kube.log" \
    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);if(j.Error){console.error(j.Error);process.exit(1)}console.log(j.GoMod)})' 2>>"$log/kube.log")"
  if [ -n "$gomod" ] && mod="$(go mod edit -json "$gomod" | node -e '
      let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
        const m=JSON.parse(s), [kube,staging]=process.argv.slice(1);
        const local=new Set((m.Replace??[]).filter(r=>r.New.Path.startsWith("./staging/")).map(r=>r.Old.Path));
        const lines=(m.Require??[]).filter(r=>local.has(r.Path)).map(r=>`\t${r.Path} => ${r.Path} ${staging}`);
        console.log(`module rpcstack.local/kube\n\ngo ${m.Go}\n\nrequire k8s.io/kubernetes ${kube}\n\nreplace (\n${lines.join("\n")}\n)`);
      })' "$KUBE_VERSION" "$staging" 2>>"$log/kube.log")"; then
    minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
    # The version variables the release build sets (hack/lib/version.sh), which the API server reports at /version.
    LDFLAGS="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor" \
      build_in_module kube "$mod" $(for b in "${kube[@]}"; do echo "$b=k8s.io/kubernetes/cmd/$b"; done)
  fi
  report "${kube[*]} $KUBE_VERSION" "$t0" "${kube[@]}"
fi
if [ "${#ctrd[@]}" -gt 0 ]; then
  t0=$(date +%s)
  : >"$log/containerd.log"
  # No cgo, so the binaries are static and the btrfs snapshotter (cgo only) drops out; the tags are
  # those of containerd's own static release build (Makefile), the shim's also no_grpc.
  gover="$(go mod download -json "github.com/containerd/containerd/v2@$CONTAINERD_VERSION" 2>>"$log/containerd.log" \
    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);if(j.Error){console.error(j.Error);process.exit(1)}console.log(j.GoMod)})' 2>>"$log/containerd.log")"
  if [ -n "$gover" ] && gover="$(go mod edit -json "$gover" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).Go))')"; then
    mod="$(printf 'module rpcstack.local/containerd\n\ngo %s\n\nrequire github.com/containerd/containerd/v2 %s' "$gover" "$CONTAINERD_VERSION")"
    LDFLAGS="-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION -X github.com/containerd/containerd/v2/version.Package=github.com/containerd/containerd/v2"
    for b in "${ctrd[@]}"; do
      tags="urfave_cli_no_docs osusergo netgo static_build"; [ "$b" = containerd-shim-runc-v2 ] && tags="$tags no_grpc"
      LDFLAGS="$LDFLAGS" TAGS="$tags" build_in_module containerd "$mod" "$b=github.com/containerd/containerd/v2/cmd/$b" || break
    done
  fi
  report "${ctrd[*]} $CONTAINERD_VERSION" "$t0" "${ctrd[@]}"
fi

for b in "${missing[@]}"; do [ "$b" = pause ] || continue
  t0=$(date +%s)
  : >"$log/pause.log"
  # The sandbox every pod's containers join. No registry serves its image here, so the binary is
  # built as the release Makefile builds it and the tests pack it as an image themselves.
  src="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" 2>>"$log/pause.log" \
    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);if(j.Error){console.error(j.Error);process.exit(1)}console.log(j.Dir)})' 2>>"$log/pause.log")"
  bin="$(binary pause)"
  mkdir -p "$(dirname "$bin")"
  [ -n "$src" ] && gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION-rpcstack" -o "$bin.part" "$src/build/pause/linux/pause.c" >>"$log/pause.log" 2>&1 \
    && mv "$bin.part" "$bin"
  report "pause $PAUSE_VERSION" "$t0" pause
done

for b in "${missing[@]}"; do [ "$b" = coredns ] || continue
  t0=$(date +%s)
  : >"$log/coredns.log"
  # The cluster's DNS. Its go.mod has no replace directives and its generated plugin list
  # (core/plugin/zplugin.go, from plugin.cfg) is in the module, so it installs as it is, with the
  # tag and flags of its own Makefile (GOTAGS grpcnotrace, CGO_ENABLED=0: a static binary).
  bin="$(binary coredns)"
  mkdir -p "$(dirname "$bin")" "$work/coredns"
  GOBIN="$work/coredns" go install -trimpath -tags grpcnotrace \
      -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION" \
      "github.com/coredns/coredns@$COREDNS_VERSION" >>"$log/coredns.log" 2>&1 \
    && mv "$work/coredns/coredns" "$bin.part" && mv "$bin.part" "$bin"
  report "coredns $COREDNS_VERSION" "$t0" coredns
done
exit "$status"
