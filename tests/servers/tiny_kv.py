"""A small key-value HTTP server in Python: the non-JVM "bring your own server" of the tests.

Its API is deliberately not the course's: ``GET/PUT/DELETE /kv?key=<k>`` and ``GET /health``, so the
workload scripts must be pointed at it with ``path=/kv param=key``. Every request path is appended to
the file given as the second argument (if any), so a test can see what was sent.

    python3 tests/servers/tiny_kv.py PORT [REQUEST_LOG]
"""

import http.server
import socketserver
import sys
import threading
from urllib.parse import parse_qs, urlsplit

STORE: dict[str, bytes] = {}
LOCK = threading.Lock()
LOG = open(sys.argv[2], "a", buffering=1) if len(sys.argv) > 2 else None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body in one segment: unbuffered writes plus Nagle and delayed ACKs cost 40 ms a response
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True

    def _reply(self, status: int, body: bytes = b"") -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _key(self):
        url = urlsplit(self.path)
        if LOG is not None:
            LOG.write(f"{self.command} {self.path}\n")
        if url.path == "/health":
            return "health", None
        if url.path != "/kv":
            return None, None
        keys = parse_qs(url.query).get("key")
        return "kv", keys[0] if keys else None

    def do_GET(self):
        where, key = self._key()
        if where == "health":
            return self._reply(200, b"ok")
        if where is None or key is None:
            return self._reply(400)
        with LOCK:
            value = STORE.get(key)
        self._reply(200, value) if value is not None else self._reply(404)

    def do_PUT(self):
        where, key = self._key()
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if where != "kv" or key is None:
            return self._reply(400)
        with LOCK:
            STORE[key] = body
        self._reply(201)

    def do_DELETE(self):
        where, key = self._key()
        if where != "kv" or key is None:
            return self._reply(400)
        with LOCK:
            STORE.pop(key, None)
        self._reply(202)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
