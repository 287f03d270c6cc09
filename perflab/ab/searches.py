"""Two breakpoint searches interleaved probe by probe (A B B A B A A B ...).

Each search is the lab's own (:func:`perflab.breakpoint.search`), unchanged: it runs in a thread of its
own and only *decides* which rate to probe next; every probe is run by the caller's thread, in turn, so
signals, Ctrl-C and the session's processes stay where they always are. When one search has finished,
the other goes on alone.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from ..breakpoint.search import Estimate, search
from ..config import BreakpointParams
from ..measure.judgement import Judgement
from .design import side_sequence

_DONE = object()


class _Abort(Exception):
    """Raised inside a search thread when the caller stops (an error or an interrupt)."""


class _SearchThread:
    def __init__(self, side: str, params: BreakpointParams, estimate: float | None):
        self.side = side
        self._requests: queue.Queue = queue.Queue()
        self._answers: queue.Queue = queue.Queue(maxsize=1)
        self.result: Estimate | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(params, estimate), name=f"ab-search-{side}", daemon=True
        )

    def start(self) -> _SearchThread:
        self._thread.start()
        return self

    def _run(self, params, estimate):
        try:
            self.result = search(self._probe, params, estimate)
        except _Abort:
            pass
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread, which raises it
            self.error = e
        finally:
            self._requests.put(_DONE)

    def _probe(self, rate: float, phase: str) -> Judgement:
        self._requests.put((rate, phase))
        answer = self._answers.get()
        if answer is _DONE:
            raise _Abort
        return answer

    def next_request(self):
        """The search's next ``(rate, phase)``, or ``_DONE``; waits in short steps so Ctrl-C gets through."""
        while True:
            try:
                return self._requests.get(timeout=0.2)
            except queue.Empty:
                continue

    def answer(self, judgement: Judgement) -> None:
        self._answers.put(judgement)

    def abort(self) -> None:
        try:
            self._answers.put_nowait(_DONE)
        except queue.Full:
            pass
        self._thread.join(timeout=5)


def interleaved(
    probe: Callable[[str, float, str], Judgement], params: BreakpointParams, estimates: dict[str, float | None]
) -> dict[str, Estimate]:
    """Run one search per side (``estimates``: side -> the ramp's estimate or ``None``) with their probes
    interleaved; ``probe(side, rate, phase)`` runs one probe in the caller's thread. Returns side ->
    :class:`~perflab.breakpoint.search.Estimate`."""
    threads = {s: _SearchThread(s, params, e).start() for s, e in estimates.items()}
    live = dict(threads)
    try:
        turns = side_sequence()
        while live:
            side = next(turns)
            if side not in live:
                continue
            req = live[side].next_request()
            if req is _DONE:
                t = live.pop(side)
                if t.error is not None:
                    raise t.error
                continue
            rate, phase = req
            live[side].answer(probe(side, rate, phase))
    finally:
        for t in live.values():
            t.abort()
    return {s: t.result for s, t in threads.items()}
