# Replicas of one chain for the fault run (standins/replica.js): geth's and Juno's command lines
# and health checks over a chain every replica follows, the chain source they follow, and the
# Lighthouse stand-in beside each geth replica. Built apart from the end-to-end test's stand-ins,
# under their own repository, so runs of other checkouts sharing the engine do not remove them.
ARG NODE
FROM ${NODE} AS replicas
COPY node_modules /opt/standins/node_modules
COPY standins/ /opt/standins/
COPY flags/ /opt/standins/flags/
RUN chmod 0755 /opt/standins/*.js

# geth's image is Alpine: BusyBox wget (its health check uses it), sh, od and tr (jwt-init).
FROM replicas AS geth-replica
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends wget >/dev/null && rm -rf /var/lib/apt/lists/* \
 && ln -s /opt/standins/geth-replica.js /usr/local/bin/geth
ENV RPCSTACK_STANDIN_FLAGS=/opt/standins/flags/geth.json
ENTRYPOINT ["geth"]

# Juno's image ships curl (its health check uses it); the entrypoint is `juno`.
FROM replicas AS juno-replica
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends curl >/dev/null && rm -rf /var/lib/apt/lists/* \
 && ln -s /opt/standins/juno-replica.js /usr/local/bin/juno
ENV RPCSTACK_STANDIN_FLAGS=/opt/standins/flags/juno.json
ENTRYPOINT ["juno"]

# Lighthouse's image has bash and no curl; the command starts with `lighthouse bn` (standins/lighthouse.js).
FROM replicas AS lighthouse
RUN ln -s /opt/standins/lighthouse.js /usr/local/bin/lighthouse
ENV RPCSTACK_STANDIN_FLAGS=/opt/standins/flags/lighthouse.json

FROM replicas AS chain-source
ENTRYPOINT ["node", "/opt/standins/chain-source.js"]
