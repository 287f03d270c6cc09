-- The random-key workloads: a mix of operations over keys drawn uniformly or from a zipfian
-- distribution. Used by get-random.lua, put-random.lua, mixed.lua and the ycsb-*.lua scripts.
--
-- mix: { read = p_get, update = p_put, rmw = p_read_modify_write } (the rest of the probability, if any,
-- is PUT). A read-modify-write is a GET of a key followed by a PUT of the same key as the thread's next
-- request (an open-loop generator does not wait for the GET's answer; both latencies are recorded).
-- defaults: overrides of the argument defaults (e.g. dist = "zipf" for YCSB).
-- tunable_read: true adds a read=<fraction> argument (mixed.lua).
return function(lib, script, mix, defaults, tunable_read)
   local spec = lib.api_spec(lib.key_spec({}))
   local writes = tunable_read or (mix.read or 0) < 1
   if writes then
      spec.value = { kind = "int", default = 100, min = 0, max = 16 * 1024 * 1024, help = "PUT value size in bytes" }
   end
   if tunable_read then
      spec.read = { kind = "number", default = mix.read, min = 0, max = 1, help = "fraction of GETs; the rest are PUTs" }
   end
   for k, v in pairs(defaults or {}) do spec[k].default = v end

   local S = {}
   S.setup = lib.thread_setup()
   local rng, pick, make_value, p_read, p_rmw
   local pending = nil       -- key of a read-modify-write whose PUT is still to be sent
   S.init = function(args)
      local o = lib.parse_args(args, spec, script)
      lib.use_api(o)
      if o.offset + o.keys > lib.MAX_KEYS then
         error(string.format("%s: offset+keys must be <= %d", script, lib.MAX_KEYS), 0)
      end
      rng = lib.rng(o.seed, lib.thread_index())
      pick = lib.key_chooser(o, rng)
      make_value = lib.value_maker(o.value or 0, rng)
      p_read = tunable_read and o.read or (mix.read or 0)
      p_rmw = mix.rmw or 0
      S.options = o
   end
   S.request = function()
      if pending then
         local k = pending
         pending = nil
         return lib.put(k, make_value())
      end
      local k = pick()
      local u = rng:next()
      if u < p_read then
         return lib.get(k)
      elseif u < p_read + p_rmw then
         pending = k
         return lib.get(k)
      end
      return lib.put(k, make_value())
   end
   return S
end
