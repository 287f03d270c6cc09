"""Filling a server (or a cluster, through its entry nodes) through its API: ``key0 .. key<N-1>`` written once
each, every answer checked.

Prefill writes the built-in server's storage files straight into its directory; any other server (yours, a
course server) and a cluster's nodes (which store timestamped records, docs/contracts/cluster.md section 7) are
filled through the API instead, before any GET reads them. The fill is a closed-loop client (a few threads, one request at a time each, every status checked, a failed
write retried), not a fixed-rate load: it must write every key whatever the speed of a cluster whose JVMs
are still cold, and an open-loop generator leaves keys unsent when the cluster falls behind. Values are
``value_size`` printable bytes derived from the key's index and the seed, so a fill is repeatable.
"""

from __future__ import annotations

import http.client
import threading
import time
import urllib.parse

from ..errors import PerflabError, ServerFault
from . import protocol

#: a write is tried this often before the fill fails
ATTEMPTS = 3


def value_of(i: int, size: int, seed: int = 0) -> bytes:
    """``size`` printable bytes for key ``i`` (deterministic)."""
    x = (i * 0x9E3779B1 + seed * 0x85EBCA6B + 1) & 0xFFFFFFFF
    out = bytearray()
    while len(out) < size:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out.append(33 + x % 94)
    return bytes(out)


def write_keys(
    urls: list[str],
    keys: int,
    value_size: int = 100,
    seed: int = 0,
    prefix: str = "key",
    query: str = "",
    path: str = "/v0/entity",
    param: str = "id",
    threads: int = 4,
    timeout: float = 5.0,
    stop: threading.Event | None = None,
) -> dict:
    """Write ``<prefix>0 .. <prefix><keys-1>`` through the nodes at ``urls`` (in turn); ``query`` is appended
    to each request (the cluster's ``&ack=..&from=..``). Returns ``{keys, seconds, rate, retries}``; raises
    ``RuntimeError`` naming a key that could not be written in :data:`ATTEMPTS` tries, or once ``stop`` is
    set (the run was interrupted)."""
    if keys < 1:
        raise ValueError(f"keys must be >= 1, got {keys}")
    nxt = [0]
    lock = threading.Lock()
    retries = [0]
    failure: list[str] = []
    asked: list[tuple] = []

    def worker(t: int):
        conns: dict[int, http.client.HTTPConnection] = {}
        try:
            while not failure:
                if stop is not None and stop.is_set():
                    failure.append(f"{prefix}{nxt[0]}: the fill was stopped")
                    return
                with lock:
                    i = nxt[0]
                    nxt[0] += 1
                if i >= keys:
                    return
                target = f"{path}?{param}={urllib.parse.quote(prefix + str(i), safe='')}{query}"
                body = value_of(i, value_size, seed)
                for attempt in range(ATTEMPTS):
                    node = (i + attempt + t) % len(urls)
                    u = urllib.parse.urlsplit(urls[node])
                    conn = conns.get(node) or http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
                    conns[node] = conn
                    try:
                        conn.request("PUT", target, body=body)
                        r = conn.getresponse()
                        r.read()
                        status = r.status
                    except (OSError, http.client.HTTPException) as e:
                        conn.close()
                        conns.pop(node, None)
                        status = f"{type(e).__name__}"
                    if status in (200, 201, 204):
                        break
                    with lock:
                        retries[0] += 1
                    time.sleep(0.05 * (attempt + 1))
                else:
                    failure.append(f"{prefix}{i}: {status} after {ATTEMPTS} tries")
                    asked.append((urls[i % len(urls)], target, body))
        finally:
            for c in conns.values():
                c.close()

    t0 = time.monotonic()
    ths = [
        threading.Thread(target=worker, args=(t,), name=f"perflab-fill-{t}", daemon=True)
        for t in range(max(1, min(threads, keys)))
    ]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    if failure:
        wrong = protocol.diagnose(*asked[0][:2], "PUT", asked[0][2], timeout) if asked else None
        if wrong:
            raise ServerFault(f"{wrong} (found when the fill could not write {failure[0]})")
        raise PerflabError(f"fill: could not write {failure[0]}")
    secs = time.monotonic() - t0
    return {
        "keys": keys,
        "seconds": round(secs, 3),
        "rate": round(keys / secs, 1) if secs else None,
        "retries": retries[0],
    }
