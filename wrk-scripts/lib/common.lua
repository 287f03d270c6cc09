-- Shared code of the perflab workload scripts (wrk-scripts/*.lua). Not a workload by itself.
--
-- Loaded by each script with `dofile` from the script's own directory, so a script can be run from
-- any working directory, by perflab-load or by a real wrk/wrk2 (both open Lua's standard libraries,
-- including `debug`, which is how a script finds its own path). Plain Lua 5.1 (LuaJIT), only the wrk
-- API, no C modules and no `bit` library: every number below stays an exact integer in a double.
--
-- What it gives:
--   parse_args(args, spec, script) key=value arguments checked against a spec; error() with a message
--   rng(seed, stream)              a deterministic PRNG (L'Ecuyer's combined LCG, period ~2.3e18)
--   key_chooser(opts, rng)         uniform or zipfian key indexes over [0, keys)
--   value_maker(size, rng)         incompressible printable values of a fixed size
--   thread_setup()                 a setup(thread) that numbers wrk's threads 0, 1, 2, ...
local M = {}

M.KEY_PREFIX = "key"             -- the server's Prefill writes key0 .. key<N-1> (docs/contracts/server.md §4)
M.ENTITY = "/v0/entity?id="      -- the course API; path=, param= and prefix= point the scripts elsewhere
M.QUERY = ""                     -- after the key: a cluster's &ack=&from= or &replicas= (see replica_query)
M.MAX_KEYS = 2 ^ 40              -- indexes stay exact integers and print without an exponent

-- Arguments -------------------------------------------------------------------------------------
-- spec: { name = { kind = "int"|"number"|"string"|"bool"|"choice", default = v, min = v, max = v,
--                  choices = {..}, help = "..." } }
-- Arguments arrive as `name=value` strings (wrk passes args[0] = URL, extras from args[1]).
function M.usage(script, spec)
   local names = {}
   for k in pairs(spec) do names[#names + 1] = k end
   table.sort(names)
   local lines = { string.format("usage: -s %s URL [name=value ...]; arguments:%s", script,
                                 #names == 0 and " none" or "") }
   for _, k in ipairs(names) do
      local s = spec[k]
      local kind = s.kind == "choice" and table.concat(s.choices, "|") or s.kind
      local d = s.default
      if type(d) == "boolean" then d = d and 1 or 0 end
      local default = d == nil and "required" or ("default " .. tostring(d))
      lines[#lines + 1] = string.format("  %s=<%s> (%s)%s", k, kind, default, s.help and (": " .. s.help) or "")
   end
   return table.concat(lines, "\n")
end

local function fail(usage, fmt, ...)
   error(string.format(fmt, ...) .. (usage and ("\n" .. usage) or ""), 0)
end

-- script: the script's file name (for the usage text in error messages).
function M.parse_args(args, spec, script)
   local usage = script and M.usage(script, spec)
   local opts = {}
   for name, s in pairs(spec) do opts[name] = s.default end
   for _, arg in ipairs(args or {}) do
      local name, raw = string.match(arg, "^%-*([%w_]+)=(.*)$")
      if not name then
         fail(usage, "bad script argument %q: expected name=value", arg)
      end
      local s = spec[name]
      if not s then
         local known = {}
         for k in pairs(spec) do known[#known + 1] = k end
         table.sort(known)
         if #known == 0 then fail(usage, "unknown script argument %q: this script takes no arguments", name) end
         fail(usage, "unknown script argument %q (known: %s)", name, table.concat(known, ", "))
      end
      local value
      if s.kind == "int" or s.kind == "number" then
         value = tonumber(raw)
         if value == nil or value ~= value then
            fail(usage, "script argument %s=%s: not a number", name, raw)
         end
         if s.kind == "int" and value ~= math.floor(value) then
            fail(usage, "script argument %s=%s: must be an integer", name, raw)
         end
      elseif s.kind == "bool" then
         if raw == "1" or raw == "true" or raw == "yes" then value = true
         elseif raw == "0" or raw == "false" or raw == "no" then value = false
         else fail(usage, "script argument %s=%s: expected 1/0 (true/false)", name, raw) end
      elseif s.kind == "choice" then
         for _, c in ipairs(s.choices) do if c == raw then value = raw end end
         if value == nil then
            fail(usage, "script argument %s=%s: expected one of %s", name, raw, table.concat(s.choices, ", "))
         end
      else
         value = raw
      end
      opts[name] = value
   end
   for name, s in pairs(spec) do
      local v = opts[name]
      if v == nil then
         if s.required then fail(usage, "missing script argument %s=<%s>", name, s.kind) end
      elseif s.kind == "int" or s.kind == "number" then
         if s.min ~= nil and v < s.min then
            fail(usage, "script argument %s=%s: must be >= %s", name, tostring(v), tostring(s.min))
         end
         if s.max ~= nil and v > s.max then
            fail(usage, "script argument %s=%s: must be <= %s", name, tostring(v), tostring(s.max))
         end
         if s.above ~= nil and v <= s.above then
            fail(usage, "script argument %s=%s: must be > %s", name, tostring(v), tostring(s.above))
         end
         if s.below ~= nil and v >= s.below then
            fail(usage, "script argument %s=%s: must be < %s", name, tostring(v), tostring(s.below))
         end
      end
   end
   return opts
end

-- Random numbers ---------------------------------------------------------------------------------
-- L'Ecuyer (1988) combined multiplicative LCG: two generators mod 2^31-85 and 2^31-249. Products stay
-- below 2^47, so plain double arithmetic is exact and the sequence is the same on every Lua.
local M1, A1 = 2147483563, 40014
local M2, A2 = 2147483399, 40692

local Rng = {}
Rng.__index = Rng

-- seed: the user's seed (any integer); stream: the wrk thread index. Different (seed, stream) pairs
-- give different starting states; the same pair always gives the same sequence.
function M.rng(seed, stream)
   seed = math.floor(math.abs(seed or 0)) % (M1 - 1)
   stream = math.floor(math.abs(stream or 0)) % 65536
   local s1 = (seed * 16807 % (M1 - 1) + stream * 69069 + 1) % (M1 - 1) + 1
   local s2 = (seed * 48271 % (M2 - 1) + stream * 1103 + 7) % (M2 - 1) + 1
   local r = setmetatable({ s1 = s1, s2 = s2 }, Rng)
   for _ = 1, 16 do r:next() end      -- move away from the seeds' neighbourhood
   return r
end

-- a number in (0, 1)
function Rng:next()
   local s1 = (A1 * self.s1) % M1
   local s2 = (A2 * self.s2) % M2
   self.s1, self.s2 = s1, s2
   local z = s1 - s2
   if z < 1 then z = z + (M1 - 1) end
   return z / M1
end

-- an integer in [0, n)
function Rng:int(n)
   local v = math.floor(self:next() * n)
   if v >= n then v = n - 1 end
   return v
end

-- Zipfian keys -----------------------------------------------------------------------------------
-- The generator YCSB uses (Gray et al., "Quickly generating billion-record synthetic databases",
-- SIGMOD 1994): rank r (0 = most popular) has probability ~ (r+1)^-theta / zeta(n, theta).
-- zeta(n, theta) is summed exactly up to 10^5 terms and by Euler-Maclaurin beyond.
function M.zeta(n, theta)
   local m = math.min(n, 100000)
   local s = 0
   for i = 1, m do s = s + i ^ (-theta) end
   if n > m then
      local f = function(x) return x ^ (-theta) end
      local df = function(x) return -theta * x ^ (-theta - 1) end
      s = s + (n ^ (1 - theta) - m ^ (1 - theta)) / (1 - theta) + (f(n) - f(m)) / 2 + (df(n) - df(m)) / 12
   end
   return s
end

function M.zipf(n, theta, rng)
   local zetan = M.zeta(n, theta)
   local zeta2 = M.zeta(2, theta)
   local alpha = 1 / (1 - theta)
   local eta = (1 - (2 / n) ^ (1 - theta)) / (1 - zeta2 / zetan)
   local half = 0.5 ^ theta
   return function()
      local u = rng:next()
      local uz = u * zetan
      if uz < 1 then return 0 end
      if uz < 1 + half then return 1 end
      local r = math.floor(n * (eta * u - eta + 1) ^ alpha)
      if r >= n then r = n - 1 end
      return r
   end
end

-- Scrambling: zipfian ranks 0, 1, 2... would be keys key0, key1, key2 (adjacent, in one SSTable block).
-- scramble=1 maps rank r to (r * P + Q) mod n, a permutation of [0, n) when P and n are coprime, so the
-- hot keys are spread over the key space as in YCSB's scrambled zipfian. P < 2^13, n <= 2^40: exact.
local PRIMES = { 7919, 7927, 7933, 7937, 7949, 7951, 7963 }
function M.scramble_params(n)
   for _, p in ipairs(PRIMES) do
      if n % p ~= 0 then return p % n, math.floor(n / 3) end
   end
   return 1, 0
end

-- opts: keys, dist ("uniform" | "zipf"), theta, scramble, offset. Returns a function giving key indexes.
function M.key_chooser(opts, rng)
   local n, offset = opts.keys, opts.offset or 0
   local pick
   if opts.dist == "zipf" then
      local z = M.zipf(n, opts.theta, rng)
      if opts.scramble then
         local p, q = M.scramble_params(n)
         pick = function() return offset + (z() * p + q) % n end
      else
         pick = function() return offset + z() end
      end
   else
      pick = function() return offset + rng:int(n) end
   end
   return pick
end

-- Values -----------------------------------------------------------------------------------------
-- A pool of random printable bytes made once per thread (64 KiB, or twice the value size if larger);
-- each value is a window of `size` bytes at a random offset, so values almost never repeat and do not
-- compress away (RocksDB compresses its blocks).
function M.value_maker(size, rng)
   if size == 0 then return function() return "" end end
   local pool_size = math.max(2 * size, 65536)
   local chars = {}
   for i = 1, pool_size + size do chars[i] = string.char(33 + rng:int(94)) end
   local pool = table.concat(chars)
   return function()
      local at = 1 + rng:int(pool_size)
      return string.sub(pool, at, at + size - 1)
   end
end

function M.key(i)
   return M.KEY_PREFIX .. i
end

function M.get(i)
   return wrk.format("GET", M.ENTITY .. M.KEY_PREFIX .. i .. M.QUERY)
end

function M.put(i, body)
   return wrk.format("PUT", M.ENTITY .. M.KEY_PREFIX .. i .. M.QUERY, nil, body)
end

function M.delete(i)
   return wrk.format("DELETE", M.ENTITY .. M.KEY_PREFIX .. i .. M.QUERY)
end

-- Threads ----------------------------------------------------------------------------------------
-- wrk calls setup(thread) in its main Lua state once per thread, just before that thread's init(args);
-- thread:set copies the index into the thread's own Lua state as the global `perflab_thread`.
function M.thread_setup()
   local next_index = 0
   return function(thread)
      thread:set("perflab_thread", next_index)
      next_index = next_index + 1
   end
end

function M.thread_index()
   return rawget(_G, "perflab_thread") or 0
end

-- Where the keys go: the course API by default, any server's key-value endpoint with path=, param=
-- and prefix= (e.g. path=/kv param=key prefix=user: GET /kv?key=user17). A cluster's replication
-- parameters go after the key in either API style (docs/contracts/cluster.md section 7): ack= and from=
-- (`&ack=2&from=3`) or replicas= (`&replicas=2/3`); none of them: the server's defaults.
function M.api_spec(spec, path)
   spec.path = { kind = "string", default = path or "/v0/entity", help = "endpoint of one key" }
   spec.param = { kind = "string", default = "id", help = "query parameter that carries the key" }
   spec.prefix = { kind = "string", default = M.KEY_PREFIX, help = "key prefix: keys are <prefix><index>" }
   spec.ack = { kind = "int", min = 1, max = 256, help = "cluster: replicas that must answer (&ack=)" }
   spec.from = { kind = "int", min = 1, max = 256, help = "cluster: replicas asked (&from=)" }
   spec.replicas = { kind = "string", help = "cluster: ack/from in the older style A/F (&replicas=)" }
   return spec
end

-- The query suffix of the replication arguments (checked here, so a run with ack > from never starts:
-- the server would answer every request 400).
function M.replica_query(o)
   if o.replicas ~= nil then
      if o.ack ~= nil or o.from ~= nil then
         error("script arguments replicas= and ack=/from= are two styles of the same thing: give one", 0)
      end
      local a, f = string.match(o.replicas, "^(%d+)/(%d+)$")
      if not a then
         error(string.format("script argument replicas=%s: expected ACK/FROM, e.g. replicas=2/3", o.replicas), 0)
      end
      a, f = tonumber(a), tonumber(f)
      if a < 1 or f < 1 or a > f then
         error(string.format("script argument replicas=%s: needs 1 <= ack <= from", o.replicas), 0)
      end
      return "&replicas=" .. a .. "/" .. f
   end
   if o.ack ~= nil and o.from ~= nil and o.ack > o.from then
      error(string.format("script arguments ack=%d from=%d: ack must not exceed from", o.ack, o.from), 0)
   end
   return (o.ack and ("&ack=" .. o.ack) or "") .. (o.from and ("&from=" .. o.from) or "")
end

-- Use the endpoint the parsed arguments `o` (see api_spec) name.
function M.use_api(o)
   if string.sub(o.path, 1, 1) ~= "/" then
      error(string.format("script argument path=%s: must start with /", o.path), 0)
   end
   if not string.match(o.param, "^[%w_.-]+$") then
      error(string.format("script argument param=%s: must be a plain query parameter name", o.param), 0)
   end
   M.ENTITY = o.path .. (string.find(o.path, "?", 1, true) and "&" or "?") .. o.param .. "="
   M.KEY_PREFIX = o.prefix
   M.QUERY = M.replica_query(o)
end

-- The common arguments of the random-key scripts.
function M.key_spec(spec)
   spec.keys = { kind = "int", default = 1000000, min = 1, max = M.MAX_KEYS,
                 help = "key space: indexes 0 .. keys-1 (key0 .. key<keys-1>)" }
   spec.offset = { kind = "int", default = 0, min = 0, max = M.MAX_KEYS, help = "first key index" }
   spec.dist = { kind = "choice", choices = { "uniform", "zipf" }, default = "uniform" }
   spec.theta = { kind = "number", default = 0.99, above = 0, below = 1, help = "zipf skew" }
   spec.scramble = { kind = "bool", default = true, help = "spread zipf's hot keys over the key space" }
   spec.seed = { kind = "int", default = 1, min = 0, max = 2147483647 }
   return spec
end

return M
