"""One range read, ``GET /v0/entities?start=<key>[&end=<key>]`` (the course's stage 6), timed and checked as it
streams.

The course asks for the range ``[start, end)`` as HTTP/1.1 chunked transfer encoding, one chunk per entry, each
``<key>\\n<value>``, keys ascending. :class:`RangeReader` reads an answer block by block (the socket's, or a
test's hand-made bytes: the same code) and never holds the body: a range larger than the server's heap is
larger than is sensible to keep here too. What it checks, each fault in words a student can act on: the
status, that the body is chunked at all (``the body is not chunked (Content-Length 123)``), each chunk's
framing (``chunk 17 has no '\\n'``), keys ascending and each key of the fill there once (``key5 missing``), each
value equal to what was written (a CRC per entry while reading, compared after it, so the check does not slow
the stream it times), and a body that ends before its last chunk (truncated). :func:`read_range` sends the one
request over a raw socket and reads it to the end within a deadline that grows with the bytes expected.

A fault (and why a read stopped) is a :class:`~perflab.i18n.Sentence`: English as made, its message id one of the
report's catalogs (a Russian report says it in Russian), its values what the server sent; a run records it with
:meth:`~perflab.i18n.Sentence.record`.
"""

from __future__ import annotations

import socket
import time
import urllib.parse
import zlib
from dataclasses import dataclass, field

import numpy as np

from ..i18n import Sentence

#: faults named one by one; past this many of a kind, a count
NAMED = 5
#: the slowest stream the deadline allows for: bytes/s (a range read slower than this is a finding anyway)
MIN_RATE = 1 << 20
#: one entry larger than this is a framing fault, not a value (nothing sane writes 64 MiB per key here)
MAX_CHUNK = 64 << 20
#: bytes read from the socket at a time
BLOCK = 1 << 20
#: bytes of a non-200 answer's body kept to quote
QUOTE = 300


@dataclass(frozen=True)
class Expected:
    """What was written: ``<prefix>0 .. <prefix><keys-1>``, each value ``value_size`` bytes from
    :func:`perflab.server.fill.value_of` with ``seed``."""

    keys: int
    value_size: int
    seed: int = 0
    prefix: str = "key"

    def index(self, key: bytes) -> int | None:
        """The fill's index of ``key``, ``None`` when the fill did not write it."""
        p = self.prefix.encode()
        digits = key[len(p) :]
        if not key.startswith(p) or not digits.isdigit() or (len(digits) > 1 and digits[:1] == b"0"):
            return None
        i = int(digits)
        return i if i < self.keys else None

    def name(self, i: int) -> str:
        return f"{self.prefix}{i}"

    @property
    def smallest(self) -> str:
        """The smallest key written (bytes order: ``key0``)."""
        return self.name(0)

    @property
    def payload_bytes(self) -> int:
        """The range's size as its chunks carry it: every key, its ``\\n`` and its value."""
        digits = sum(len(str(i)) for i in range(self.keys))
        return self.keys * (len(self.prefix) + 1 + self.value_size) + digits

    def crcs(self, indices: np.ndarray | None = None) -> np.ndarray:
        """The CRC-32 of the values written at ``indices`` (default: every one): :func:`perflab.server.fill.value_of`'s
        generator jumped ahead in closed form (numpy), so 100,000 values of 4 KB take seconds, not minutes of Python
        loops."""
        at = np.arange(self.keys, dtype=np.uint64) if indices is None else np.asarray(indices, dtype=np.uint64)
        a, c, m = 1103515245, 12345, 1 << 31
        mult = np.empty(self.value_size, dtype=np.uint64)
        add = np.empty(self.value_size, dtype=np.uint64)
        am, ad = 1, 0
        for k in range(self.value_size):  # x_{k+1} = mult[k] * x_0 + add[k]  (mod 2^31)
            am, ad = (am * a) % m, (ad * a + c) % m
            mult[k], add[k] = am, ad
        out = np.empty(len(at), dtype=np.uint32)
        for lo in range(0, len(at), 256):  # 256 values at a time: a few MB of uint64
            i = at[lo : lo + 256]
            x0 = (i * np.uint64(0x9E3779B1) + np.uint64((self.seed * 0x85EBCA6B + 1) & 0xFFFFFFFF)) & np.uint64(
                0xFFFFFFFF
            )
            xs = (x0[:, None] % np.uint64(m) * mult[None, :] + add[None, :]) % np.uint64(m)
            values = (33 + xs % np.uint64(94)).astype(np.uint8)
            out[lo : lo + len(i)] = [zlib.crc32(v.tobytes()) for v in values]
        return out


