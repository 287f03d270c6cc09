"""Commits and their builds, below the strategies that compare them (``ab``, ``regress``):

* :mod:`.git`    -- the one way perflab reads git: commits resolved (:class:`~.git.Revision`), GOOD..BAD in
  order, a commit exported, the working tree's own changes, the checkout a run was made from
* :mod:`.builds` -- the one build cache (``<data root>/builds/``): the built-in server at a commit
  (:class:`~.builds.Commit`), your repository's commits built with their command (:class:`~.builds.Builds`)
"""

from .builds import BuildCache, Builds, Commit  # noqa: F401
from .git import Revision  # noqa: F401
