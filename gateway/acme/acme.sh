#!/bin/sh
# Obtains and renews the gateway's certificate with certbot (HTTP-01 behind HAProxy's port 80),
# then hands it to HAProxy without a reload (deploy.sh). Runs in the certbot/certbot image.
#   ACME_DOMAINS   comma-separated names, the first is the certificate's name (required)
#   ACME_EMAIL     ACME account email (required)
#   ACME_SERVER    ACME directory URL (default: Let's Encrypt production)
#   ACME_PORT      port certbot's standalone responder listens on (HAProxy's be_acme) (8888)
#   ACME_INTERVAL  seconds between renewal checks (43200); ACME_ONCE=1 runs one round
#   CERT_FILE, HAPROXY_CERT_SOCKET  used by deploy.sh (the socket takes a certificate, nothing else)
#   CERTBOT_DIR    config/work/logs root (/etc/letsencrypt)
set -eu
: "${ACME_DOMAINS:?set ACME_DOMAINS}" "${ACME_EMAIL:?set ACME_EMAIL}" "${CERT_FILE:?set CERT_FILE}"
dir=${CERTBOT_DIR:-/etc/letsencrypt}
here=$(cd "$(dirname "$0")" && pwd)
while :; do
  # --keep-until-expiring: a no-op until the certificate is within 30 days of expiry.
  if certbot certonly --standalone --non-interactive --agree-tos --keep-until-expiring \
      --preferred-challenges http --http-01-port "${ACME_PORT:-8888}" --http-01-address "${ACME_ADDRESS:-0.0.0.0}" \
      --email "$ACME_EMAIL" --cert-name gateway --domains "$ACME_DOMAINS" \
      --config-dir "$dir" --work-dir "$dir/work" --logs-dir "$dir/logs" \
      ${ACME_SERVER:+--server "$ACME_SERVER"} \
      --deploy-hook "$here/deploy.sh"; then
    # First run after a restart: make sure HAProxy serves what is on disk.
    [ -f "$dir/live/gateway/fullchain.pem" ] && RENEWED_LINEAGE="$dir/live/gateway" "$here/deploy.sh"
  else
    echo "acme: certbot failed; the current certificate stays in place" >&2
  fi
  [ "${ACME_ONCE:-0}" = 1 ] && exit 0
  sleep "${ACME_INTERVAL:-43200}"
done
