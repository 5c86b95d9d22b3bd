#!/bin/bash
# The key sync (services/gateway.ts): a one-shot container that shares HAProxy's network namespace
# and makes the running gateway's key map and quota map hold exactly the deployed ones, without a
# reload. For each map:
#   1. the deployed map ($DESIRED: digests and names; $DESIRED_QUOTAS: names, calls and periods)
#      is copied over HAProxy's map file ($KEY_MAP, $QUOTA_MAP, on a volume) whole and renamed into
#      place, so a restart reads the same keys and quotas;
#   2. through the runtime API on 127.0.0.1:$ADMIN_PORT: `prepare map` opens a new version, `add map
#      @<version>` fills it, `commit map @<version>` makes it current at once. An entry in both the
#      old and the new map matches throughout; a removed one stops matching at the commit.
# bash's /dev/tcp is the client: the HAProxy image has no socat. Prints names and counts, never keys.
set -euo pipefail

ask() {
  exec 3<>"/dev/tcp/127.0.0.1/$ADMIN_PORT" || return 1
  printf '%s' "$1" >&3
  cat <&3
  exec 3<&-
}

# apply <deployed file> <HAProxy's map file> <mode>
apply() {
  local desired=$1 live=$2 tmp prepared version added="" committed
  tmp="$(dirname "$live")/.$(basename "$live").$$"
  cp "$desired" "$tmp"
  chmod "$3" "$tmp"
  mv -f "$tmp" "$live"

  prepared=$(ask "prepare map $live"$'\n') || { echo "key sync: the runtime API on 127.0.0.1:$ADMIN_PORT does not answer" >&2; exit 1; }
  version=$(sed -n 's/^New version created: \([0-9][0-9]*\)$/\1/p' <<<"$prepared")
  if [ -z "$version" ]; then
    echo "key sync: HAProxy did not open a new version of $live: $prepared" >&2
    exit 1
  fi
  # The payload form of `add map` ends at the first empty line; an empty map needs no add.
  # Comment lines are for HAProxy's file reader, not for the payload.
  if grep -q '^[^#]' "$desired"; then
    added=$(ask "add map @$version $live <<"$'\n'"$(grep -v -e '^$' -e '^#' "$desired")"$'\n\n')
  fi
  committed=$(ask "commit map @$version $live"$'\n')
  if [ -n "${added//[$'\n ']/}" ] || [ -n "${committed//[$'\n ']/}" ]; then
    echo "key sync: HAProxy refused the new $(basename "$live"): $added $committed" >&2
    exit 1
  fi
}

# HAProxy may still be starting: its runtime API answers once every listener is bound.
for _ in $(seq 1 "${WAIT_SECONDS:-60}"); do
  if ask $'show info\n' 2>/dev/null | grep -q '^Name: HAProxy'; then break; fi
  sleep 1
done

apply "$DESIRED" "$KEY_MAP" 600
echo "key sync: $(grep -c . "$DESIRED") keys live: $(cut -d' ' -f2 "$DESIRED" | paste -sd, -)"
if [ -n "${QUOTA_MAP:-}" ]; then
  apply "$DESIRED_QUOTAS" "$QUOTA_MAP" 644
  echo "key sync: $(grep -c '^[^#]' "$DESIRED_QUOTAS" || true) quotas live: $(grep '^[^#]' "$DESIRED_QUOTAS" | tr '\n' ',' | sed 's/,$//')"
fi
