"""Old module paths of perflab 0.1 that moved when the package was grouped by job (0.2).

Importing one raises ``ModuleNotFoundError`` naming the new place, instead of a bare "No module named".
The top-level API (``import perflab as pl; pl.run_experiment(...)``) did not change.
"""

from __future__ import annotations

import importlib.abc
import sys

MOVED = {
    "perflab.load": "perflab.measure.load",
    "perflab.hdrlog": "perflab.measure.hdrlog",
    "perflab.wrk_output": "perflab.measure.wrk_output",
    "perflab.bridge": "perflab.profiling.bridge",
    "perflab.profiler": "perflab.profiling.profiler",
    "perflab.flame": "perflab.profiling.flame",
    "perflab.stats": "perflab.server.stats",
    "perflab.environment": "perflab.records.environment",
    "perflab.plots": "perflab.report.plots",
}


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        new = MOVED.get(fullname)
        if new is not None:
            raise ModuleNotFoundError(f"{fullname} moved to {new} in perflab 0.2 (the package is grouped by job: "
                                      f"config, server, measure, profiling, records, report)", name=fullname)
        return None


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
