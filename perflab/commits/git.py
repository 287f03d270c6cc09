"""Git, read the one way perflab reads it: commits resolved, GOOD..BAD in order, a commit exported, the working
tree's own changes, the checkout a run was made from. Nothing here checks out, so a working tree (changes
included) is never touched; :func:`git` is the one place a ``git`` process starts."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import BuildError


def git(
    repo: Path, *args: str, binary: bool = False, check: bool = False, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """``git ARGS`` in ``repo``: its output as text (bytes with ``binary``), a ``CalledProcessError`` on a
    failure with ``check``; ``env`` replaces the environment (the synthetic histories' authors)."""
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=not binary, check=check, env=env, timeout=timeout
    )


@dataclass(frozen=True)
class Revision:
    """One commit of a history: its full ``sha`` and its ``subject`` (the first line of its message)."""

    sha: str
    subject: str

    @property
    def short(self) -> str:
        return self.sha[:10]

    def to_dict(self) -> dict:
        return {"sha": self.sha, "subject": self.subject}


def resolve(repo: Path | None, rev: str, what: str = "commit") -> Revision:
    """``rev`` (a hash, a tag, ``HEAD~1``...) of ``repo`` (default: this checkout) as a :class:`Revision`; a
    ``ValueError`` naming ``what`` when git does not know it."""
    repo = repo or paths.repo_root()
    p = git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if p.returncode != 0:
        raise ValueError(f"{what}: {rev!r} is not a commit of the repository at {repo}")
    sha = p.stdout.strip()
    return Revision(sha, git(repo, "log", "-1", "--format=%s", sha).stdout.strip())


def between(repo: Path, good: Revision, bad: Revision) -> list[Revision]:
    """The commits from ``good`` to ``bad`` in the order they were made, both included: ``bad``'s first-parent
    history back to ``good`` (a merge is one commit; the commits of a merged branch are not bisected into).
    A ``ValueError`` when ``good`` is not an ancestor of ``bad``, or only through a merged branch."""
    if good.sha == bad.sha:
        raise ValueError(f"GOOD and BAD are the same commit ({good.short})")
    if git(repo, "merge-base", "--is-ancestor", good.sha, bad.sha).returncode != 0:
        raise ValueError(
            f"GOOD {good.short} is not an ancestor of BAD {bad.short}: bisect looks for the first "
            f"slower commit on the way from GOOD to BAD (swap them, or give GOOD's merge base with BAD)"
        )
    out = git(repo, "log", "--first-parent", "--format=%H%x00%s", f"{good.sha}..{bad.sha}")
    chain = [Revision(*line.split("\0", 1)) for line in out.stdout.splitlines() if line]
    parent = git(repo, "rev-parse", f"{chain[-1].sha}^").stdout.strip() if chain else ""
    if parent != good.sha:
        raise ValueError(
            f"GOOD {good.short} is an ancestor of BAD {bad.short} only through a merged branch; bisect "
            f"follows BAD's first-parent history: give a GOOD on it (e.g. the merge's first parent)"
        )
    return [good, *reversed(chain)]


#: files whose change cannot make a server slower: documentation and notes
DOCS = re.compile(r"(^|/)(docs?|README[^/]*)(/|$)|\.(md|rst|txt|adoc)$", re.IGNORECASE)


def code_changes(repo: Path, commits: list[Revision], under: str | None = None) -> list[int]:
    """The lines each commit of ``commits`` (a first-parent chain: :func:`between`) changed against the one before
    it, added and deleted, in files that are not documentation (:data:`DOCS`; a binary file counts 1), only
    under ``under`` when given; ``0`` for the first. A bisection's prior: which commit is the likely culprit."""
    counts = [0]
    for before, after in zip(commits, commits[1:]):
        out = git(repo, "diff", "--numstat", before.sha, after.sha, *(["--", under] if under else [])).stdout
        n = 0
        for line in out.splitlines():
            added, deleted, name = line.split("\t", 2)
            if not DOCS.search(name):
                n += int(added) + int(deleted) if added != "-" else 1
        counts.append(n)
    return counts


def dirty(repo: Path) -> list[str]:
    """The working tree's uncommitted changes (``git status --porcelain`` lines): none of them is in any
    commit measured, and none is touched."""
    return [line for line in git(repo, "status", "--porcelain").stdout.splitlines() if line.strip()]


def holds(repo: Path, rev: str, path: str) -> bool:
    """Whether commit ``rev`` of ``repo`` has a file at ``path``."""
    return git(repo, "cat-file", "-e", f"{rev}:{path}").returncode == 0


def export(repo: Path, sha: str, into: Path, path: str | None = None, what: str = "commit") -> None:
    """``git archive`` of commit ``sha`` (only ``path`` of it, when given) extracted into ``into``; the working
    tree is never read. :class:`~perflab.errors.BuildError` when git cannot."""
    p = git(repo, "archive", "--format=tar", sha, *([path] if path else []), binary=True)
    if p.returncode != 0:
        raise BuildError(
            f"{what} {sha[:12]} cannot be built: git archive of {path or 'the commit'} failed (status {p.returncode})",
            p.stderr.decode(errors="replace"),
        )
    with tarfile.open(fileobj=io.BytesIO(p.stdout)) as tar:
        tar.extractall(into, filter="data")


def _out(path, *args: str) -> str | None:
    try:
        p = git(path, *args, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def checkout(path=None) -> dict:
    """The checkout at ``path`` (default: perflab's own): ``commit`` (None outside a git work tree),
    ``branch``, ``dirty`` (uncommitted changes to tracked files)."""
    path = path or paths.repo_root()
    status = _out(path, "status", "--porcelain", "--untracked-files=no")
    return {
        "commit": _out(path, "rev-parse", "HEAD"),
        "branch": _out(path, "rev-parse", "--abbrev-ref", "HEAD"),
        "dirty": bool(status) if status is not None else None,
    }


def commit_at(path) -> str | None:
    """The commit checked out at ``path`` (a directory inside a git work tree), or ``None``."""
    sha = _out(path, "rev-parse", "HEAD") or ""
    return sha if re.fullmatch(r"[0-9a-f]{40}", sha) else None


def server_commit(path) -> str | None:
    """The commit of a server of yours that runs in ``path``: the commit of the git work tree ``path`` is in;
    ``None`` when it is in none, or when that work tree is perflab's own checkout. A directory that merely lies
    inside perflab's clone (the current directory of ``make -C perflab``, a student's folder copied into it) is
    not versioned by perflab's commits: only the built-in server has perflab's commit."""
    top = toplevel(path)
    if top is None or top == toplevel(paths.repo_root()):
        return None
    return commit_at(path)


def toplevel(path) -> Path | None:
    """The root of the git work tree ``path`` is in, ``None`` when it is in none (an export, a plain folder)."""
    try:
        out = git(Path(path), "rev-parse", "--show-toplevel")
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out.stdout.strip()).resolve() if out.returncode == 0 and out.stdout.strip() else None


def first_parent_count(repo: Path, rev: str = "HEAD") -> int:
    """How many commits ``rev``'s first-parent history holds (0 when ``rev`` is no commit: a repository without
    one)."""
    out = git(repo, "rev-list", "--first-parent", "--count", rev)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip().isdigit() else 0
