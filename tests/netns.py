"""Hosts on one machine: network namespaces, each with a real Dask worker process started as users start
theirs, with ``perflab worker`` (and the scheduler with ``perflab scheduler``; with ``tls``: the lab's
certificates, ``perflab certs``). The tests' hosts, and the benchmark's: ``scripts/hosts_bench.py``; they
share this machine's CPUs, so they show correctness and overhead, not speed.

A Linux bridge ``plbr0`` in the root namespace (10.77.0.1/24, a private range traffic never leaves: the
bridge is this machine's) and one namespace per host (``plns-<name>``, a veth pair into the bridge,
10.77.0.<10+i>/24): the scheduler's and each worker's. Everything is named with the ``plns``/``plv``/``plbr``
prefixes, removed in :meth:`NetnsHosts.close` (also after a failure), and stale leftovers of an interrupted
run are removed before anything is made. Every process started here carries ``marker`` on its command line
(its directories), and so do the processes its agents start (``TMPDIR`` points into it), so a test can look
for orphans by command line.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from perflab.config.hosts import SCHEDULER_ENV
from perflab.core.session import SessionOptions
from perflab.hosts.pool import disconnect

REPO = Path(__file__).resolve().parents[1]  # the checkout: the workers run its perflab
PREFIX = "plns-"
BRIDGE = "plbr0"
SUBNET = "10.77.0"
PORT = 8786


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def why_not() -> str | None:
    """``None`` when namespaces, veths and a bridge can be made here, else why not (the tests skip)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2)"
    # named per process: two test workers probing at once collided and one skipped
    probe, bridge = f"{PREFIX}probe{os.getpid()}", f"plbrp{os.getpid()}"
    r = _ip("netns", "add", probe, check=False)
    if r.returncode != 0:
        return f"`ip netns add` failed: {r.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    r = _ip("link", "add", bridge, "type", "bridge", check=False)
    if r.returncode != 0:
        return f"cannot make a bridge: {r.stderr.strip()}"
    _ip("link", "del", bridge, check=False)
    return None


def _marked(p, marker: str) -> bool:
    """A process started here: the marker on its command line, or in its TMPDIR (a scheduler's command line
    names no directory)."""
    if marker in " ".join(p.info["cmdline"] or []):
        return True
    try:
        return marker in p.environ().get("TMPDIR", "")
    except Exception:  # noqa: BLE001 - another user's process, or one that just exited
        return False


def clean_stale() -> None:
    """Remove what an interrupted run left: namespaces, their veths, the bridge, marked processes."""
    import psutil

    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if p.pid != os.getpid() and _marked(p, "perflab-netns-"):
                p.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.strip() else ""
        if name.startswith(PREFIX):
            _ip("netns", "del", name, check=False)
    for line in _ip("-o", "link", "show", check=False).stdout.splitlines():
        dev = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if dev.startswith("plv-") or dev == BRIDGE:
            _ip("link", "del", dev, check=False)


@dataclass
class Host:
    name: str
    ip: str
    roles: str | None  # "server", "generator" or both ("generator,server"); None: the scheduler
    proc: subprocess.Popen | None = None

    @property
    def ns(self) -> str:
        return PREFIX + self.name


