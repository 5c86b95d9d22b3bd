#!/bin/sh
# The guide's `/indexer/indexer.sh`, kept as the entry point: it runs the package's indexer.
exec node /indexer/indexer.mjs "$@"
