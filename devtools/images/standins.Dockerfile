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

# The devnet network's L2, from the stand-in in test/support/standins/ (it says what it does not
# prove): Starknet Devnet (entrypoint `tini -- starknet-devnet --host 0.0.0.0`; BusyBox wget for its
# health check). Its L1, geth --dev, is the real geth image (clients.Dockerfile).
FROM standins AS starknet-devnet
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends wget >/dev/null && rm -rf /var/lib/apt/lists/* \
 && ln -s /opt/standins/starknet-devnet.js /usr/local/bin/starknet-devnet
ENTRYPOINT ["starknet-devnet", "--host", "0.0.0.0"]

# The same Devnet stand-in, told to stay at its genesis block: a node that never syncs, for the
# real engine's readiness-timeout test (test/engine/).
FROM starknet-devnet AS starknet-devnet-stalled
ENV RPCSTACK_STANDIN_STALLED=1
