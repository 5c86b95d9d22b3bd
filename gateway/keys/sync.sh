#!/bin/bash
# The key sync (services/gateway.ts): a one-shot container that shares HAProxy's network namespace
# and makes the running gateway's key map hold exactly the deployed keys, without a reload:
#   1. the deployed map ($DESIRED, digests and names) is copied over HAProxy's map file ($KEY_MAP,
#      on a volume) whole and renamed into place, so a restart reads the same keys;
#   2. through the runtime API on 127.0.0.1:$ADMIN_PORT: `prepare map` opens a new version, `add map
#      @<version>` fills it, `commit map @<version>` makes it current at once. A key in both the old
#      and the new map matches throughout; a removed one stops matching at the commit.
# bash's /dev/tcp is the client: the HAProxy image has no socat. Prints names and counts, never keys.
set -euo pipefail

ask() {
  exec 3<>"/dev/tcp/127.0.0.1/$ADMIN_PORT" || return 1
  printf '%s' "$1" >&3
  cat <&3
  exec 3<&-
}

# HAProxy may still be starting: its runtime API answers once every listener is bound.
for _ in $(seq 1 "${WAIT_SECONDS:-60}"); do
  if ask $'show info\n' 2>/dev/null | grep -q '^Name: HAProxy'; then break; fi
  sleep 1
done

tmp="$(dirname "$KEY_MAP")/.keys.map.$$"
cp "$DESIRED" "$tmp"
chmod 600 "$tmp"
mv -f "$tmp" "$KEY_MAP"

prepared=$(ask "prepare map $KEY_MAP"$'\n') || { echo "key sync: the runtime API on 127.0.0.1:$ADMIN_PORT does not answer" >&2; exit 1; }
version=$(sed -n 's/^New version created: \([0-9][0-9]*\)$/\1/p' <<<"$prepared")
if [ -z "$version" ]; then
  echo "key sync: HAProxy did not open a new version of $KEY_MAP: $prepared" >&2
  exit 1
fi
# The payload form of `add map` ends at the first empty line.
added=$(ask "add map @$version $KEY_MAP <<"$'\n'"$(grep -v '^$' "$DESIRED")"$'\n\n')
committed=$(ask "commit map @$version $KEY_MAP"$'\n')
if [ -n "${added//[$'\n ']/}" ] || [ -n "${committed//[$'\n ']/}" ]; then
  echo "key sync: HAProxy refused the new key map: $added $committed" >&2
  exit 1
fi
echo "key sync: $(grep -c . "$DESIRED") keys live: $(cut -d' ' -f2 "$DESIRED" | paste -sd, -)"
