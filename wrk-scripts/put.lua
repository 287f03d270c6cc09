-- put.lua: PUT sequential keys with values of a given size.
--
-- Keys are key<start>, key<start+1>, ... (decimal, as the server's Prefill writes them). With several
-- wrk threads, thread t sends start+t, start+t+threads, ... so the threads never send the same key;
-- pass threads=<-t> (a thread index >= threads stops the run with a message).
--
-- Arguments (name=value after the URL):
--   start=0         first key index
--   count=0         wrap around after this many keys (0 = never); e.g. count=<prefilled keys> for GET
--   threads=1       wrk's -t value
--   value=100       value size in bytes (random printable bytes, different per request)
--   seed=1          seed of the value bytes (each thread mixes in its own index)
--   path=/v0/entity endpoint of one key (another server's API: e.g. path=/kv)
--   param=id        query parameter that carries the key
--   prefix=key      key prefix: keys are <prefix><index>
--   ack=            cluster: replicas that must answer (&ack=A; none: the server's default, a majority)
--   from=           cluster: replicas asked (&from=F; none: the server's default, every node)
--   replicas=       cluster: the older style of both, A/F (&replicas=2/3); not with ack=/from=
--
-- Example: perflab-load -t2 -c16 -d30s -R5000 -s wrk-scripts/put.lua http://127.0.0.1:8080 threads=2 value=100
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local lib = dofile(here .. "lib/common.lua")
local w = dofile(here .. "lib/sequential.lua")(lib, "PUT", "put.lua")

setup = w.setup
init = w.init
request = w.request
