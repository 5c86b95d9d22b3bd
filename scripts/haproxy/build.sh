#!/usr/bin/env bash
# Makes the gateway's HAProxy runnable on this machine, at the release production pins
# (config/networks/images.ts), for the tests, the end-to-end gateway image and the bench: Debian
# unstable's binary package of that release and the libraries it links, unpacked into a cache
# folder outside the checkout and pointed at them (patchelf: its own loader and library path), so
# it runs natively on Debian bookworm beside bookworm's own libraries. Why not a build from source:
# the Debian mirror reached here serves unstable's binary packages but not its source packages.
# jemalloc, which Debian's build links, is dropped so that HAProxy allocates with glibc's malloc as
# the official image's build does (the memory figures in docs/cache.md depend on it).
set -uo pipefail

usage() {
  cat <<'USAGE'
usage: bash scripts/haproxy/build.sh [--print-path] [--help]
Unpacks HAProxy at the release pinned in config/networks/images.ts (image haproxy:X.Y.Z) into
$RPCSTACK_CACHE/haproxy/X.Y.Z/ (RPCSTACK_CACHE defaults to ~/.cache/rpcstack), reused when present.
  --print-path   print where the haproxy binary is (or will be) and exit
  --help         this text
Exit: 0 ready or cached, 1 it failed, 2 bad arguments.
USAGE
}

root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${RPCSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rpcstack}"
version="$(sed -n 's/.*"haproxy:\([0-9][0-9.]*\)".*/\1/p' "$root/config/networks/images.ts" | head -n 1)"
dir="$cache/haproxy/$version"
bin="$dir/root/usr/sbin/haproxy"
# The runtime libraries of unstable's haproxy package (ldd of its binary), jemalloc left out.
LIBS=(libc6 libcrypt1 libgcc-s1 liblua5.4-0 libopentracing-c-wrapper0t64 libopentracing1 libpcre2-8-0 libssl3t64 libstdc++6 libzstd1 zlib1g)

case "${1:-}" in
  "") ;;
  --help | -h) usage; exit 0 ;;
  --print-path) echo "$bin"; exit 0 ;;
  *) echo "build.sh: unknown argument \"$1\"" >&2; usage >&2; exit 2 ;;
esac
[ -n "$version" ] || { echo "haproxy: cannot read the pin from config/networks/images.ts"; exit 1; }

# The release the binary reports (read whole: grep -q closing the pipe early fails it under pipefail).
runs() { [ -x "$bin" ] && [[ "$("$bin" -v 2>/dev/null)" == *"version $version-"* ]]; }
# What was unpacked depends on this script too: a changed script unpacks again.
recipe="$(sha256sum "$0" | cut -c1-16)"
if runs && [ "$(cat "$dir/recipe" 2>/dev/null)" = "$recipe" ]; then
  echo "haproxy: $version: cached ($bin)"; exit 0
fi
command -v patchelf >/dev/null || { echo "haproxy: needs patchelf (Debian package patchelf)"; exit 1; }

t0=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs" "$dir/root"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" >"$dir/apt/sources.list"
# A private apt state: the machine's own sources and lists stay as they are. A frozen mirror's
# unstable index can be past its Valid-Until date: that check is off, the signature check is not.
apt_opts=(-o "Dir::Etc::SourceList=$dir/apt/sources.list" -o "Dir::Etc::SourceParts=-" -o "Dir::State::Lists=$dir/apt/lists"
  -o "Dir::Cache=$dir/apt/cache" -o "Dir::State::Status=/dev/null" -o "Acquire::Check-Valid-Until=false" -o "APT::Get::List-Cleanup=false")
fail() { echo "haproxy: $version: FAILED after $(( $(date +%s) - t0 )) s: $1"; exit 1; }
apt-get "${apt_opts[@]}" update -qq >"$dir/apt.log" 2>&1 || fail "apt-get update (see $dir/apt.log)"
pkg="$(apt-cache "${apt_opts[@]}" madison haproxy 2>/dev/null | awk -v v="$version-" '$3 ~ "^" v {print $3; exit}')"
[ -n "$pkg" ] || fail "Debian unstable has no haproxy $version (it has: $(apt-cache "${apt_opts[@]}" madison haproxy | awk '{print $3}' | tr '\n' ' '))"
(cd "$dir/debs" && apt-get "${apt_opts[@]}" download "haproxy=$pkg" "${LIBS[@]}" >>"$dir/apt.log" 2>&1) || fail "apt-get download (see $dir/apt.log)"
for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root" || fail "dpkg-deb -x $deb"; done
# Documentation is not needed, and its links into packages not unpacked here would dangle.
rm -rf "$dir/root/usr/share/doc" "$dir/root/usr/share/man" "$dir/root/usr/share/lintian"
find "$dir/root" -xtype l -delete
libdir="$dir/root/usr/lib/x86_64-linux-gnu"
# DT_RPATH (not RUNPATH) so that the libraries' own dependencies are found there too.
# One change per call: patchelf 0.14 drops --remove-needed when other changes come with it.
patchelf --remove-needed libjemalloc.so.2 "$bin" && patchelf --set-interpreter "$libdir/ld-linux-x86-64.so.2" "$bin" \
  && patchelf --force-rpath --set-rpath "$libdir" "$bin" || fail "patchelf"
rm -rf "$dir/apt" "$dir/debs"
echo "$recipe" >"$dir/recipe"
runs || fail "the unpacked binary does not run: $("$bin" -v 2>&1 | head -n 3)"
echo "haproxy: $version ($pkg): ready in $(( $(date +%s) - t0 )) s ($bin)"
