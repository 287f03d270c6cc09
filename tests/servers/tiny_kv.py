"""A small key-value HTTP server in Python: the non-JVM "bring your own server" of the tests.

Its API is deliberately not the course's: ``GET/PUT/DELETE /kv?key=<k>`` and ``GET /health``, so the
workload scripts must be pointed at it with ``path=/kv param=key``. Every request path is appended to
the file given as the second argument (if any), so a test can see what was sent.

    python3 tests/servers/tiny_kv.py PORT [REQUEST_LOG]

**Cluster mode** (the "bring your own cluster" of the tests): a node gets every node's URL and its own
index, and replicates each key to ``from`` nodes, answering after ``ack`` of them (``&ack=A&from=F`` or
``&replicas=A/F``; defaults: every node, a majority), 504 when fewer can, last write wins by timestamp,
deletes kept as tombstones. A key's replicas are the ``from`` nodes from index ``crc32(key) mod N`` on, in
a ring: a simpler routing than the course's, which is the point (the lab must not assume it). Internal
requests carry ``X-Tiny-Internal`` (served locally) and ``X-Tiny-Ts``.

    python3 tests/servers/tiny_kv.py PORT --cluster URL,URL,... --index I     # one process per node
    python3 tests/servers/tiny_kv.py --ports P0,P1,P2                          # every node, one child each

``--host H`` (either mode) listens on H instead of 127.0.0.1.
"""

import http.server
import socketserver
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zlib
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from urllib.parse import parse_qs, quote, urlsplit

STORE: dict[str, tuple[int, bytes | None]] = {}  # key -> (timestamp, value or None: a tombstone)
LOCK = threading.Lock()
LOG = None
NODES: list[str] = []  # cluster mode: every node's URL; empty: a single server
SELF = 0
POOL = ThreadPoolExecutor(max_workers=32)
CLOCK = [0]


def now_ts() -> int:
    with LOCK:
        CLOCK[0] = max(CLOCK[0] + 1, time.time_ns())
        return CLOCK[0]


def store(key: str, ts: int, value: bytes | None) -> None:
    with LOCK:
        if key not in STORE or STORE[key][0] < ts:
            STORE[key] = (ts, value)
        CLOCK[0] = max(CLOCK[0], ts)


def replicas(key: str, frm: int) -> list[int]:
    first = zlib.crc32(key.encode()) % len(NODES)
    return [(first + i) % len(NODES) for i in range(frm)]


def ask(node: int, method: str, key: str, ts: int, body: bytes | None):
    """One replica: ``(ok, (ts, value))``; the local node directly, the others over HTTP."""
    if node == SELF:
        if method == "GET":
            with LOCK:
                return True, STORE.get(key, (0, None))
        store(key, ts, body if method == "PUT" else None)
        return True, None
    req = urllib.request.Request(
        f"{NODES[node]}/kv?key={quote(key, safe='')}",
        data=body if method == "PUT" else None,
        method=method,
        headers={"X-Tiny-Internal": "1", "X-Tiny-Ts": str(ts)},
    )
    try:
        # a dead replica refuses at once; a live one on a busy machine (CI) once took more than 1 s
        with urllib.request.urlopen(req, timeout=5.0) as r:
            return True, (int(r.headers.get("X-Tiny-Ts", "0")), r.read())
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return True, (int(e.headers.get("X-Tiny-Ts", "0")), None)
        return False, None
    except OSError:
        return False, None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body in one segment: unbuffered writes plus Nagle and delayed ACKs cost 40 ms a response
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True

    def _reply(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _key(self):
        url = urlsplit(self.path)
        if LOG is not None:
            LOG.write(f"{self.command} {self.path}\n")
        if url.path == "/health":
            return "health", None, {}
        if url.path != "/kv":
            return None, None, {}
        q = parse_qs(url.query)
        keys = q.get("key")
        return "kv", keys[0] if keys else None, q

    def _cluster(self, method: str, key: str, q: dict, body: bytes | None):
        if "X-Tiny-Internal" in self.headers:
            ts = int(self.headers.get("X-Tiny-Ts", "0"))
            if method == "GET":
                with LOCK:
                    t, v = STORE.get(key, (0, None))
                return self._reply(200 if v is not None else 404, v or b"", {"X-Tiny-Ts": str(t)})
            store(key, ts, body if method == "PUT" else None)
            return self._reply(201 if method == "PUT" else 202)
        try:
            if "replicas" in q:
                a, f = (int(x) for x in q["replicas"][0].split("/"))
            else:
                f = int(q.get("from", [len(NODES)])[0])
                a = int(q.get("ack", [f // 2 + 1])[0])
        except ValueError:
            return self._reply(400, b"bad ack/from")
        if not 1 <= a <= f <= len(NODES):
            return self._reply(400, b"need 1 <= ack <= from <= nodes")
        ts = now_ts()
        futures = [POOL.submit(ask, n, method, key, ts, body) for n in replicas(key, f)]
        ok, answers, pending = 0, [], set(futures)
        while pending and ok < a and ok + len(pending) >= a:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fu in done:
                good, ans = fu.result()
                if good:
                    ok += 1
                    answers.append(ans)
        if ok < a:
            return self._reply(504, f"{ok} of {a} replicas answered".encode())
        if method == "GET":
            t, v = max((x for x in answers if x is not None), key=lambda x: x[0], default=(0, None))
            return self._reply(200, v) if v is not None else self._reply(404)
        return self._reply(201 if method == "PUT" else 202)

    def do_GET(self):
        where, key, q = self._key()
        if where == "health":
            return self._reply(200, b"ok")
        if where is None or key is None:
            return self._reply(400)
        if NODES:
            return self._cluster("GET", key, q, None)
        with LOCK:
            value = STORE.get(key, (0, None))[1]
        self._reply(200, value) if value is not None else self._reply(404)

    def do_PUT(self):
        where, key, q = self._key()
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if where != "kv" or key is None:
            return self._reply(400)
        if NODES:
            return self._cluster("PUT", key, q, body)
        store(key, now_ts(), body)
        self._reply(201)

    def do_DELETE(self):
        where, key, q = self._key()
        if where != "kv" or key is None:
            return self._reply(400)
        if NODES:
            return self._cluster("DELETE", key, q, None)
        with LOCK:
            STORE.pop(key, None)
        self._reply(202)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def _option(args: list[str], name: str, default: str | None = None) -> tuple[list[str], str | None]:
    """``args`` without ``name VALUE``, and VALUE (``default`` when absent)."""
    if name not in args:
        return args, default
    i = args.index(name)
    return args[:i] + args[i + 2 :], args[i + 1]


def main(argv: list[str]) -> None:
    global LOG, NODES, SELF
    argv, host = _option(argv, "--host", "127.0.0.1")
    if argv[0] == "--ports":  # one command, every node: a child process per node, so each can be killed alone
        ports = argv[1].split(",")
        cluster = ",".join(f"http://{host}:{p}" for p in ports)
        kids = [
            subprocess.Popen([sys.executable, __file__, p, "--cluster", cluster, "--index", str(i), "--host", host])
            for i, p in enumerate(ports)
        ]
        for k in kids:
            k.wait()
        return
    port, rest = int(argv[0]), argv[1:]
    rest, cluster = _option(rest, "--cluster")
    rest, index = _option(rest, "--index")
    if cluster is not None:
        NODES, SELF = cluster.split(","), int(index)
    if rest:
        LOG = open(rest[0], "a", buffering=1)
    Server((host, port), Handler).serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
