-- range.lua: GET /v0/entities ranges (the chunked range API) starting at random keys.
--
-- The server orders keys as bytes, so key10 < key2: a range of "the next N keys" by number does not
-- exist. This script asks instead for every key that shares a random key's decimal prefix: it draws a
-- key index i, drops its last `digits` digits to get a prefix p, and requests
--   /v0/entities?start=key<p>&end=key<p>~      ('~' sorts after every digit)
-- which returns key<p>, key<p>0 ... key<p>9, key<p>00 ... : about 1.11 * 10^digits keys in a key space of
-- 10^k keys (fewer near its end). digits=0 asks for the keys whose prefix is the whole key i, i.e. key<i>,
-- key<i>0..., so every range is non-empty on a prefilled DB.
--
-- Keys: as in get-random.lua (uniform or zipfian draw of i over key<offset> ... key<offset+keys-1>, each
-- wrk thread with its own deterministic generator seeded with (seed, thread index)).
--
-- Arguments (name=value after the URL):
--   digits=2        decimal digits dropped from the drawn key (range width ~ 1.11 * 10^digits keys)
--   keys=1000000    size of the key space
--   offset=0        first key index
--   dist=uniform    uniform | zipf
--   theta=0.99      zipf skew, 0 < theta < 1
--   scramble=1      spread zipf's hot keys over the key space
--   seed=1          user seed; each thread mixes in its own index
--   path=/v0/entities  range endpoint (takes start= and end=)
--   prefix=key      key prefix: keys are <prefix><index>
--
-- Example: perflab-load -t1 -c4 -d30s -R200 -s wrk-scripts/range.lua http://127.0.0.1:8080 keys=1000000 digits=2
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local lib = dofile(here .. "lib/common.lua")

local spec = lib.key_spec({
   digits = { kind = "int", default = 2, min = 0, max = 12, help = "decimal digits dropped from the drawn key" },
   path = { kind = "string", default = "/v0/entities", help = "range endpoint (takes start= and end=)" },
   prefix = { kind = "string", default = lib.KEY_PREFIX, help = "key prefix: keys are <prefix><index>" },
})
local pick, scale, path

setup = lib.thread_setup()

function init(args)
   local o = lib.parse_args(args, spec, "range.lua")
   if string.sub(o.path, 1, 1) ~= "/" then
      error(string.format("script argument path=%s: must start with /", o.path), 0)
   end
   path, lib.KEY_PREFIX = o.path, o.prefix
   local rng = lib.rng(o.seed, lib.thread_index())
   pick = lib.key_chooser(o, rng)
   scale = 10 ^ o.digits
end

-- the prefix of key index i without its last `digits` digits ("" keeps at least one digit)
local function prefix(i)
   local p = math.floor(i / scale)
   if p == 0 then return tostring(i):sub(1, 1) end
   return tostring(p)
end

function request()
   local p = prefix(pick())
   return wrk.format("GET", path .. "?start=" .. lib.KEY_PREFIX .. p .. "&end=" .. lib.KEY_PREFIX .. p .. "~")
end
