# HAProxy from Debian unstable (the 3.2 line, as the gateway's production image runs), for the
# tests of what HAProxy 3.2 does differently from bookworm's 2.6. The mirror's unstable index can
# be past its Valid-Until date on a frozen mirror: that check is off, the signature check is not.
ARG BASE
FROM ${BASE}
RUN apt-get -o Acquire::Check-Valid-Until=false update -qq \
 && apt-get install -y -qq --no-install-recommends haproxy ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/*
