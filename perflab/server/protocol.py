"""What is wrong with a server's HTTP, in words a student can act on.

A student's server with a bug is the common case, and the lab is the first to see it: a client library then fails
with "got more than 100 headers" or "RemoteDisconnected", which says nothing about the server. :func:`diagnose`
asks the server a few times itself, over raw sockets (``ROUNDS`` requests on one keep-alive connection, then
``ROUNDS`` more on a new one), reads each answer by hand, and names what it finds:

* headers that grow from one response to the next (on one connection, or across connections: a ``Response``
  object reused, per connection or for the whole server);
* a keep-alive connection closed after an answer that did not say ``Connection: close``;
* an answer that is not HTTP/1.x, a header line without a colon, a body with neither ``Content-Length`` nor
  chunked framing, a chunked body that does not parse;
* no answer within the timeout.

``None`` when every answer was well formed.
"""

from __future__ import annotations

import re
import socket
import urllib.parse

from ..i18n import Sentence

#: requests per connection
ROUNDS = 4
#: bytes read for one answer at most
MAX_ANSWER = 1 << 20


# every sentence diagnose says (message ids: perflab/i18n/locale/*/perflab.po)
CLOSED = "the server closed the connection without answering {request}"
CLOSED_KEEPALIVE = (
    "the server closed a keep-alive connection after answer {i} without saying 'Connection: close' (HTTP/1.1 keeps "
    "a connection open unless one side says so): a client that reuses connections, as wrk2 and perflab-load do, "
    "loses requests"
)
SILENT = "the server did not answer {request} within {timeout} s"
UNREACHABLE = "the server could not be asked {request} ({error})"
GROWS_SHARED = (
    "each answer carries more headers than the one before ({counts} headers in {n} answers) from each request to the "
    "next, across connections too: one Response object (or its headers) is kept for the whole server and every answer "
    "adds to it; build a new Response for every request. After about 100 headers an HTTP client (Python's, and many "
    "others) refuses the answer"
)
GROWS = (
    "each answer carries more headers than the one before ({counts} headers in {n} answers) from each request to the "
    "next on one keep-alive connection: a Response object (or its headers) is kept per connection and every answer "
    "adds to it; build a new Response for every request. After about 100 headers an HTTP client (Python's, and many "
    "others) refuses the answer"
)
TOO_LONG = "an answer longer than {limit} bytes, or one that never ends its headers"
NOT_HTTP = "the answer does not start with an HTTP/1.x status line: {line}"
NO_COLON = "a header line without a colon: {line}"
BAD_LENGTH = "a Content-Length that is not a number: {value}"
UNFRAMED = (
    "an answer with a body framed neither by Content-Length nor by chunked encoding, on a connection kept open: a "
    "client cannot tell where it ends"
)
BAD_CHUNK_SIZE = "a chunked body whose chunk size is not hexadecimal: {size}"
BAD_CHUNK_END = "a chunk of {n} bytes not followed by CRLF: the chunk sizes do not match the data"
SENTENCES = (
    CLOSED, CLOSED_KEEPALIVE, SILENT, UNREACHABLE, GROWS_SHARED, GROWS, TOO_LONG, NOT_HTTP, NO_COLON, BAD_LENGTH,
    UNFRAMED, BAD_CHUNK_SIZE, BAD_CHUNK_END,
)  # fmt: skip


def _pattern(msgid: str) -> re.Pattern:
    parts = re.split(r"\{(\w+)\}", msgid)
    return re.compile("".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts)), re.DOTALL)


_PATTERNS = [(m, _pattern(m)) for m in SENTENCES]


def fault_of(text: str) -> Sentence | None:
    """The :class:`~perflab.i18n.Sentence` whose English sentence ``text`` holds (the first found), ``None`` when none does."""
    for msgid, rx in _PATTERNS:
        m = rx.search(text)
        if m is not None:
            return Sentence(msgid, **m.groupdict())
    return None


