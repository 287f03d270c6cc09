-- status.lua: GET /v0/status, the server's cheapest request: the "ceiling" of request handling, with no
-- storage work, against which the GET and PUT breakpoints are compared.
--
-- Arguments: none (any argument stops the run with a message).
--
-- Example: perflab-load -t2 -c16 -d30s -R50000 -s wrk-scripts/status.lua http://127.0.0.1:8080
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local lib = dofile(here .. "lib/common.lua")

local req

function init(args)
   lib.parse_args(args, {}, "status.lua")
   req = wrk.format("GET", "/v0/status")
end

function request()
   return req
end
