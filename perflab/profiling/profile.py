"""One recorded profile: its files (collapsed stacks, async-profiler's flame graph) and the tables computed from
them (:mod:`.flame`), what a recording (:mod:`.profiler`) leaves and what the analysis reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import flame
from .codemap import BUILTIN, CodeMap


@dataclass
class Profile:
    """One recorded profile (files plus lazily computed tables). ``code_map``: what is known of the profiled
    server's code, the user's categories included (:mod:`perflab.profiling.codemap`), which its categories
    are computed with."""

    event: str
    requested_event: str
    collapsed_path: Path
    html_path: Path | None
    started_at: float
    stopped_at: float
    warnings: list[str] = field(default_factory=list)
    code_map: CodeMap = field(default=BUILTIN, repr=False)
    _stacks: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def stacks(self) -> pd.DataFrame:
        """``stack, samples, thread`` (see :func:`perflab.profiling.flame.read_collapsed`)."""
        if self._stacks is None:
            self._stacks = (
                flame.read_collapsed(self.collapsed_path)
                if self.collapsed_path.stat().st_size
                else pd.DataFrame(
                    {
                        "stack": pd.Series(dtype=str),
                        "samples": pd.Series(dtype="int64"),
                        "thread": pd.Series(dtype=object),
                    }
                )
            )
        return self._stacks

    @property
    def samples(self) -> int:
        return int(self.stacks["samples"].sum())

    @property
    def collapsed(self) -> str:
        return self.collapsed_path.read_text()

    @property
    def duration_s(self) -> float:
        return self.stopped_at - self.started_at

    def frames(self) -> pd.DataFrame:
        return flame.frames_table(self.stacks)

    def categories(self, by_thread: bool = False) -> pd.DataFrame:
        return flame.categorize(self.stacks, event=self.event, by_thread=by_thread, code_map=self.code_map)

    def code_packages(self) -> pd.DataFrame:
        """The server's own code category by package (:func:`perflab.profiling.flame.code_packages`)."""
        return flame.code_packages(self.stacks, event=self.event, code_map=self.code_map)

    def threads(self) -> pd.DataFrame:
        return flame.threads_table(self.stacks)

    def top(self, n: int = 15, by: str = "self") -> pd.DataFrame:
        """The ``n`` frames with the largest ``self`` (or ``total``) share."""
        if by not in ("self", "total"):
            raise ValueError(f"by must be 'self' or 'total', got {by!r}")
        return self.frames().sort_values(by, ascending=False).head(n).reset_index(drop=True)

    def record(self) -> dict:
        return {
            "event": self.event,
            "requested_event": self.requested_event,
            "samples": self.samples,
            "duration_s": round(self.duration_s, 3),
            "collapsed": self.collapsed_path.name,
            "html": self.html_path.name if self.html_path else None,
            "warnings": self.warnings,
        }
