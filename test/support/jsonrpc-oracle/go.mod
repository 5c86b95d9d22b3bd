module rpcstack.test/jsonrpc-oracle

go 1.21
