"""The commits a regression check reads from git: their full hashes, GOOD..BAD in order, each one's subject,
and whether the working tree has changes of its own. Read only: nothing here checks out or writes, so the
working tree (changes included) is never touched."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..ab.sides import resolve_commit


@dataclass(frozen=True)
class Revision:
    """One commit of the history: its full ``sha`` and its ``subject`` (the first line of its message)."""

    sha: str
    subject: str

    @property
    def short(self) -> str:
        return self.sha[:10]

    def to_dict(self) -> dict:
        return {"sha": self.sha, "subject": self.subject}


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=120)


def resolve(repo: Path, rev: str, what: str) -> Revision:
    """``rev`` as a :class:`Revision` of ``repo`` (a ``ValueError`` naming ``what`` when git does not know it)."""
    sha = resolve_commit(rev, repo, what=what)
    return Revision(sha, _git(repo, "log", "-1", "--format=%s", sha).stdout.strip())


def between(repo: Path, good: Revision, bad: Revision) -> list[Revision]:
    """The commits from ``good`` to ``bad`` in the order they were made, both included: ``bad``'s first-parent
    history back to ``good`` (a merge is one commit; the commits of a merged branch are not bisected into).
    A ``ValueError`` when ``good`` is not an ancestor of ``bad``, or only through a merged branch."""
    if good.sha == bad.sha:
        raise ValueError(f"GOOD and BAD are the same commit ({good.short})")
    if _git(repo, "merge-base", "--is-ancestor", good.sha, bad.sha).returncode != 0:
        raise ValueError(f"GOOD {good.short} is not an ancestor of BAD {bad.short}: bisect looks for the first "
                         f"slower commit on the way from GOOD to BAD (swap them, or give GOOD's merge base with BAD)")
    out = _git(repo, "log", "--first-parent", "--format=%H%x00%s", f"{good.sha}..{bad.sha}")
    chain = [Revision(*line.split("\0", 1)) for line in out.stdout.splitlines() if line]
    parent = _git(repo, "rev-parse", f"{chain[-1].sha}^").stdout.strip() if chain else ""
    if parent != good.sha:
        raise ValueError(f"GOOD {good.short} is an ancestor of BAD {bad.short} only through a merged branch; bisect "
                         f"follows BAD's first-parent history: give a GOOD on it (e.g. the merge's first parent)")
    return [good, *reversed(chain)]


def dirty(repo: Path) -> list[str]:
    """The working tree's uncommitted changes (``git status --porcelain`` lines): none of them is in any
    commit measured, and none is touched."""
    return [line for line in _git(repo, "status", "--porcelain").stdout.splitlines() if line.strip()]


def holds(repo: Path, rev: str, path: str) -> bool:
    """Whether commit ``rev`` of ``repo`` has a file at ``path``."""
    return _git(repo, "cat-file", "-e", f"{rev}:{path}").returncode == 0


def toplevel(path) -> Path | None:
    """The root of the git work tree ``path`` is in, ``None`` when it is in none (an export, a plain folder)."""
    try:
        out = _git(Path(path), "rev-parse", "--show-toplevel")
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out.stdout.strip()).resolve() if out.returncode == 0 and out.stdout.strip() else None


def first_parent_count(repo: Path, rev: str = "HEAD") -> int:
    """How many commits ``rev``'s first-parent history holds (0 when ``rev`` is no commit: a repository without
    one)."""
    out = _git(repo, "rev-list", "--first-parent", "--count", rev)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip().isdigit() else 0
