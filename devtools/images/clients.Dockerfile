# Software built from its package registries (scripts/clients/build.sh), on the Debian base, for the
# public images that cannot be pulled here.
ARG BASE
# ethereum/client-go: geth at the pin, entrypoint `geth`. The real image is Alpine; what the package
# runs in it besides geth is wget (the health check) and sh, od, tr (jwt-init): Debian has them all.
FROM ${BASE} AS geth
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends wget ca-certificates >/dev/null && rm -rf /var/lib/apt/lists/*
COPY geth /usr/local/bin/geth
EXPOSE 8545 8546 8551 30303 30303/udp
ENTRYPOINT ["geth"]

# shardlabs/starknet-devnet-rs: Starknet Devnet at the pin, built from crates.io. The real image is
# Alpine with tini and BusyBox wget (the health check), entrypoint `tini -- starknet-devnet --host 0.0.0.0`.
# Devnet builds an HTTPS client at start (reqwest, for forking), which panics without the system's
# CA certificates and takes the block generator down with it: the chain stays at block 0.
FROM ${BASE} AS starknet-devnet
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends tini wget ca-certificates >/dev/null && rm -rf /var/lib/apt/lists/*
COPY starknet-devnet /usr/local/bin/starknet-devnet
EXPOSE 5050
ENTRYPOINT ["tini", "--", "starknet-devnet", "--host", "0.0.0.0"]

# prom/prometheus: Prometheus at the pin, built from its Go module, at the official image's paths
# (/bin/prometheus, /prometheus for its data, user nobody; its Dockerfile in the module), without the
# example configuration (the stack mounts its own). The real image is BusyBox, whose wget the health
# check uses: Debian's wget here. Built without the web UI's assets (scrapes and the API need none).
FROM ${BASE} AS prometheus
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends wget ca-certificates >/dev/null && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /prometheus /etc/prometheus && chown nobody:nogroup /prometheus /etc/prometheus && chmod g+w /prometheus
COPY prometheus /bin/prometheus
WORKDIR /prometheus
USER nobody
EXPOSE 9090
ENTRYPOINT ["/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