@dataclass
class RangeRead:
    """What one range read gave: ``status`` (``None``: no answer), ``chunked``, ``content_length``,
    ``ttfb_s`` (request sent to the first byte of the answer), ``seconds`` (request sent to the last byte),
    ``started_at``/``ended_at`` (the same two moments in epoch seconds: the window a profile is cut to),
    ``wire_bytes`` (the body as sent, framing included), ``payload_bytes`` (the chunks' bytes: what a client
    that decodes the framing gets, ``curl -s | wc -c``), ``entries``, ``complete`` (the last chunk came),
    ``error`` (why the read stopped early: a timeout, a connection closed), ``faults`` (what is wrong), both
    :class:`~perflab.i18n.Sentence`, ``quote`` (the start of a non-200 answer's body)."""

    status: int | None = None
    reason: str = ""
    chunked: bool = False
    content_length: int | None = None
    ttfb_s: float | None = None
    seconds: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    wire_bytes: int = 0
    payload_bytes: int = 0
    entries: int = 0
    complete: bool = False
    error: Sentence | None = None
    faults: list[Sentence] = field(default_factory=list)
    quote: str = ""
    missing: int = 0
    wrong_values: int = 0

    @property
    def ok(self) -> bool:
        """The range came back whole and as the course asks."""
        return self.status == 200 and self.complete and not self.faults and self.error is None

    @property
    def bytes_per_s(self) -> float | None:
        return self.payload_bytes / self.seconds if self.seconds else None

    @property
    def entries_per_s(self) -> float | None:
        return self.entries / self.seconds if self.seconds else None

    def record(self) -> dict:
        """The read as a run's result (bare numbers, units as suffixes)."""
        return {
            "status": self.status,
            "chunked": self.chunked,
            "content_length": self.content_length,
            "ttfb_s": self.ttfb_s,
            "stream_s": self.seconds,
            "wire_bytes": self.wire_bytes,
            "payload_bytes": self.payload_bytes,
            "entries": self.entries,
            "bytes_per_s": self.bytes_per_s,
            "entries_per_s": self.entries_per_s,
            "complete": self.complete,
            "error": self.error.record() if self.error else None,
            "faults": [f.record() for f in self.faults],
            "missing": self.missing,
            "wrong_values": self.wrong_values,
            "quote": self.quote,
            "ok": self.ok,
        }


