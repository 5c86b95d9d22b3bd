#!/bin/sh
# certbot deploy hook: one PEM (chain + key) for HAProxy, swapped in through its certificate
# socket (no reload), so open connections are not dropped. The file is written first, so a restart also picks it up.
set -eu
: "${RENEWED_LINEAGE:?certbot sets RENEWED_LINEAGE}" "${CERT_FILE:?set CERT_FILE}"
umask 077
cat "$RENEWED_LINEAGE/fullchain.pem" "$RENEWED_LINEAGE/privkey.pem" > "$CERT_FILE.tmp"
mv "$CERT_FILE.tmp" "$CERT_FILE"
if [ -n "${HAPROXY_CERT_SOCKET:-}" ]; then
  python3 "$(dirname "$0")/haproxy_cert.py" "$HAPROXY_CERT_SOCKET" "$CERT_FILE"
fi
