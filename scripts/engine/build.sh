#!/usr/bin/env bash
# Builds the Pulumi engine this package runs on from the Go module proxy, for machines that cannot
# download Pulumi's prebuilt binaries: the CLI release of the @pulumi/pulumi SDK in
# package-lock.json, its Node.js language host, and the provider plugins of scripts/engine/plugins.json.
# Everything goes into a cache folder outside the checkout, keyed by version, and is reused when
# present. Prints what it built or reused and how long each step took, and writes engine.json
# (what was built, and why anything was not) beside the binaries.
#
# Users with internet access do not need this: `npm run up` installs the CLI with Pulumi's installer
# and the engine downloads the plugins.
set -uo pipefail

usage() {
  cat <<'EOF'
usage: bash scripts/engine/build.sh [--print-dir] [--help]
Builds the Pulumi CLI, its Node.js language host and the provider plugins from the Go module proxy
into $RPCSTACK_CACHE/pulumi/v<cli version>/ (RPCSTACK_CACHE defaults to ~/.cache/rpcstack), or
reuses what an earlier run built there. Put its bin/ first on PATH to use them.
  --print-dir   print the engine folder (bin/ and engine.json are in it) and exit
  --help        this text
Provider plugins go into plugins/ there and into Pulumi's plugin cache ($PULUMI_HOME, ~/.pulumi by
default) under the pinned version. Each is asked its version as the engine asks (GetPluginInfo).
  RPCSTACK_PLUGIN_DIR=DIR          take pulumi-resource-<name> binaries from DIR instead of building them
  RPCSTACK_ACCEPT_PLUGIN="docker@5.1.0 ..."
                                   accept these releases in place of the pins (engine.json records it)
