"""What can be measured: one protocol (:mod:`.base`) for the built-in server and yours (:mod:`.server`) and
for a cluster of either (:mod:`.cluster`); async-profiler in a target's JVM seen from the coordinator
(:mod:`.profiler`).

:func:`target_of` is the one place where what a user passes becomes a :class:`~.base.Target`.
"""

from __future__ import annotations

from pathlib import Path

from .. import paths
from ..commits.builds import Commit
from ..config import ServerConfig
from ..config.cluster import ClusterConfig
from ..config.course import CourseServer
from ..config.target import ForeignServer
from ..nodes.processes import Cluster
from .base import Target, TargetHandle, TargetHost
from .cluster import ClusterTarget
from .server import BuiltinTarget, CommitTarget, ForeignTarget

__all__ = ["Target", "TargetHandle", "TargetHost", "NotATarget", "target_of"]


def target_of(what, builds: Path | None = None, label: str = "commit") -> Target:
    """``what`` as a target: a ``ServerConfig`` (the built-in server), a ``ForeignServer`` (yours), a
    ``CourseServer`` (a course student's, from their build output), a URL string (shorthand for
    ``ForeignServer(url=...)``), a :class:`~perflab.commits.Commit` (the built-in server at a commit, built apart
    into ``builds``, default ``<data root>/builds``; ``label`` names it in an error), a ``ClusterConfig`` (N nodes
    started for the run), a running :class:`~perflab.nodes.processes.Cluster` (``pl.start_cluster``: measured,
    left running), or a Target."""
    if isinstance(what, Target):
        return what
    if isinstance(what, Commit):
        return CommitTarget(what, builds if builds is not None else paths.data_root() / "builds", label)
    if isinstance(what, str):
        return ForeignTarget(ForeignServer(url=what))
    if isinstance(what, ServerConfig):
        return BuiltinTarget(what)
    if isinstance(what, ForeignServer):
        return ForeignTarget(what)
    if isinstance(what, CourseServer):
        return ForeignTarget(what.server())
    if isinstance(what, (ClusterConfig, Cluster)):
        return ClusterTarget(what)
    raise NotATarget(
        f"server must be a ServerConfig, a ForeignServer, a CourseServer, a Commit, a ClusterConfig, a "
        f"running Cluster or the URL of a running server, got {type(what).__name__}"
    )


class NotATarget(ValueError):
    """What was given is nothing perflab can measure."""
