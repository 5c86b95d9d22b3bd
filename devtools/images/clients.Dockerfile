# Node clients built from their package registries (scripts/clients/build.sh), on the Debian base,
# for the public images that cannot be pulled here.
ARG BASE
# ethereum/client-go: geth at the pin, entrypoint `geth`. The real image is Alpine; what the package
# runs in it besides geth is wget (the health check) and sh, od, tr (jwt-init): Debian has them all.
FROM ${BASE} AS geth
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends wget ca-certificates >/dev/null && rm -rf /var/lib/apt/lists/*
COPY geth /usr/local/bin/geth
EXPOSE 8545 8546 8551 30303 30303/udp
ENTRYPOINT ["geth"]
