-- ycsb-c.lua: YCSB workload C, read only: 100% reads, zipfian keys (run it on a prefilled DB).
--
-- Keys: key<offset> ... key<offset+keys-1>. Each wrk thread draws from its own deterministic generator
-- seeded with (seed, thread index), so threads send different keys and a run is repeatable; never
-- os.time() (with it every thread of a run sends the same keys).
--
-- Arguments (name=value after the URL):
--   keys=1000000    size of the key space
--   offset=0        first key index
--   dist=zipf       zipf | uniform (YCSB's zipfian: rank r has probability ~ (r+1)^-theta)
--   theta=0.99      zipf skew, 0 < theta < 1
--   scramble=1      1: spread zipf's hot keys over the key space (YCSB's scrambled zipfian);
--                   0: the hottest keys are key<offset>, key<offset+1>, ...
--   seed=1          user seed; each thread mixes in its own index
--   path=/v0/entity endpoint of one key (another server's API: e.g. path=/kv)
--   param=id        query parameter that carries the key
--   prefix=key      key prefix: keys are <prefix><index>
--   ack=            cluster: replicas that must answer (&ack=A; none: the server's default, a majority)
--   from=           cluster: replicas asked (&from=F; none: the server's default, every node)
--   replicas=       cluster: the older style of both, A/F (&replicas=2/3); not with ack=/from=
--
-- Example: perflab-load -t2 -c16 -d30s -R5000 -s wrk-scripts/ycsb-c.lua http://127.0.0.1:8080 keys=1000000
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local lib = dofile(here .. "lib/common.lua")
local w = dofile(here .. "lib/random.lua")(lib, "ycsb-c.lua", { read = 1 }, { dist = "zipf" })

setup = w.setup
init = w.init
request = w.request