@dataclass
class NetnsHosts:
    """A scheduler and workers in namespaces (see the module docstring)."""

    hosts: dict[str, Host]
    marker: str
    root: Path
    tls: str | None = None
    logs: dict = field(default_factory=dict)

    @property
    def address(self) -> str:
        return f"{'tls' if self.tls else 'tcp'}://{self.hosts['sched'].ip}:{PORT}"

    def options(self, **kw) -> SessionOptions:
        """A run's session on these hosts (``scheduler``, ``tls``) and ``kw`` (its other fields)."""
        return SessionOptions(scheduler=self.address, tls=self.tls, **kw)

    def worker_pid(self, name: str) -> int:
        return self.hosts[name].proc.pid

    def processes(self, name: str | None = None) -> list:
        """Live processes carrying the marker (of host ``name`` only, when given), workers excluded."""
        import psutil

        mine = {h.proc.pid for h in self.hosts.values() if h.proc is not None}
        want = str(self.root / name) if name else self.marker
        out = []
        for p in psutil.process_iter(["pid", "cmdline", "status"]):
            try:
                if p.info["status"] == psutil.STATUS_ZOMBIE or p.pid in mine or p.pid == os.getpid():
                    continue
                cmd = " ".join(p.info["cmdline"] or [])
                if want in cmd and "dask" not in cmd:
                    out.append(p)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return out

    def start(self, name: str) -> None:
        h = self.hosts[name]
        d = self.root / name
        d.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, TMPDIR=str(d), PYTHONUNBUFFERED="1")
        env.pop(SCHEDULER_ENV, None)
        env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        perflab = [sys.executable, "-m", "perflab"]
        tls = ["--tls", self.tls] if self.tls else []
        if h.roles is None:
            cmd = [*perflab, "scheduler", "--host", h.ip, "--port", str(PORT), "--no-dashboard", *tls]
        else:
            cmd = [
                *perflab,
                "worker",
                self.address,
                "--name",
                name,
                "--roles",
                h.roles,
                "--host",
                h.ip,
                "--local-directory",
                str(d),
                *tls,
            ]
        log = open(d / "log.txt", "ab")
        h.proc = subprocess.Popen(
            ["ip", "netns", "exec", h.ns, *cmd],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=str(REPO),
            start_new_session=True,
        )
        log.close()

    def wait_workers(self, names: list[str], timeout: float = 90.0) -> None:
        from distributed import Client

        from perflab.hosts.tls import security

        deadline = time.monotonic() + timeout
        client = None
        try:
            while time.monotonic() < deadline:
                try:
                    client = client or Client(
                        self.address, timeout=5, set_as_default=False, security=security(self.tls) if self.tls else None
                    )
                    got = {w["name"] for w in client.scheduler_info(n_workers=-1)["workers"].values()}
                    if set(names) <= got:
                        return
                except OSError:
                    pass
                for n in names:
                    p = self.hosts[n].proc
                    if p.poll() is not None:
                        raise RuntimeError(f"worker {n} exited: {(self.root / n / 'log.txt').read_text()[-3000:]}")
                time.sleep(0.3)
            raise RuntimeError(f"workers {names} did not join within {timeout:g} s")
        finally:
            if client is not None:
                client.close()

    def kill(self, name: str) -> None:
        """SIGKILL a host's worker (a host dying mid-run)."""
        os.killpg(self.hosts[name].proc.pid, signal.SIGKILL)
        self.hosts[name].proc.wait(timeout=10)

    def close(self) -> None:
        disconnect(self.address)
        for h in self.hosts.values():
            if h.proc is not None and h.proc.poll() is None:
                try:
                    os.killpg(h.proc.pid, signal.SIGTERM)
                    h.proc.wait(timeout=10)
                except (subprocess.TimeoutExpired, ProcessLookupError):
                    try:
                        os.killpg(h.proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        for p in self.processes():
            try:
                p.kill()
            except Exception:  # noqa: BLE001
                pass
        clean_stale()
        shutil.rmtree(self.root, ignore_errors=True)


def make(workers: dict[str, str], tls: bool = False) -> NetnsHosts:
    """The bridge, a namespace for the scheduler and one per worker (``name -> roles``), each process
    started (``tls``: with certificates made for them by ``perflab certs``); returns once every worker
    joined. On any failure everything made so far is removed."""
    clean_stale()
    root = Path(tempfile.mkdtemp(prefix="perflab-netns-"))
    hosts = {"sched": Host("sched", f"{SUBNET}.10", None)}
    for i, (name, roles) in enumerate(workers.items(), 1):
        hosts[name] = Host(name, f"{SUBNET}.{10 + i}", roles)
    c = NetnsHosts(hosts, root.name, root)
    try:
        if tls:
            c.tls = str(root / "tls")
            subprocess.run(
                [sys.executable, "-m", "perflab", "certs", c.tls],
                check=True,
                capture_output=True,
                cwd=str(REPO),
                env=dict(os.environ, PYTHONPATH=str(REPO)),
            )
        _ip("link", "add", BRIDGE, "type", "bridge")
        _ip("addr", "add", f"{SUBNET}.1/24", "dev", BRIDGE)
        _ip("link", "set", BRIDGE, "up")
        for h in hosts.values():
            veth, peer = f"plv-{h.name}", f"plp-{h.name}"
            _ip("netns", "add", h.ns)
            _ip("link", "add", veth, "type", "veth", "peer", "name", peer)
            _ip("link", "set", peer, "netns", h.ns)
            _ip("link", "set", veth, "master", BRIDGE)
            _ip("link", "set", veth, "up")
            _ip("-n", h.ns, "addr", "add", f"{h.ip}/24", "dev", peer)
            _ip("-n", h.ns, "link", "set", peer, "up")
            _ip("-n", h.ns, "link", "set", "lo", "up")
        c.start("sched")
        for name in workers:
            c.start(name)
        c.wait_workers(list(workers))
    except BaseException:
        c.close()
        raise
    return c
