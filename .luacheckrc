-- luacheck for the gateway's Lua (gateway/lua/) and its busted specs (test/lua/), run by .ci/lua.
-- HAProxy 2.6 (Debian) embeds Lua 5.3 and the official 3.2 image Lua 5.4: the code keeps to 5.3.
std = "lua53"
-- Programs HAProxy lua-loads see its globals; the modules they require see none.
files["gateway/lua/policy.lua"] = { read_globals = { "core" } }
files["gateway/lua/cache.lua"] = { read_globals = { "core" } }
files["gateway/lua/limits.lua"] = { read_globals = { "core", "filter", "Map" } }
files["gateway/lua/failover.lua"] = { read_globals = { "core", "filter" } }
files["gateway/lua/grpc_limit.lua"] = { read_globals = { "core", "filter" } }
files["gateway/lua/certs.lua"] = { read_globals = { "core", "CertCache" } }
files["gateway/lua/badges.lua"] = { read_globals = { "core" } }
files["gateway/lua/filters.lua"] = { read_globals = { "core" } }
files["gateway/lua/refusals.lua"] = { read_globals = { "core" } }
files["gateway/lua/quotas.lua"] = { read_globals = { "core" } }
files["test/lua"] = { std = "+busted" }
