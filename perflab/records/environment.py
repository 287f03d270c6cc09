"""What a run records about where it ran: git state, machine, Python packages, tools."""

from __future__ import annotations

import functools
import os
import platform
import socket
import subprocess
import sys
from importlib import metadata

import psutil

from .. import paths


def git_info() -> dict:
    """``commit`` (None before the first commit), ``dirty`` (uncommitted changes), ``branch``."""
    root = paths.repo_root()

    def git(*args):
        try:
            r = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
            return r.stdout.strip() if r.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            return None

    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": git("rev-parse", "HEAD"), "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
            "dirty": bool(status) if status is not None else None}


@functools.lru_cache(maxsize=1)
def machine_info() -> dict:
    cpu_model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu_model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"hostname": socket.gethostname(), "cores": os.cpu_count(), "cpu_model": cpu_model or platform.processor(),
            "memory_bytes": psutil.virtual_memory().total, "kernel": platform.release(), "os": platform.platform(),
            "perf_event_paranoid": _read("/proc/sys/kernel/perf_event_paranoid")}


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


@functools.lru_cache(maxsize=1)
def python_info() -> dict:
    pk = {}
    for name in ("perflab", "pandas", "numpy", "plotly", "hdrhistogram", "JPype1", "duckdb", "psutil", "tqdm"):
        try:
            pk[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pk[name] = None
    return {"python": sys.version.split()[0], "packages": pk}


@functools.lru_cache(maxsize=1)
def profiler_versions() -> dict:
    """async-profiler and converter versions, from the jars' Maven metadata."""
    import zipfile
    out = {}
    for name, getter, art in (("async-profiler", paths.async_profiler_jar, "async-profiler"),
                              ("jfr-converter", paths.converter_jar, "jfr-converter")):
        try:
            with zipfile.ZipFile(getter()) as z:
                props = z.read(f"META-INF/maven/tools.profiler/{art}/pom.properties").decode()
            out[name] = next((ln.split("=", 1)[1].strip() for ln in props.splitlines() if ln.startswith("version=")), None)
        except Exception:
            out[name] = None
    return out


def environment(load_tool_version: str | None = None) -> dict:
    """Everything above in one dict for ``meta.json``."""
    return {"git": git_info(), "machine": machine_info(), "python": python_info(),
            "tools": {"perflab-load": load_tool_version, **profiler_versions()}}
