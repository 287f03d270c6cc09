"""Your server's stages as the two sides of a comparison (notebook 08 with a ``perflab.toml``): B is this stage,
the server the file declares; A the previous one, found in this order:

1. what the notebook's ``previous`` parameter names: a stage number, another ``perflab.toml``, or a git
   revision of the file's repository;
2. the file's ``[previous]`` table (``stage``, ``project`` or ``commit``, and a ``label``);
3. for a course server, the same student's factory of the highest stage below this one's, when the build
   output still holds it (``@ServiceFactory(stage = 4)`` beside ``stage = 5``).

A commit is exported and built apart (``[server] build``), as ``perflab bisect`` builds one; the working tree
is never touched. Without any of these there is no previous stage, and :func:`why_not` says how to name one.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import paths
from ..commits.builds import Builds
from ..commits.git import resolve, toplevel
from ..config import ForeignServer, PrefillParams, ServerConfig
from ..config.project import Project
from ..config.regress import RepoParams
from ..i18n import Sentence

#: how to name the previous stage, said wherever there is none
HOW = Sentence(
    "name it in the perflab.toml: [previous] with stage = N (a course server's earlier factory), project = "
    '"FILE" (another declaration) or commit = "REV" (this repository at that commit, built with [server] '
    "build)"
)


def _given(project: Project, previous) -> dict | None:
    """What names the previous stage: the notebook's ``previous`` (an int is a stage, an existing file a
    project, other text a commit), else the file's ``[previous]``."""
    if previous is None:
        return project.previous
    if isinstance(previous, int) and not isinstance(previous, bool):
        return {"stage": previous}
    if isinstance(previous, str) and previous.strip():
        p = Path(previous).expanduser()
        p = (p if p.is_absolute() else project.path.parent / p).resolve()
        if p.is_file() or (p / "perflab.toml").is_file():
            return {"project": str(p if p.is_file() else p / "perflab.toml")}
        return {"commit": previous.strip()}
    raise ValueError(f"previous: a stage number, a perflab.toml or a git revision, got {previous!r}")


def why_not(project: Project, named=None) -> str | None:
    """Why this project has no previous stage to compare with (``None``: it has one), checked without building
    or starting anything; ``named``: the notebook's ``previous`` parameter."""
    given = _given(project, named)
    if given is None:
        if project.course is not None and project.course.previous() is not None:
            return None
        what = Sentence(
            "its build output holds no earlier stage's factory"
            if project.course is not None
            else "it is not a course server with an earlier stage's factory"
        )
        return Sentence(
            "not applicable: {name} has no previous stage to compare with ({what}); {how}",
            name=project.name,
            what=what,
            how=HOW,
        )
    if "stage" in given:
        if project.course is None:
            return "not applicable: previous.stage is a course server's; name a project or a commit"
        if not any(f.stage == given["stage"] for f in project.course.factories()):
            stages = sorted({f.stage for f in project.course.factories()})
            return (
                f"not applicable: the build output has no factory of stage {given['stage']} (it has "
                f"{', '.join(map(str, stages)) or 'none'}); {HOW}"
            )
    if "commit" in given:
        top = toplevel(project.path.parent)
        if top is None:
            return f"not applicable: previous.commit, but {project.path.parent} is in no git repository"
        if project.build is None:
            return (
                'not applicable: previous.commit needs [server] build (e.g. "./gradlew compileJava"): each '
                "commit is built apart"
            )
        try:
            resolve(top, given["commit"], "previous.commit")
        except ValueError as e:
            return f"not applicable: {e}"
    return None


def previous(project: Project, named=None) -> ForeignServer:
    """The previous stage's server (see the module docstring), labelled; a ``ValueError`` saying how to name
    one when there is none."""
    why = why_not(project, named)
    if why is not None:
        raise ValueError(why.removeprefix("not applicable: "))
    given = _given(project, named) or {}
    if "project" in given:
        side = Project.load(given["project"]).server
    elif "stage" in given:
        side = project.course.replace(stage=given["stage"], factory=None, label=None).server()
    elif "commit" in given:
        top = toplevel(project.path.parent)
        builds = Builds(
            RepoParams(repo=str(top), project=os.path.relpath(project.path, top)),
            ServerConfig(),
            paths.data_root() / "builds",
        )
        side = builds.side(resolve(top, given["commit"], "previous.commit"))
    else:
        side = project.course.previous().server()
    return side.replace(label=given["label"]) if given.get("label") else side


def stages(project: str, named=None) -> tuple[ForeignServer, ForeignServer]:
    """``(A, B)``: the previous stage and this one, the server ``project`` (a ``perflab.toml``) declares; printed,
    so the notebook says what it compares. ``named``: the notebook's ``previous`` parameter."""
    proj = Project.load(project)
    a = previous(proj, named)
    print(f"A (the previous stage): {a.name}\nB (this stage): {proj.server.name}")
    return a, proj.server


def data(side, keys: int, value_size: int, seed: int) -> dict:
    """What both sides read, as keywords of :func:`perflab.compare_ab`: the built-in server prefilled in-process
    (``prefill=``), a server of yours filled through its API with the same keys (``fill=``); none for 0 keys."""
    if not keys:
        return {}
    if isinstance(side, ForeignServer):
        return {"fill": PrefillParams(keys=keys, value_size=value_size, seed=seed).keys}
    return {"prefill": PrefillParams(keys=keys, value_size=value_size, seed=seed)}