class RangeReader:
    """Reads one answer to a range request fed block by block (:meth:`feed`, then :meth:`finish`), checking it
    against ``expected`` as it goes (see the module docstring). :attr:`done` once nothing more is to be read."""

    def __init__(self, expected: Expected):
        self.expected = expected
        self.read = RangeRead()
        self.done = False
        self._buf = bytearray()
        self._pos = 0
        self._state = "head"
        self._chunk = bytearray()
        self._left = 0
        self._chunks = 0
        self._prev: bytes | None = None
        self._seen = np.zeros(expected.keys, dtype=bool)
        self._crc = np.zeros(expected.keys, dtype=np.uint32)
        self._named: dict[str, int] = {}

    # --- faults ---------------------------------------------------------------------------------------
    def _fault(self, kind: str, message: str, **values) -> None:
        """A fault among the faults, the first :data:`NAMED` of each ``kind``; later ones counted."""
        n = self._named.get(kind, 0) + 1
        self._named[kind] = n
        if n <= NAMED:
            self.read.faults.append(Sentence(message, **values))

    def _stop(self, message: str, **values) -> None:
        """A fault the body cannot be read past."""
        self.read.faults.append(Sentence(message, **values))
        self.done = True

    # --- reading --------------------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        if self.done or not data:
            return
        if self._state != "head":
            self.read.wire_bytes += len(data)
        self._buf += data
        while not self.done and self._step():
            pass
        if self._pos > BLOCK:  # what was parsed is dropped now and then, not per chunk (a copy each time)
            del self._buf[: self._pos]
            self._pos = 0

    def _line(self) -> bytes | None:
        end = self._buf.find(b"\r\n", self._pos)
        if end < 0:
            return None
        line = bytes(self._buf[self._pos : end])
        self._pos = end + 2
        return line

    def _step(self) -> bool:
        """One step of the parse; ``False`` when it needs more bytes."""
        r = self.read
        if self._state == "head":
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buf) > 65536:
                    self._stop("the answer's headers do not end (no empty line in 64 KB)")
                return False
            self._head(bytes(self._buf[:end]).decode("latin-1"))
            self._pos = end + 4
            r.wire_bytes = len(self._buf) - self._pos
            return not self.done
        if self._state == "quote":
            r.quote = bytes(self._buf[self._pos : self._pos + QUOTE]).decode("utf-8", "replace")
            if r.content_length is not None and len(self._buf) - self._pos >= min(r.content_length, QUOTE):
                self.done = True
            return False
        if self._state == "plain":  # a 200 that is not chunked: counted to its end, not parsed
            if r.content_length is not None and r.wire_bytes >= r.content_length:
                r.complete = True
                self.done = True
            self._pos = len(self._buf)
            return False
        if self._state == "size":
            line = self._line()
            if line is None:
                if len(self._buf) - self._pos > 1024:
                    self._stop("chunk {chunk}'s size line does not end (no `CRLF` in 1 KB)", chunk=self._chunks + 1)
                return False
            text = line.split(b";", 1)[0].strip().decode("latin-1")
            try:
                size = int(text, 16)
            except ValueError:
                self._stop(
                    "chunk {chunk}'s size line `{line}` is not hexadecimal",
                    chunk=self._chunks + 1,
                    line=repr(line[:40]),
                )
                return False
            if size > MAX_CHUNK:
                self._stop(
                    "chunk {chunk} says it holds {size} bytes: a framing fault", chunk=self._chunks + 1, size=size
                )
                return False
            self._state = "trailer" if size == 0 else "data"
            self._left = size
            self._chunk = bytearray()
            return True
        if self._state == "data":
            take = min(self._left, len(self._buf) - self._pos)
            if take == 0:
                return False
            self._chunk += self._buf[self._pos : self._pos + take]
            self._pos += take
            self._left -= take
            if self._left:
                return False
            self._state = "crlf"
            return True
        if self._state == "crlf":
            if len(self._buf) - self._pos < 2:
                return False
            if self._buf[self._pos : self._pos + 2] != b"\r\n":
                self._stop(
                    "chunk {chunk} is not followed by `CRLF` after the {size} bytes its size line says",
                    chunk=self._chunks + 1,
                    size=len(self._chunk),
                )
                return False
            self._pos += 2
            self._chunks += 1
            self._entry(bytes(self._chunk))
            self._state = "size"
            return True
        if self._state == "trailer":
            line = self._line()
            if line is None:
                return False
            if line == b"":
                r.complete = True
                self.done = True
            return True
        raise AssertionError(self._state)

    def _head(self, head: str) -> None:
        r = self.read
        lines = head.split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            self._stop("the answer is not `HTTP/1.x`: `{line}`", line=repr(lines[0][:80]))
            return
        r.status, r.reason = int(parts[1]), parts[2] if len(parts) > 2 else ""
        headers = {}
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if colon:
                headers[name.strip().lower()] = value.strip()
        r.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        if headers.get("content-length", "").isdigit():
            r.content_length = int(headers["content-length"])
        if r.status != 200:
            self._state = "quote"
            return
        if r.chunked:
            self._state = "size"
            return
        if r.content_length is not None:
            self.read.faults.append(
                Sentence("the body is not chunked (`Content-Length {length}`)", length=r.content_length)
            )
        else:
            self.read.faults.append(Sentence("the body is not chunked (no `Transfer-Encoding`)"))
        self._state = "plain"

    def _entry(self, chunk: bytes) -> None:
        r = self.read
        n = self._chunks
        cut = chunk.find(b"\n")
        if cut < 0:
            self._fault("newline", "chunk {chunk} has no '\\n' between key and value", chunk=n)
            return
        key, value = chunk[:cut], chunk[cut + 1 :]
        r.entries += 1
        r.payload_bytes += len(chunk)
        shown = key[:60].decode("utf-8", "replace")
        adjacent = self._prev is not None and key == self._prev
        if self._prev is not None and key <= self._prev:
            if adjacent:
                self._fault("twice", "`{key}` twice (chunk {chunk})", key=shown, chunk=n)
            else:
                prev = self._prev[:60].decode("utf-8", "replace")
                self._fault(
                    "order", "`{key}` after `{prev}` (chunk {chunk}): keys not ascending", key=shown, prev=prev, chunk=n
                )
        self._prev = key
        i = self.expected.index(key)
        if i is None:
            self._fault("unknown", "`{key}` was never written (chunk {chunk})", key=shown, chunk=n)
            return
        if self._seen[i]:
            if not adjacent:
                self._fault("twice", "`{key}` twice (chunk {chunk})", key=shown, chunk=n)
            return
        self._seen[i] = True
        self._crc[i] = zlib.crc32(value)

    def finish(self, error: Sentence | None = None) -> RangeRead:
        """The read once the socket closed (or ``error`` stopped it), with the values and missing keys checked."""
        r = self.read
        r.error = error
        if r.status is None:
            r.error = r.error or Sentence("no answer")
            return r
        if self._state == "plain" and r.content_length is None and error is None:
            r.complete = True  # a body that ends when the connection does
        if r.status == 200 and r.chunked and not r.complete and not self.done:
            r.faults.append(
                Sentence(
                    "the body ends after {chunks} chunks without the last (zero-length) chunk: truncated",
                    chunks=self._chunks,
                )
            )
        if r.status != 200 or not r.chunked:
            return r
        # keys after a body that stopped early were not read, not missing: named only of a whole body
        missing = np.flatnonzero(~self._seen) if r.complete else np.array([], dtype=int)
        r.missing = len(missing)
        for i in missing[:NAMED]:
            r.faults.append(Sentence("`{key}` missing", key=self.expected.name(int(i))))
        if r.missing > NAMED:
            r.faults.append(Sentence("{count} keys missing in all", count=r.missing))
        seen = np.flatnonzero(self._seen)
        if len(seen):
            wrong = seen[self._crc[seen] != self.expected.crcs(seen)]
            r.wrong_values = len(wrong)
            for i in wrong[:NAMED]:
                r.faults.append(Sentence("`{key}`: the value is not the one written", key=self.expected.name(int(i))))
            if r.wrong_values > NAMED:
                r.faults.append(Sentence("{count} values differ from the ones written in all", count=r.wrong_values))
        more = sum(count - NAMED for count in self._named.values() if count > NAMED)
        if more:
            r.faults.append(Sentence("{count} more faults in the chunks, not named", count=more))
        return r


