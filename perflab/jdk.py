"""Which JDK: the one a server runs on (``ServerConfig.java_home``), its version, and a newer one when a
mode needs it (virtual threads need JDK 21+)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from .errors import NotBuiltError, ServerStartError

#: the first JDK with virtual threads (the server's ``virtual`` mode)
VIRTUAL_THREADS = 21


def home(explicit: str | os.PathLike | None = None) -> Path:
    """The JDK to use: ``explicit``, else ``$JAVA_HOME``, else the JDK of ``java`` on PATH."""
    if explicit:
        p = Path(explicit)
        if not (p / "bin" / "java").exists():
            raise ValueError(f"java_home: {p} has no bin/java")
        return p
    env = os.environ.get("JAVA_HOME")
    if env and (Path(env) / "bin" / "java").exists():
        return Path(env)
    java = shutil.which("java")
    if not java:
        raise NotBuiltError("no JDK found: set JAVA_HOME or put java on PATH (Debian: apt-get install openjdk-17-jdk)")
    return Path(java).resolve().parent.parent


@functools.lru_cache(maxsize=8)
def version(java_home: str | os.PathLike | None = None) -> tuple[int, str]:
    """``(major, full version string)`` of the JDK at ``java_home`` (default: :func:`home`)."""
    jh = home(java_home)
    out = subprocess.run([str(jh / "bin" / "java"), "-version"], capture_output=True, text=True, timeout=60)
    text = out.stderr + out.stdout
    m = re.search(r'version "([^"]+)"', text)
    if not m:
        raise ServerStartError(f"cannot read the Java version of {jh}", text)
    full = m.group(1)
    major = int(full.split(".")[1]) if full.startswith("1.") else int(re.match(r"\d+", full).group(0))
    return major, full


def find(
    min_major: int,
    preferred: str | os.PathLike | None = None,
    search: Iterable[str] = ("/usr/lib/jvm",),
    exact: bool = False,
) -> str | None:
    """A JDK home of at least ``min_major`` (``exact``: of exactly that release): ``preferred`` (or the
    default JDK) if it fits, else the newest one found under ``search`` that does; ``None`` if there is none."""
    fits = (lambda m: m == min_major) if exact else (lambda m: m >= min_major)
    try:
        if fits(version(preferred)[0]):
            return str(home(preferred))
    except (ValueError, NotBuiltError, ServerStartError, OSError):
        pass  # a broken default JDK just means: look elsewhere
    found = []
    for root in map(Path, search):
        if not root.is_dir():
            continue
        for candidate in sorted(root.iterdir()):
            if candidate.is_symlink() or not (candidate / "bin" / "java").exists():
                continue
            try:
                major = version(str(candidate))[0]
            except (ServerStartError, OSError, subprocess.SubprocessError):
                continue
            if fits(major):
                found.append((major, str(candidate)))
    return max(found)[1] if found else None
