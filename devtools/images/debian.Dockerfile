# Real software from Debian standing for the public images that cannot be pulled here:
# certbot 2.1 for `certbot/certbot`, Node.js 18 for `node`; for `haproxy`, the HAProxy release the
# gateway's image pins, the binary the other tests run (scripts/haproxy/build.sh), placed at the
# path its loader and libraries were unpacked at (the file `prefix`), with the account the official
# image makes for it (uid and gid 99: HAPROXY_IMAGE_ACCOUNT in devtools/haproxy.ts).
ARG BASE
FROM ${BASE} AS node
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/* && useradd --uid 1000 --create-home node

FROM ${BASE} AS haproxy
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/*
COPY haproxy /tmp/haproxy
RUN prefix="$(cat /tmp/haproxy/prefix)" && mkdir -p "$(dirname "$prefix")" && mv /tmp/haproxy/root "$prefix" && rm -rf /tmp/haproxy \
 && ln -s "$prefix/usr/sbin/haproxy" /usr/local/sbin/haproxy && haproxy -v \
 && groupadd --gid 99 --system haproxy && useradd --uid 99 --system --gid haproxy --home-dir /var/lib/haproxy --no-create-home --shell /usr/sbin/nologin haproxy \
 && mkdir -p /var/lib/haproxy /run/haproxy

FROM ${BASE} AS certbot
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends certbot python3-cryptography ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/*
ENTRYPOINT ["certbot"]

# Debian's Redis 7.0 for `valkey/valkey` (the counter store of a cluster's gateway replicas): Valkey
# forked Redis 7.2 and speaks its protocol; the stack's command line and probe call it by Valkey's
# names, so they are links to Redis's binaries. What it does not prove: Valkey's own server.
FROM ${BASE} AS valkey
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s /usr/bin/redis-server /usr/local/bin/valkey-server && ln -s /usr/bin/redis-cli /usr/local/bin/valkey-cli
USER redis
CMD ["valkey-server"]