def check_answer(raw: bytes, expected: Expected, block: int = 4096) -> RangeRead:
    """A whole answer (status line, headers, body) read as :func:`read_range` reads the socket's, in blocks of
    ``block`` bytes."""
    reader = RangeReader(expected)
    for at in range(0, len(raw), block):
        reader.feed(raw[at : at + block])
        if reader.done:
            break
    return reader.finish()


def deadline_s(expected: Expected, timeout: float) -> float:
    """Seconds the whole read may take: ``timeout`` plus the range's bytes at :data:`MIN_RATE`."""
    return timeout + expected.payload_bytes / MIN_RATE


def read_range(url: str, expected: Expected, timeout: float = 30.0, path: str = "/v0/entities") -> RangeRead:
    """``GET <path>?start=<the smallest key written>`` against the server at ``url``, read to its end (see the
    module docstring): ``timeout`` seconds for any one wait (the connection, the first byte, the next block),
    :func:`deadline_s` for all of it. A server that answers wrong, stops early or is too slow gives a
    :class:`RangeRead` saying so; nothing is raised for what the server does."""
    u = urllib.parse.urlsplit(url)
    target = f"{path}?start={urllib.parse.quote(expected.smallest, safe='')}"
    request = f"GET {target} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nConnection: close\r\n\r\n".encode()
    reader = RangeReader(expected)
    until = time.monotonic() + deadline_s(expected, timeout)
    error = None
    t0 = time.perf_counter()
    try:
        with socket.create_connection((u.hostname, u.port), timeout=timeout) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            t0 = time.perf_counter()
            reader.read.started_at = time.time()
            s.sendall(request)
            while not reader.done:
                left = until - time.monotonic()
                if left <= 0:
                    error = Sentence(
                        "the read took longer than its deadline of {seconds} s",
                        seconds=round(deadline_s(expected, timeout)),
                    )
                    break
                s.settimeout(min(timeout, left))
                data = s.recv(BLOCK)
                if reader.read.ttfb_s is None and data:
                    reader.read.ttfb_s = time.perf_counter() - t0
                if not data:
                    break
                reader.feed(data)
    except TimeoutError:
        error = Sentence("no byte came for {seconds} s", seconds=f"{timeout:g}")
    except OSError as e:
        error = Sentence("the connection failed: `{error}`", error=f"{type(e).__name__}: {e}")
    reader.read.seconds = time.perf_counter() - t0
    # the read's window ends here: the values' check after it is this process's work, not the server's
    reader.read.ended_at = time.time()
    return reader.finish(error)
