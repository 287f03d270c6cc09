"""Cancellation as an explicit token: whoever may stop a run hands one to what it starts.

A sweep (:func:`perflab.core.sweep.sweep`) runs points in threads; when it is stopped, it cancels its token
and every load and lease wait holding that token ends at its next look (a thread cannot be interrupted
from outside). A run started alone gets a token nobody cancels.
"""

from __future__ import annotations

import threading

from .errors import RunInterrupted


class CancelToken:
    """Set once by :meth:`cancel`; polled by long waits (:meth:`check`)."""

    def __init__(self, reason: str = "the run was stopped"):
        self._event = threading.Event()
        self.reason = reason

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str | None = None) -> None:
        if reason:
            self.reason = reason
        self._event.set()

    def check(self) -> None:
        """Raise :class:`~perflab.errors.RunInterrupted` once cancelled."""
        if self._event.is_set():
            raise RunInterrupted(self.reason)

    def __repr__(self):
        return f"<CancelToken {'cancelled' if self.cancelled else 'live'}>"
