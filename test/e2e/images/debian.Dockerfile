# Real software from Debian standing for the public images that cannot be pulled here:
# HAProxy 2.6 for `haproxy`, certbot 2.1 for `certbot/certbot`, Node.js 18 for `node`.
ARG BASE
FROM ${BASE} AS node
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/* && useradd --uid 1000 --create-home node

FROM ${BASE} AS haproxy
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends haproxy ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/*

FROM ${BASE} AS certbot
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends certbot python3-cryptography ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/*
ENTRYPOINT ["certbot"]
