"""Which of the notebooks that take your server (``perflab report --project``) have what they need from it: a
notebook is left out, with the reason on the index page, rather than failing on what a project cannot give.

* 08, your stages: a previous stage to compare this one with (:mod:`perflab.lab.your_stages`);
* 09, your history: a git repository of two commits at least and a build command
  (:func:`perflab.analysis.history.why_not`).
"""

from __future__ import annotations

import ast

from ..analysis import history
from ..commits.git import first_parent_count, toplevel
from ..config.project import Project
from ..lab import your_stages

#: the notebook that compares your stages (its finding heads the index when it runs)
STAGES = "08-ab"
#: the notebook that measures your commits
HISTORY = "09-history"


def why_not(notebook: str, project: Project) -> str | None:
    """Why ``notebook`` cannot run on ``project`` (``None``: it can)."""
    if notebook == STAGES:
        return your_stages.why_not(project)
    if notebook == HISTORY:
        return history.why_not(project)
    return None


def fitted(notebook: str, project: Project, parameters: dict, defaults: dict) -> dict:
    """``parameters`` as ``notebook`` can run them on ``project``: 09's ``commits`` no more than the repository
    has (so its question states the commits it measures); ``defaults``: the notebook's, as papermill reads them."""
    if notebook != HISTORY or parameters.get("good") is not None:
        return parameters
    asked = parameters.get("commits", ast.literal_eval(str((defaults.get("commits") or {}).get("default", "None"))))
    have = first_parent_count(toplevel(project.path.parent))
    return {**parameters, "commits": min(asked, have)} if isinstance(asked, int) and have < asked else parameters
