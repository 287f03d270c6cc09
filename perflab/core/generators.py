"""The generator side of a load, on each generator host: :class:`GeneratorHost`, a Dask actor
(:class:`perflab.hosts.actors.Agent`) that owns the perflab-load processes of one load there.

One process per *part* (:mod:`.load`): one part, or one per entry node of a cluster, each its own segment of
one schedule. The host hands back its ready lines, exit statuses and its files' contents (JSON summary,
hdr log, console, stderr), never paths; every process it starts dies with its worker (``setpriv --pdeathsig
KILL``), and its watchdog stops them when the coordinator is gone.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from .. import children, paths
from ..children import pdeathsig_prefix
from ..hosts.actors import WATCHDOG_S, Agent
from ..measure.generator import LoadProcess
from ..measure.result import CONSOLE, HDR_LOG, STDERR, SUMMARY

#: the generator's ready line on stderr (docs/contracts/generator.md section 5)
READY_LINE = "perflab-load: ready"


class GeneratorHost(Agent):
    """The perflab-load processes of one load on a generator host (see the module docstring)."""

    def __init__(self, name: str, watchdog_s: float = WATCHDOG_S):
        super().__init__(name, watchdog_s)
        self.parts: dict[int, tuple] = {}  # part -> (LoadProcess, its output directory, made here)

    def start(
        self,
        url: str,
        params,
        extra: list[str],
        out_dir: str | None = None,
        cpu_prefix: list[str] | None = None,
        part: int = 0,
    ) -> dict:
        """Start part ``part`` (perflab-load against ``url``; ``params``: the whole run's LoadParams,
        ``extra``: ``--segment``/``--start-at``) writing into ``out_dir`` (a directory of this host; default
        a fresh temporary one)."""
        if part in self.parts and self.parts[part][0].poll() is None:
            raise RuntimeError(f"{self.name}: part {part} of a load is already running")
        self.heard()
        own = out_dir is None
        d = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="load-", dir=self.tmp))
        lp = LoadProcess(url, _local_script(params), d, [*(cpu_prefix or []), *pdeathsig_prefix()], extra=extra)
        self.parts[part] = (lp, d, own)
        lp.start()
        return {"command": lp.command, "pid": lp.proc.pid, "started_at": lp.started_at}

    async def state(self) -> dict:
        """Per part: ``ready`` (its ready line is on stderr), ``rc`` (exit status, ``None`` while it runs);
        and the host's clock. Cheap: the coordinator polls it, which also keeps the watchdog quiet."""
        self.heard()
        out = {}
        for part, (lp, d, _) in list(self.parts.items()):
            try:
                ready = READY_LINE in (d / STDERR).read_text(errors="replace")
            except OSError:
                ready = False
            out[part] = {"ready": ready, "rc": lp.poll()}
        return {"parts": out, "time": time.time()}

    def stop(self, grace_s: float = 5.0) -> None:
        """SIGINT (perflab-load writes what it has), then SIGKILL of its group after ``grace_s``."""
        for lp, _, _ in list(self.parts.values()):
            lp.stop(grace_s)

    def collect(self, contents: bool = True) -> dict:
        """Once they have exited, per part: its exit status, start and end, and (``contents``) its files'
        text."""
        if not self.parts:
            raise RuntimeError(f"{self.name}: no load was started")
        out = {}
        for part, (lp, d, own) in self.parts.items():
            rc = lp.proc.wait(timeout=30)
            children.unregister(lp.proc)
            lp._close()
            got = {"rc": rc, "command": lp.command, "started_at": lp.started_at, "ended_at": time.time(), "files": {}}
            if contents:
                for f in (CONSOLE, STDERR, SUMMARY, HDR_LOG):
                    if (d / f).is_file():
                        got["files"][f] = (d / f).read_text(errors="replace")
            if own:
                shutil.rmtree(d, ignore_errors=True)
            out[part] = got
        self.parts = {}
        return out

    def _expire(self):
        self.stop(1.0)
        super()._expire()

    def close(self) -> None:
        self.stop(1.0)
        super().close()


def _local_script(params):
    """The script as a path on this host: a script inside the coordinator's checkout is looked up in this
    host's checkout (``wrk-scripts/...``), anything else must exist at the same path."""
    if not params.script:
        return params
    p = Path(params.script)
    if p.is_file():
        return params
    parts = p.parts
    if "wrk-scripts" in parts:
        mine = paths.wrk_scripts_dir().joinpath(*parts[parts.index("wrk-scripts") + 1 :])
        if mine.is_file():
            return params.replace(script=str(mine))
    raise FileNotFoundError(f"script {params.script} does not exist on this host")
