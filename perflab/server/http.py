"""One plain HTTP GET, shared by everything that talks to a server (readiness, ``/v0/stats``)."""

from __future__ import annotations

import urllib.error
import urllib.request


def http_get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    """A plain GET: ``(status, body)``; HTTP errors return their status, network errors raise ``OSError``."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
