# Stand-ins for the clients whose images cannot be pulled here: each takes the real image's
# entrypoint and command line (see standins/*.js for what each proves and does not).
ARG NODE
FROM ${NODE} AS standins
COPY node_modules /opt/standins/node_modules
COPY standins/ /opt/standins/
COPY flags/ /opt/standins/flags/
# Entry points run through the symlinks below, whatever mode the checkout gave them.
RUN chmod 0755 /opt/standins/*.js

# Lighthouse's image has bash and no curl; the command starts with `lighthouse bn`.
FROM standins AS lighthouse
RUN ln -s /opt/standins/lighthouse.js /usr/local/bin/lighthouse
ENV RPCSTACK_STANDIN_FLAGS=/opt/standins/flags/lighthouse.json

# Juno's image ships curl (its health check uses it); the entrypoint is `juno`.
FROM standins AS juno
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends curl >/dev/null && rm -rf /var/lib/apt/lists/* \
 && ln -s /opt/standins/juno.js /usr/local/bin/juno
ENV RPCSTACK_STANDIN_FLAGS=/opt/standins/flags/juno.json
ENTRYPOINT ["juno"]

# Pathfinder's image runs as uid 1000 with its data directory owned by it; it has bash, no curl.
FROM standins AS pathfinder
RUN ln -s /opt/standins/pathfinder.js /usr/local/bin/pathfinder \
 && mkdir -p /usr/share/pathfinder/data && chown -R 1000:1000 /usr/share/pathfinder
ENV RPCSTACK_STANDIN_FLAGS=/opt/standins/flags/pathfinder.json
ENTRYPOINT ["pathfinder"]

# A Starknet Devnet that stays at its genesis block whatever its command line says: a node that
# never syncs, for the real engine's readiness-timeout test (test/engine/). The real Devnet (the
# devnet network's L2 everywhere else, clients.Dockerfile) seals a block every
# --block-generation-on seconds, which is the flag the stack passes, so it cannot show this case.
FROM standins AS starknet-devnet-stalled
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends wget >/dev/null && rm -rf /var/lib/apt/lists/* \
 && ln -s /opt/standins/starknet-devnet.js /usr/local/bin/starknet-devnet
ENV RPCSTACK_STANDIN_STALLED=1
ENTRYPOINT ["starknet-devnet", "--host", "0.0.0.0"]