Needs: go (1.25+), node, and npm ci done in this checkout (it reads node_modules/@pulumi/*).
Exit: 0 the CLI and language host are there (engine.json says which plugins could be built),
      1 the CLI or the language host could not be built, 2 bad arguments.
EOF
}

print_dir=0
for arg in "$@"; do
  case "$arg" in
    --help | -h) usage; exit 0 ;;
    --print-dir) print_dir=1 ;;
    *) echo "build.sh: unknown argument \"$arg\"" >&2; usage >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${RPCSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rpcstack}"
cli_version="$(node -p 'require(process.argv[1]).packages["node_modules/@pulumi/pulumi"].version' "$root/package-lock.json")" || {
  echo "build.sh: cannot read @pulumi/pulumi's version from package-lock.json" >&2; exit 1; }
engine="$cache/pulumi/v$cli_version"
if [ "$print_dir" -eq 1 ]; then echo "$engine"; exit 0; fi

command -v go >/dev/null || { echo "build.sh: go is not installed (needs Go 1.25 or newer)" >&2; exit 1; }
mkdir -p "$engine/bin" "$engine/log"
work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# The module proxy's checksum database has no entry for Pulumi's pkg/v3 module (its lookup answers
# 404), so Pulumi's own modules are taken without it; every dependency is still checked against
# the go.sum those modules ship.
export GONOSUMDB="github.com/pulumi/pulumi,github.com/pulumi/pulumi-command,github.com/pulumi/pulumi-docker,github.com/pulumi/pulumi-kubernetes${GONOSUMDB:+,$GONOSUMDB}"
export GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0

now() { date +%s; }
took() { echo "$(( $(now) - $1 )) s"; }
say() { echo "engine: $*"; }

# go mod download of one module version; prints its directory, or the proxy's reason on stderr.
download() {
  local out
  out="$(go mod download -json "$1@$2" 2>&1)"
  local dir; dir="$(printf '%s' "$out" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{const j=JSON.parse(s);if(j.Dir&&!j.Error)console.log(j.Dir);else console.error(j.Error||s)}catch{console.error(s.trim().split("\n").pop())}})')"
  [ -n "$dir" ] && echo "$dir"
}

# A module's source, writable, at $work/<name>.
copy_module() { rm -rf "$work/$2"; cp -r "$1" "$work/$2" && chmod -R u+w "$work/$2"; }

status=0
plugins_json="{}"
record_plugin() { # name version built(true|false) note [extra JSON fields]
  plugins_json="$(node -e 'const [j,n,v,b,note,extra]=[JSON.parse(process.argv[1]),...process.argv.slice(2)]; j[n]={version:v,built:b==="true",note,...(b==="true"?{path:process.argv[7]}:{}),...JSON.parse(`{${extra}}`)}; console.log(JSON.stringify(j))' "$plugins_json" "$1" "$2" "$3" "$4" "${5:-}" "$engine/plugins/pulumi-resource-$1")"
}

# 1. The CLI: pkg/v3 replaces sdk/v3 with ../sdk, so `go install` is refused; lay the two side by side.
t=$(now)
if [ -x "$engine/bin/pulumi" ] && [ "$("$engine/bin/pulumi" version 2>/dev/null)" = "v$cli_version" ]; then
  say "Pulumi CLI v$cli_version: cached ($engine/bin/pulumi)"
else
  pkg="$(download github.com/pulumi/pulumi/pkg/v3 "v$cli_version")" && sdk="$(download github.com/pulumi/pulumi/sdk/v3 "v$cli_version")" \
    && copy_module "$pkg" pkg && copy_module "$sdk" sdk \
    && (cd "$work/pkg" && go build -trimpath -tags osusergo,grpcnotrace \
          -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$cli_version" \
          -o "$engine/bin/pulumi" ./cmd/pulumi) >"$engine/log/cli.log" 2>&1
  if [ -x "$engine/bin/pulumi" ]; then
    say "Pulumi CLI v$cli_version: built in $(took "$t")"
  else
    say "Pulumi CLI v$cli_version: FAILED after $(took "$t"); see $engine/log/cli.log"; tail -n 5 "$engine/log/cli.log" 2>/dev/null
    status=1
  fi
fi

# 2. The Node.js language host. Its module (sdk/nodejs/cmd/pulumi-language-nodejs/v3) has no tag of
# its own: the release's is the pseudo-version of the CLI tag's commit. Where the proxy refuses it,
# the newest host the proxy serves is the one inside sdk/v3 v3.68.0 (the last release before the
# host became a module of its own); the engine speaks to older hosts (it falls back from
# GetRequiredPackages to GetRequiredPlugins) and the host runs the SDK's own `run` script from
# node_modules, so the program runs on the pinned SDK either way. engine.json says which host it is.
LH_FALLBACK=v3.68.0
t=$(now)
lh_note=""
if [ -x "$engine/bin/pulumi-language-nodejs" ] && [ -f "$engine/language-host.txt" ]; then
  lh_note="$(cat "$engine/language-host.txt")"
  say "Node.js language host: cached ($lh_note)"
else
  lh_built=""
  info="$(go list -m -json "github.com/pulumi/pulumi/pkg/v3@v$cli_version" 2>/dev/null || true)"
  pseudo="$(printf '%s' "$info" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{const j=JSON.parse(s);const t=j.Time.replace(/[-:TZ]/g,"").slice(0,14);console.log(`v3.0.0-${t}-${j.Origin.Hash.slice(0,12)}`)}catch{}})')"
  if [ -n "$pseudo" ] && lh="$(download github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3 "$pseudo" 2>"$engine/log/language-host.log")" && [ -d "$work/pkg" ]; then
    mkdir -p "$work/sdk/nodejs/cmd" && copy_module "$lh" sdk/nodejs/cmd/pulumi-language-nodejs \
      && (cd "$work/sdk/nodejs/cmd/pulumi-language-nodejs" && go build -trimpath \
            -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$cli_version" \
            -o "$engine/bin/pulumi-language-nodejs" .) >>"$engine/log/language-host.log" 2>&1 \
      && lh_built="v$cli_version (module $pseudo)"
  fi
  if [ -z "$lh_built" ]; then
    if [ -n "$pseudo" ]; then
      reason="asked the module proxy for github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3@$pseudo, which answered: $(tail -n 1 "$engine/log/language-host.log" 2>/dev/null | sed 's/^[[:space:]]*//')"
    else
      # The pseudo-version needs the tag's commit, which only an Origin in go list's answer gives.
      reason="its module has no tag (the release's is the pseudo-version of the v$cli_version tag's commit), and \`go list -m -json github.com/pulumi/pulumi/pkg/v3@v$cli_version\` names no commit (no Origin in the module proxy's answer), so the module proxy was not asked for it"
    fi
    say "Node.js language host v$cli_version: not built: $reason; building the one in sdk/v3 $LH_FALLBACK"
    if old="$(download github.com/pulumi/pulumi/sdk/v3 "$LH_FALLBACK")" && copy_module "$old" sdk-lh \
      && (cd "$work/sdk-lh" && go build -trimpath \
            -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$LH_FALLBACK" \
            -o "$engine/bin/pulumi-language-nodejs" ./nodejs/cmd/pulumi-language-nodejs) >>"$engine/log/language-host.log" 2>&1; then
      lh_built="$LH_FALLBACK (sdk/v3 $LH_FALLBACK; the v$cli_version host: $reason)"
    fi
  fi
  if [ -n "$lh_built" ]; then
    echo "$lh_built" >"$engine/language-host.txt"
    lh_note="$lh_built"
    say "Node.js language host $lh_built: built in $(took "$t")"
  else
    say "Node.js language host: FAILED after $(took "$t"); see $engine/log/language-host.log"; tail -n 5 "$engine/log/language-host.log"
    status=1
  fi
fi

# 3. Provider plugins, at the versions the npm packages ask for. They are kept in plugins/, off the
# PATH (the engine warns "using ... from $PATH" about every plugin it finds there, whatever its
# version), and installed into Pulumi's plugin cache ($PULUMI_HOME/plugins, ~/.pulumi by default) under
# the pinned version, where the engine looks them up by exact version. Each binary is asked its version
# the way the engine asks it (scripts/engine/pluginVersion.cjs: GetPluginInfo over gRPC): a plugin that
# reports another release is refused, unless RPCSTACK_ACCEPT_PLUGIN names it (e.g. docker@5.1.0).
mkdir -p "$engine/plugins"
reported_version() { node "$root/scripts/engine/pluginVersion.cjs" "$1" 2>>"$engine/log/$name.log"; }
accepted() { local list="${RPCSTACK_ACCEPT_PLUGIN:-}"; case " ${list//,/ } " in *" $name@$1 "*) return 0 ;; *) return 1 ;; esac; }
# Checks $1 (a plugin binary) and installs it; says why not and returns 1 when it is refused.
use_plugin() {
  local from="$1" how="$2" got
  if ! got="$(reported_version "$from")"; then
    reason="$how: the plugin did not answer GetPluginInfo ($(tail -n 1 "$engine/log/$name.log"))"; return 1
  fi
  extra='"reported":"'"$got"'"'
  if [ "$got" != "$version" ]; then
    if ! accepted "$got"; then
      reason="$how: $from reports v$got, not the pinned v$version (GetPluginInfo); give it the v$version build, or accept this one with RPCSTACK_ACCEPT_PLUGIN=$name@$got"
      return 1
    fi
    extra="$extra"',"accepted":"RPCSTACK_ACCEPT_PLUGIN='"$name@$got"'"'
    how="$how; v$got accepted in place of v$version by RPCSTACK_ACCEPT_PLUGIN"
  fi
  [ "$from" = "$plug" ] || cp "$from" "$plug" || { reason="cannot copy $from to $plug"; return 1; }
  if ! "$engine/bin/pulumi" plugin install resource "$name" "$version" --file "$plug" --reinstall >>"$engine/log/$name.log" 2>&1; then
    reason="$how: pulumi plugin install failed ($(tail -n 1 "$engine/log/$name.log"))"; return 1
  fi
  say "plugin $name v$version: $how (reports v$got), installed into Pulumi's plugin cache"
  record_plugin "$name" "$version" true "$how" "$extra"
}
for name in $(node -p 'Object.keys(require(process.argv[1])).filter(k=>!k.startsWith("$")).join(" ")' "$root/scripts/engine/plugins.json"); do
  field() { node -p 'require(process.argv[1])[process.argv[2]][process.argv[3]] ?? ""' "$root/scripts/engine/plugins.json" "$name" "$1"; }
  version="$(field version)" module="$(field module)" modver="$(field moduleVersion)" main="$(field main)"
  plug="$engine/plugins/pulumi-resource-$name"
  # Earlier builds put plugins in bin/, on the PATH: the engine would take them from there, with a warning.
  rm -f "$engine/bin/pulumi-resource-$name" "$engine/bin/pulumi-resource-$name.version"
  : >"$engine/log/$name.log"
  t=$(now)
  reason=""
  if [ -n "${RPCSTACK_PLUGIN_DIR:-}" ] && [ -x "$RPCSTACK_PLUGIN_DIR/pulumi-resource-$name" ]; then
    use_plugin "$RPCSTACK_PLUGIN_DIR/pulumi-resource-$name" "taken from RPCSTACK_PLUGIN_DIR" && continue
    say "plugin $name v$version: not used: $reason"; record_plugin "$name" "$version" false "$reason"; continue
  elif [ -x "$plug" ]; then
    use_plugin "$plug" "cached" && continue
  fi
  if [ -z "$module" ] || [ -z "$modver" ]; then
    reason="${reason:+$reason; }no module version of its provider is known for v$version, so the module proxy was not asked ($(field usedBy))"
    say "plugin $name v$version: not built: $reason"; record_plugin "$name" "$version" false "$reason"; continue
  fi
  if ! src="$(download "$module" "$modver" 2>>"$engine/log/$name.log")"; then
    reason="asked the module proxy for $module@$modver (the $(field releaseTag) tag's commit), which answered: $(tail -n 1 "$engine/log/$name.log" | sed 's/^[[:space:]]*//')"
    say "plugin $name v$version: not built: $reason"; record_plugin "$name" "$version" false "$reason"; continue
  fi
  # The binary says the release it is built from (releaseTag), which a stand-in for the pin is not.
  tags="$(field tags)" var="$(field versionVariable)" release="$(field releaseTag)" sdk="$(field sdk)"
  release="${release#v}"
  # A provider module that replaces its SDK with ../sdk gets the SDK's release beside it; one that
  # embeds generated files generates them first (its own go:generate, VERSION as the release sets it).
  if mkdir -p "$work/plugin-$name" && copy_module "$src" "plugin-$name/provider" \
      && { [ -z "$sdk" ] || { sdk_src="$(download "${sdk%@*}" "${sdk##*@}" 2>>"$engine/log/$name.log")" && copy_module "$sdk_src" "plugin-$name/sdk"; }; } \
      && (cd "$work/plugin-$name/provider" && { [ "$(field generate)" != true ] || VERSION="$release" go generate "$main"; } \
        && go build -trimpath ${tags:+-tags "$tags"} -ldflags "-X $var=$release" -o "$plug" "$main") >>"$engine/log/$name.log" 2>&1; then
    use_plugin "$plug" "built from $module@$modver in $(took "$t")" && continue
    say "plugin $name v$version: not used: $reason"; record_plugin "$name" "$version" false "$reason"
  else
    reason="go build of $module@$modver failed: $(tail -n 1 "$engine/log/$name.log")"
    say "plugin $name v$version: not built: $reason"; record_plugin "$name" "$version" false "$reason"
  fi
done

node -e 'const fs=require("fs"); fs.writeFileSync(process.argv[1], JSON.stringify({cli: process.argv[2], languageHost: process.argv[3], plugins: JSON.parse(process.argv[4])}, null, 2)+"\n")' \
  "$engine/engine.json" "v$cli_version" "$lh_note" "$plugins_json"
say "engine in $engine (bin/, plugins/, engine.json)"
exit "$status"
