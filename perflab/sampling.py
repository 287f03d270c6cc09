"""One periodic sampler: a daemon thread that calls :meth:`Periodic.sample` every ``interval_s``.

Sampling is best effort and never breaks a run: a sample that raises is counted in ``errors`` (the last
one kept in ``last_error``) and skipped. The samplers of ``/proc`` CPU (:mod:`perflab.server.cpu`) and of
``/v0/stats`` (:mod:`perflab.server.counters`) are the two kinds.
"""

from __future__ import annotations

import threading
import time


class Periodic:
    """Calls :meth:`sample` at start, every ``interval_s`` on a fixed schedule (a slow sample does not push
    the next ones later), and once more at :meth:`stop` when ``final``."""

    #: sample once more when stopped (counters read at the very end)
    final = True

    def __init__(self, interval_s: float, name: str):
        if not (isinstance(interval_s, (int, float)) and interval_s > 0):
            raise ValueError(f"interval_s must be > 0, got {interval_s!r}")
        self.interval_s = float(interval_s)
        self.name = name
        self.errors = 0
        self.last_error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        raise NotImplementedError

    def _sample(self) -> None:
        try:
            self.sample()
        except Exception as e:  # noqa: BLE001 - sampling is best effort
            self.errors += 1
            self.last_error = f"{type(e).__name__}: {e}"

    def start(self):
        if self._thread is not None:
            raise RuntimeError(f"{self.name}: already started")
        self._sample()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        next_t = time.monotonic()
        while True:
            next_t += self.interval_s
            if self._stop.wait(max(0.0, next_t - time.monotonic())):
                return
            self._sample()

    def signal_stop(self) -> None:
        """Ask the thread to end without waiting (several samplers stopped at once)."""
        self._stop.set()

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval_s + 5)
        if self.final:
            self._sample()
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
