-- wrk: one JSON-RPC eth_blockNumber POST per request.
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'
wrk.headers["Content-Type"] = "application/json"
