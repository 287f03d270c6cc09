"""The two sides of an A/B comparison: what each one runs, and how it is prepared.

A side is one of

* a built-in configuration (:class:`~perflab.config.ServerConfig`),
* your server (:class:`~perflab.config.ForeignServer`: a command with ``{port}``, or a URL),
* the built-in server at a git commit (:class:`~perflab.commits.Commit`): built apart once and cached under
  ``<data root>/builds/`` (:mod:`perflab.commits.builds`), the working tree and the repository's own build
  never touched; a commit that cannot be exported or built is an error naming it, with the build's log
  tail, before any load is sent.

:func:`prefill` fills a side's storage directory with its own build's ``perflab.tools.Prefill`` (so two
commits each write their own format, the same keys and values); :func:`frozen` stops a side's processes
with SIGSTOP for a while (what an idle server costs the busy one is measured against a frozen one).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .. import jdk, paths
from ..config import ForeignServer, PrefillParams, ServerConfig
from ..config.fields import spec_of
from ..errors import PerflabError
from ..targets import NotATarget, Target, target_of


@dataclass
class Side:
    """One side, ready to run: ``name`` (``"A"`` or ``"B"``), the ``target`` a session starts, the
    ``commit`` it was built from (full hash) and a ``label`` that tells it from the other side."""

    name: str
    target: ServerConfig | ForeignServer
    commit: str | None = None
    label: str = ""

    @property
    def builtin(self) -> bool:
        return self.spec.kind == "built-in"

    @property
    def spec(self) -> Target:
        """What this side's target is and can do (:class:`perflab.targets.base.Target`)."""
        return target_of(self.target)

    def to_dict(self) -> dict:
        kind = "commit" if self.commit else self.spec.kind
        return {
            "name": self.name,
            "label": self.label,
            "kind": kind,
            "commit": self.commit,
            "server": self.target.to_dict(),
        }


# --- sides -----------------------------------------------------------------------------------------


def make_side(name: str, spec, cache: Path) -> Side:
    """A side from what the caller gave: a ``ServerConfig``, a ``ForeignServer``, a URL string or a
    :class:`~perflab.commits.Commit` (built here, into ``cache``): any target of one server."""
    try:
        target = target_of(spec, builds=cache, label=f"{name} (--{name.lower()}-commit)")
    except NotATarget:
        target = None
    why = target.why_not("side") if target is not None else None
    if target is None or why is not None:
        raise ValueError(
            f"{name}: expected a ServerConfig, a ForeignServer, the URL of a running server or a "
            f"Commit, got {type(spec).__name__}" + (f" ({why})" if why else "")
        )
    return Side(name, target.config, commit=target.commit)


def _differences(a: dict, b: dict) -> dict[str, tuple]:
    return {k: (a.get(k), b.get(k)) for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)}


def _value(name: str, v) -> str:
    """A built-in field's value as its flag takes it (``2ms``, ``4m``), so labels read like commands."""

    f = next((f for f in dataclasses.fields(ServerConfig) if f.name == name), None)
    if f is not None and spec_of(f) is not None and not isinstance(v, (list, tuple)):
        return spec_of(f).fmt(v)
    return ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)


def label(sides: tuple[Side, Side]) -> None:
    """Give each side a label that tells it from the other: its commit, its command, or the built-in
    fields in which the two differ (``mode=sync`` / ``mode=async``); the side's name when they are the
    same."""
    a, b = sides
    for s in sides:
        if s.commit:
            s.label = f"commit {s.commit[:10]}"
        elif not s.builtin:
            s.label = s.target.name
    if a.builtin and b.builtin:
        skip = ("install_dir",) if a.commit or b.commit else ()
        diff = {k: v for k, v in _differences(a.target.to_dict(), b.target.to_dict()).items() if k not in skip}
        if not diff:  # the same configuration: say which (its fields that differ from the defaults)
            default = ServerConfig().to_dict()
            diff = {k: (v, v) for k, (_, v) in _differences(default, a.target.to_dict()).items() if k not in skip}
        for s, i in ((a, 0), (b, 1)):
            fields = " ".join(f"{k}={_value(k, v[i])}" for k, v in diff.items())
            s.label = " ".join(x for x in (s.label, fields) if x)
    for s in sides:
        s.label = s.label or s.name
    if a.label == b.label:
        a.label, b.label = f"A: {a.label}", f"B: {b.label}"


def identical(a: Side, b: Side) -> bool:
    """Whether both sides run the same thing (an A/A comparison: legitimate, but usually a mistake)."""
    return a.target == b.target and a.commit == b.commit


# --- preparing and pausing a side ------------------------------------------------------------------


def prefill(side: Side, data_dir: Path, params: PrefillParams) -> dict:
    """Fill ``data_dir`` for a built-in side with its own build's ``perflab.tools.Prefill`` (a separate
    JVM); returns the tool's JSON with ``wall_s``."""

    cfg = side.target
    install = Path(cfg.install_dir) if cfg.install_dir else paths.server_install_dir()
    java = jdk.home(cfg.java_home) / "bin" / "java"
    data_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        str(java),
        "-cp",
        str(install / "lib" / "*"),
        "perflab.tools.Prefill",
        "--data-dir",
        str(data_dir),
        "--backend",
        cfg.backend,
        "--keys",
        str(params.keys),
        "--value-size",
        str(params.value_size),
        "--seed",
        str(params.seed),
        "--key-prefix",
        params.key_prefix,
    ]
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, timeout=3600)
    if p.returncode != 0:
        raise PerflabError(
            f"{side.name}: prefill of {data_dir} failed (status {p.returncode}): {shlex.join(cmd[:4])} ...",
            p.stderr.decode(errors="replace")[-4000:],
        )
    try:
        out = json.loads(p.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise PerflabError(f"{side.name}: prefill printed no JSON summary", p.stderr.decode(errors="replace")) from None
    out["wall_s"] = round(time.monotonic() - t, 3)
    return out


@contextlib.contextmanager
def frozen(session):
    """Within the block, every process of the server of ``session`` (a process perflab started) is stopped
    with SIGSTOP by its host's agent: it uses no CPU at all. SIGCONT on the way out, whatever happens (and
    the agent thaws it before stopping it)."""
    session.handle.pause(True)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            session.handle.pause(False)
