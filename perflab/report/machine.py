"""What a report records about where and with what it ran: machine, versions, git commit."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path


def _run(cmd: list[str], cwd: Path | None = None, timeout: float = 30) -> str | None:
    try:
        out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return (out.stdout + out.stderr).strip()


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine() -> dict:
    mem = memory_bytes()
    return {
        "hostname": platform.node(),
        "cores": os.cpu_count(),
        "cpu_model": cpu_model(),
        "memory_gib": round(mem / 2**30, 1) if mem else None,
        "kernel": platform.release(),
        "os": _os_name(),
        "arch": platform.machine(),
    }


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (how busy the machine was: experiments share its cores)."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.platform()


def git_info(repo: Path) -> dict:
    commit = _run(["git", "rev-parse", "HEAD"], cwd=repo)
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo)
    branch = _run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=repo)
    return {
        "commit": commit or "none (no commit yet or not a git checkout)",
        "branch": branch,
        "dirty": bool(status) if status is not None else None,
    }


def _pkg(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions(repo: Path, loadgen: Path | None = None, java_home: str | None = None) -> dict:
    out = {"python": sys.version.split()[0]}
    for name in ("perflab", "papermill", "nbconvert", "nbformat", "plotly", "pandas", "numpy", "duckdb",
                 "JPype1", "hdrhistogram", "ipykernel"):
        out[name] = _pkg(name)
    java = Path(java_home or os.environ.get("JAVA_HOME") or "") / "bin" / "java"
    java_cmd = str(java) if java.exists() else shutil.which("java")
    if java_cmd:
        text = _run([java_cmd, "-version"]) or ""
        m = re.search(r'version "([^"]+)"', text)
        vm = re.search(r"^(OpenJDK|Java).*VM.*$", text, re.MULTILINE)
        out["java"] = (m.group(1) if m else text.splitlines()[0] if text else None)
        if vm:
            out["jvm"] = vm.group(0)
    if loadgen and Path(loadgen).exists():
        out["perflab-load"] = _run([str(loadgen), "--version"])
    chromium = shutil.which("chromium")
    if chromium:
        # Debian's wrapper script may print a shell warning before the version line
        text = _run([chromium, "--version"], timeout=20) or ""
        out["chromium"] = next((ln.strip() for ln in text.splitlines() if "chromium" in ln.lower() and "[" not in ln), None)
    return {k: v for k, v in out.items() if v}
