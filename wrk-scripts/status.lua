-- status.lua: GET /v0/status, the server's cheapest request: the "ceiling" of request handling, with no
-- storage work, against which the GET and PUT breakpoints are compared.
--
-- Arguments (name=value after the URL):
--   path=/v0/status the cheapest endpoint of the server under test (another server: e.g. path=/health)
--
-- Example: perflab-load -t2 -c16 -d30s -R50000 -s wrk-scripts/status.lua http://127.0.0.1:8080
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local lib = dofile(here .. "lib/common.lua")

local req

local spec = { path = { kind = "string", default = "/v0/status", help = "the server's cheapest endpoint" } }

function init(args)
   local o = lib.parse_args(args, spec, "status.lua")
   if string.sub(o.path, 1, 1) ~= "/" then
      error(string.format("script argument path=%s: must start with /", o.path), 0)
   end
   req = wrk.format("GET", o.path)
end

function request()
   return req
end
