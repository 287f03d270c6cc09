"""A student's server with an HTTP bug is a finding in words, not a client library's error: real servers (small
socket servers here, each with one bug students make) asked by :func:`perflab.server.protocol.diagnose`, and a
fill that fails against one says what is wrong."""

import socket
import threading

import pytest

from perflab import i18n
from perflab.errors import ServerFault
from perflab.server import protocol
from perflab.server.fill import write_keys


class Buggy:
    """An HTTP/1.1 server on loopback answering every request with 201 and a body; ``bug`` says how it goes
    wrong: ``grow`` (one more header in every answer on a connection: a Response reused per connection),
    ``grow-shared`` (one more in every answer of the server), ``close`` (closes a keep-alive connection after
    each answer without saying so), ``unframed`` (a body with no Content-Length, the connection kept open),
    ``bad-chunk`` (a chunk size that does not match its data), ``none`` (no bug)."""

    def __init__(self, bug: str):
        self.bug = bug
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.shared = []
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        extra = self.shared if self.bug == "grow-shared" else []
        buf = b""
        with conn:
            conn.settimeout(5)
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                n = int(
                    next(
                        (
                            v
                            for k, v in (h.split(b":", 1) for h in head.split(b"\r\n")[1:])
                            if k.strip().lower() == b"content-length"
                        ),
                        b"0",
                    )
                )
                while len(buf) < n:
                    buf += conn.recv(65536)
                buf = buf[n:]
                if self.bug.startswith("grow"):
                    extra.append(f"X-Seen-{len(extra)}: 1")
                body = b"ok"
                lines = ["HTTP/1.1 201 Created", *extra]
                if self.bug == "unframed":
                    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
                elif self.bug == "bad-chunk":
                    conn.sendall(
                        ("\r\n".join(lines + ["Transfer-Encoding: chunked"]) + "\r\n\r\n").encode()
                        + b"5\r\nok\r\n0\r\n\r\n"
                    )
                else:
                    conn.sendall(("\r\n".join(lines + [f"Content-Length: {len(body)}"]) + "\r\n\r\n").encode() + body)
                if self.bug == "close":
                    return

    def close(self):
        self.stop.set()
        self.sock.close()


@pytest.fixture
def buggy():
    made = []

    def make(bug):
        made.append(Buggy(bug))
        return made[-1]

    yield make
    for b in made:
        b.close()


def test_each_bug_is_named_in_words(buggy):
    assert protocol.diagnose(buggy("none").url, "/v0/entity?id=k", "PUT", b"v") is None
    said = protocol.diagnose(buggy("grow").url, "/v0/entity?id=k", "PUT", b"v")
    assert said.startswith(
        "each answer carries more headers than the one before (2, 3, 4, 5, 2, 3, 4, 5 headers in 8 "
        "answers) from each request to the next on one keep-alive connection"
    ), said
    assert "build a new Response for every request" in said
    said = protocol.diagnose(buggy("grow-shared").url, "/v0/entity?id=k")
    assert "(2, 3, 4, 5, 6, 7, 8, 9 headers in 8 answers) from each request to the next, across connections too" in said
    said = protocol.diagnose(buggy("close").url, "/v0/entity?id=k")
    assert said.startswith(
        "the server closed a keep-alive connection after answer 1 without saying 'Connection: close'"
    ), said
    assert "neither by Content-Length nor by chunked" in protocol.diagnose(buggy("unframed").url, "/x")
    assert protocol.diagnose(buggy("bad-chunk").url, "/x").startswith("a chunked body whose chunk size is not hex")
    quiet = socket.create_server(("127.0.0.1", 0))  # listens, never answers
    try:
        said = protocol.diagnose(f"http://127.0.0.1:{quiet.getsockname()[1]}", "/x", timeout=0.3)
        assert said == "the server did not answer GET /x within 0.3 s"
    finally:
        quiet.close()


def test_a_fill_that_a_growing_response_breaks_says_why(buggy):
    # every answer of the server adds a header: after ~100 Python's client refuses it, and the fill fails on a key,
    # with what is wrong with the server in words
    srv = buggy("grow-shared")
    with pytest.raises(ServerFault) as e:
        write_keys([srv.url], 500, threads=1)
    text = str(e.value)
    assert text.startswith("each answer carries more headers than the one before"), text
    assert "across connections too" in text and "(found when the fill could not write key" in text
    # the sentence read back from the English text (as a report reads a notebook's error) says it in Russian
    fault = protocol.fault_of(text)
    assert fault.msgid == protocol.GROWS_SHARED and fault.values["n"] in text
    russian = fault.say(i18n.language("ru"))
    assert (
        russian.startswith("каждый ответ несёт больше заголовков, чем предыдущий") and fault.values["counts"] in russian
    )
    # a server with no bug fills
    assert write_keys([buggy("none").url], 50, threads=2)["keys"] == 50