class _Broken(Exception):
    """An answer that cannot be read as HTTP/1.1: what is wrong (a :class:`~perflab.i18n.Sentence`)."""


def diagnose(url: str, target: str, method: str = "GET", body: bytes = b"", timeout: float = 2.0) -> Sentence | None:
    """Ask the server at ``url`` for ``target`` (a path with its query) ``ROUNDS`` times on one keep-alive
    connection, then ``ROUNDS`` times on another; what is wrong with its answers in a sentence, ``None`` when
    nothing is."""
    u = urllib.parse.urlsplit(url)
    request = f"{method} {target}"
    counts: list[list[int]] = []
    for _ in range(2):
        seen: list[int] = []
        counts.append(seen)
        try:
            with socket.create_connection((u.hostname, u.port), timeout=timeout) as s:
                reader = _Reader(s)
                for i in range(ROUNDS):
                    s.sendall(_request(method, target, u.netloc, body))
                    try:
                        headers, close = reader.answer(method)
                    except ConnectionError:
                        return Sentence(CLOSED, request=request) if i == 0 else Sentence(CLOSED_KEEPALIVE, i=i)
                    seen.append(len(headers))
                    if close:
                        break
        except _Broken as e:
            return e.args[0]
        except TimeoutError:
            return Sentence(SILENT, request=request, timeout=f"{timeout:g}")
        except OSError as e:
            return Sentence(UNREACHABLE, request=request, error=str(e))
    return _growth(counts)


def _growth(counts: list[list[int]]) -> Sentence | None:
    one, two = counts
    if len(one) > 1 and one[-1] > one[0]:
        shared = two and two[0] > one[-1]
        return Sentence(GROWS_SHARED if shared else GROWS, counts=", ".join(map(str, one + two)), n=len(one) + len(two))
    return None


def _request(method: str, target: str, host: str, body: bytes) -> bytes:
    head = f"{method} {target} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


class _Reader:
    """Answers read off one connection, one after another."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = b""

    def _more(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed")
        self.buf += data
        if len(self.buf) > MAX_ANSWER:
            raise _Broken(Sentence(TOO_LONG, limit=f"{MAX_ANSWER:,}"))

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self._more()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._more()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def answer(self, method: str) -> tuple[list[tuple[str, str]], bool]:
        """One answer's headers, and whether it closes the connection; its body read and checked."""
        status = self._line()
        if not status.startswith(b"HTTP/1."):
            raise _Broken(Sentence(NOT_HTTP, line=repr(status[:60])))
        headers = []
        while (line := self._line()) != b"":
            name, colon, value = line.partition(b":")
            if not colon:
                raise _Broken(Sentence(NO_COLON, line=repr(line[:60])))
            headers.append((name.strip().decode("latin-1").lower(), value.strip().decode("latin-1")))
        get = dict(headers)
        close = get.get("connection", "").lower() == "close"
        code = status.split(b" ")[1:2]
        if method == "HEAD" or code in ([b"204"], [b"304"]) or (code and code[0].startswith(b"1")):
            return headers, close
        if "chunked" in get.get("transfer-encoding", "").lower():
            self._chunked()
        elif "content-length" in get:
            try:
                n = int(get["content-length"])
            except ValueError:
                raise _Broken(Sentence(BAD_LENGTH, value=repr(get["content-length"]))) from None
            self._take(n)
        elif close:
            self.buf = b""
        else:
            raise _Broken(Sentence(UNFRAMED))
        return headers, close

    def _chunked(self) -> None:
        while True:
            size = self._line().split(b";")[0].strip()
            try:
                n = int(size, 16)
            except ValueError:
                raise _Broken(Sentence(BAD_CHUNK_SIZE, size=repr(size[:20]))) from None
            if n == 0:
                while self._line() != b"":
                    pass
                return
            self._take(n)
            if self._take(2) != b"\r\n":
                raise _Broken(Sentence(BAD_CHUNK_END, n=n))
