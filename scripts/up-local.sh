#!/usr/bin/env bash
# `npm run up`: deploy the local stack in one command. Uses your Pulumi login if you have one,
# otherwise a state folder in this checkout; generates a project key on first run.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "rpcstack: $*" >&2; exit 1; }
command -v pulumi >/dev/null || die "the Pulumi CLI is required (https://www.pulumi.com/docs/install/)"
command -v docker >/dev/null && docker info >/dev/null 2>&1 || die "a running Docker daemon is required for the local stack"
[ -d node_modules ] || npm ci --no-audit --no-fund

if ! pulumi whoami >/dev/null 2>&1; then
  mkdir -p .pulumi-state
  export PULUMI_BACKEND_URL="file://$PWD/.pulumi-state"
  # A local trial stack; set your own passphrase in the environment for anything you keep.
  export PULUMI_CONFIG_PASSPHRASE="${PULUMI_CONFIG_PASSPHRASE-}"
fi

pulumi stack select --create local
if ! pulumi config get projectKeys --stack local >/dev/null 2>&1; then
  key=$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64url"))')
  pulumi config set --secret --stack local projectKeys "[{\"name\":\"local\",\"key\":\"$key\"}]"
  echo "rpcstack: generated a project key; read it with: pulumi config get projectKeys --stack local"
fi
exec pulumi up --stack local "$@"
