"""Where and with what the lab ran: the one environment record of every run and every report.

``environment()`` = ``{"git": {commit, branch, dirty}, "machine": {hostname, cores, cpu_model,
memory_bytes, kernel, os, arch, perf_event_paranoid}, "python": {python, packages}, "tools": {name:
version}}``; a run's ``tools`` name the load generator it used (``perflab-load`` or ``wrk2``) and the
profiler's jars, a report's add the JDK and chromium. ``load_average()`` says how busy the machine was.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from .. import jdk, paths
from ..commits.git import checkout

#: the Python packages whose versions a record names
PACKAGES = (
    "perflab",
    "pandas",
    "numpy",
    "scipy",
    "plotly",
    "hdrhistogram",
    "JPype1",
    "duckdb",
    "psutil",
    "papermill",
    "nbconvert",
    "nbformat",
    "ipykernel",
    "dask",
    "distributed",
    "ruptures",
)


def _run(cmd: list[str], timeout: float = 30) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=paths.repo_root())
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout + out.stderr).strip() if out.returncode == 0 else None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


@functools.lru_cache(maxsize=1)
def machine_info() -> dict:
    cpu_model = next(
        (
            line.split(":", 1)[1].strip()
            for line in (_read("/proc/cpuinfo") or "").splitlines()
            if line.startswith("model name")
        ),
        None,
    )
    mem = re.search(r"^MemTotal:\s+(\d+)", _read("/proc/meminfo") or "", re.MULTILINE)
    os_name = re.search(r'^PRETTY_NAME="?([^"\n]+)', _read("/etc/os-release") or "", re.MULTILINE)
    return {
        "hostname": socket.gethostname(),
        "cores": os.cpu_count(),
        "cpu_model": cpu_model or platform.processor(),
        "memory_bytes": int(mem.group(1)) * 1024 if mem else None,
        "kernel": platform.release(),
        "os": os_name.group(1) if os_name else platform.platform(),
        "arch": platform.machine(),
        "perf_event_paranoid": _read("/proc/sys/kernel/perf_event_paranoid"),
    }


@functools.lru_cache(maxsize=1)
def python_info() -> dict:
    packages = {}
    for name in PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    return {"python": sys.version.split()[0], "packages": packages}


@functools.lru_cache(maxsize=1)
def profiler_versions() -> dict:
    """async-profiler and converter versions, from the jars' Maven metadata."""

    out = {}
    for name, getter in (("async-profiler", paths.async_profiler_jar), ("jfr-converter", paths.converter_jar)):
        try:
            with zipfile.ZipFile(getter()) as z:
                props = z.read(f"META-INF/maven/tools.profiler/{name}/pom.properties").decode()
            out[name] = next(
                (ln.split("=", 1)[1].strip() for ln in props.splitlines() if ln.startswith("version=")), None
            )
        except (OSError, KeyError, zipfile.BadZipFile, Exception):  # noqa: BLE001 - a version is information only
            out[name] = None
    return out


@functools.lru_cache(maxsize=1)
def java_version() -> str | None:
    """The default JDK's ``java -version`` (its first line)."""

    try:
        return jdk.version()[1]
    except Exception:  # noqa: BLE001 - no JDK is a finding of the record, not a crash
        return None


@functools.lru_cache(maxsize=1)
def chromium_version() -> str | None:
    exe = shutil.which("chromium")
    if not exe:
        return None
    # Debian's wrapper script may print a shell warning before the version line
    text = _run([exe, "--version"], timeout=20) or ""
    return next((ln.strip() for ln in text.splitlines() if "chromium" in ln.lower() and "[" not in ln), None)


def environment(tools: dict | None = None) -> dict:
    """The record: git, machine, Python and ``tools`` (name -> version, e.g. the load generator a run
    used) with the profiler's versions."""
    return {
        "git": checkout(),
        "machine": machine_info(),
        "python": python_info(),
        "tools": {**(tools or {}), **profiler_versions()},
    }


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (how busy the machine was: experiments share its cores)."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None
