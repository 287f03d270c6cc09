-- The sequential workloads (put.lua, get.lua, delete.lua): keys key<start>, key<start+1>, ... as in the
-- seeds' scripts, but without their mistake of every wrk thread sending the same keys: thread t of
-- `threads` sends start+t, start+t+threads, start+t+2*threads, ... so together the threads walk the key
-- range once, each key once (until `count` wraps it).
return function(lib, method, script)
   local spec = lib.api_spec({
      start = { kind = "int", default = 0, min = 0, max = lib.MAX_KEYS, help = "first key index" },
      count = { kind = "int", default = 0, min = 0, max = lib.MAX_KEYS,
                help = "wrap around after this many keys (0 = never); e.g. the prefilled key count" },
      threads = { kind = "int", default = 1, min = 1, max = 4096,
                  help = "wrk's -t: the threads interleave their keys (must equal -t)" },
   })
   if method == "PUT" then
      spec.value = { kind = "int", default = 100, min = 0, max = 16 * 1024 * 1024, help = "value size in bytes" }
      spec.seed = { kind = "int", default = 1, min = 0, max = 2147483647, help = "seed of the value bytes" }
   end
   local S = {}
   S.setup = lib.thread_setup()
   local next_i, step, start, count, make_value
   S.init = function(args)
      local o = lib.parse_args(args, spec, script)
      lib.use_api(o)
      local t = lib.thread_index()
      if t >= o.threads then
         error(string.format("%s: wrk thread %d exists but threads=%d: pass threads=<the -t value>",
            script, t, o.threads), 0)
      end
      next_i, step, start, count = t, o.threads, o.start, o.count
      if method == "PUT" then make_value = lib.value_maker(o.value, lib.rng(o.seed, t)) end
   end
   local function index()
      local i = next_i
      next_i = next_i + step
      if count > 0 then i = i % count end
      return start + i
   end
   if method == "PUT" then
      S.request = function() return lib.put(index(), make_value()) end
   elseif method == "GET" then
      S.request = function() return lib.get(index()) end
   else
      S.request = function() return lib.delete(index()) end
   end
   return S
end
