"""The load of a cluster run: the workload with the cluster's ack/from, sent to one entry node or split over
several, one perflab-load process each, all on one schedule.

With one entry node it is one ordinary generator process. With several, process ``i`` of ``k`` runs
``--segment i/k`` of the same ``-t/-c/-R`` against entry node ``entries[i]``: the parts together send
exactly the schedule of one unsplit run (docs/architecture.md section 5), each to its own node, and their
outputs merge into one result (:mod:`perflab.measure.merge`) that keeps every part's achieved and offered
rate. Every process starts with ``--start-at T`` (all at once, after connecting), so the measured window
starts at the known time ``T + warm-up``: the fault schedule and the consistency checker run on that clock.
"""

from __future__ import annotations

import json
import math
import subprocess
import time
from pathlib import Path

from .. import children, paths
from ..config import LoadParams
from ..errors import LoadError
from ..measure.generator import LoadTool
from ..measure.merge import merge_parts
from ..measure.result import CONSOLE, HDR_LOG, STDERR, SUMMARY, LoadResult, read_outputs
from ..workloads import script_arguments

#: seconds between starting the generator processes and the schedule: connect, run setup/init, print ready
#: (measured on the loaded 2-core machine: ready ~0.05 s after the start, so this is ten times that)
LEAD_S = 0.5
LEAD_PER_PART_S = 0.1
_REPLICA_ARGS = ("ack", "from", "replicas")


def cluster_load(load: LoadParams, config) -> LoadParams:
    """``load`` with the cluster's ack/from appended in its API style, when the script takes them (a script
    that does not send ``/v0/entity`` requests, such as ``status.lua``, is left as it is). Giving them in
    ``script_args`` too is an error: the cluster's ``ack``/``from_`` are the one place."""
    if load.tool != "perflab-load":
        raise ValueError("tool: a cluster run needs perflab-load (its parts share one schedule: --segment, "
                         "--start-at)")
    given = [a.split("=", 1)[0] for a in load.script_args if a.split("=", 1)[0] in _REPLICA_ARGS]
    if given:
        raise ValueError(f"script_args: {given[0]}= is set by the cluster (ClusterConfig ack/from_, api); remove it "
                         f"from the load's script arguments")
    if load.script is None or "ack" not in script_arguments(load.script):
        return load
    return load.replace(script_args=tuple(load.script_args) + config.replica_args())


def check_entries(load: LoadParams, entries) -> LoadParams:
    """``load`` as it runs over ``entries`` entry nodes (one generator process each): enough threads, and a
    ramp's early stop dropped when split (each part would stop on its own; the ramp then runs its whole
    length, which a ramp's estimate handles). Any other early stop split over several nodes is an error."""
    if len(entries) > load.threads:
        raise ValueError(f"threads: the load is split over {len(entries)} entry nodes, one generator process "
                         f"each, so it needs at least {len(entries)} threads (-t), got {load.threads}")
    if load.stop_on_p99 is not None and len(entries) > 1:
        if load.ramp is None:
            raise ValueError("stop_on_p99: each entry node's part would stop on its own; send the load to one "
                             "entry node (entry=0) to stop early")
        return load.replace(stop_on_p99=None)
    return load


class ClusterLoadProcess:
    """The generator processes of one cluster load (see the module docstring): ``wait()`` returns the
    whole run's :class:`LoadResult`, ``parts`` the parts' own results."""

    def __init__(self, cluster, load: LoadParams, out_dir, cpu_prefix: list[str] | None = None,
                 entries=None):
        self.cluster = cluster
        self.entries = tuple(entries if entries is not None else cluster.config.entries)
        self.params = check_entries(cluster_load(load, cluster.config), self.entries)
        self.out_dir = Path(out_dir)
        self.cpu_prefix = list(cpu_prefix or [])
        self.procs: list[subprocess.Popen] = []
        self.part_dirs: list[Path] = []
        self.started_at = 0.0
        self.start_at = 0.0
        self.parts: dict[int, LoadResult] = {}
        self._files = []

    @property
    def window_start(self) -> float:
        """Epoch seconds when the measured window starts (after the warm-up)."""
        return self.start_at + self.params.warmup

    @property
    def expected_seconds(self) -> float:
        return self.start_at - self.started_at + self.params.warmup + self.params.duration

    def start(self) -> "ClusterLoadProcess":
        p = self.params
        binary = LoadTool.of(p).binary
        k = len(self.entries)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.started_at = time.time()
        self.start_at = math.ceil((self.started_at + LEAD_S + LEAD_PER_PART_S * k) * 1000) / 1000
        for i, node in enumerate(self.entries):
            d = self.out_dir if k == 1 else self.out_dir / "entries" / str(node)
            d.mkdir(parents=True, exist_ok=True)
            extra = ["--start-at", f"{self.start_at:.3f}"] + (["--segment", f"{i}/{k}"] if k > 1 else [])
            cmd = [*self.cpu_prefix, str(binary), *extra, *p.args(self.cluster.nodes[node].url, d / SUMMARY, d / HDR_LOG)]
            out, err = open(d / CONSOLE, "wb"), open(d / STDERR, "wb")
            self._files += [out, err]
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True,
                                    cwd=str(paths.repo_root()))
            children.register(proc)
            self.procs.append(proc)
            self.part_dirs.append(d)
        self.command = [" ".join(map(str, pr.args)) for pr in self.procs]
        return self

    def stop(self, grace_s: float = 5.0) -> None:
        import signal
        for proc in self.procs:
            children.kill_group(proc, grace_s, sig=signal.SIGINT)
        self._close()

    def _close(self):
        for f in self._files:
            if not f.closed:
                f.close()

    def wait(self, timeout: float | None = None) -> LoadResult:
        limit = timeout if timeout is not None else self.expected_seconds + 60
        end = time.monotonic() + limit
        try:
            for proc in self.procs:
                proc.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.stop(1)
            raise LoadError(f"perflab-load did not finish within {limit:g} s; killed",
                            "\n".join(children.tail(d / STDERR) for d in self.part_dirs))
        except BaseException:
            self.stop(2)
            raise
        self._close()
        for proc in self.procs:
            children.unregister(proc)
        ended = time.time()
        for proc, d, node in zip(self.procs, self.part_dirs, self.entries):
            if proc.returncode != 0:
                tail = children.tail(d / STDERR)
                lines = [ln for ln in tail.splitlines() if ln.strip()]
                raise LoadError(f"perflab-load for entry node {node} exited with status {proc.returncode}"
                                + (f": {lines[-1]}" if lines else ""), tail)
        labels = [f"node {n}" for n in self.entries]
        if len(self.entries) > 1:
            merge_parts(self.part_dirs, self.out_dir, labels)
            for d, node in zip(self.part_dirs, self.entries):   # each part's rates (its latency is in the merge)
                self.parts[node] = self._result(d, self.cluster.nodes[node].url, ended, with_log=False)
        res = self._result(self.out_dir, ",".join(self.cluster.nodes[n].url for n in self.entries), ended)
        if len(self.entries) == 1:
            self.parts[self.entries[0]] = res
        return res

    def _result(self, d: Path, url: str, ended: float, with_log: bool = True) -> LoadResult:
        console = (d / CONSOLE).read_text(errors="replace")
        err_tail = children.tail(d / STDERR)
        if with_log:
            summary, hdr = read_outputs(d, self.params, console, "perflab-load", err_tail)
        else:
            summary, hdr = json.loads((d / SUMMARY).read_text()), None
        return LoadResult(params=self.params, url=url, command=self.command, returncode=0, console=console,
                          summary=summary, hdr=hdr, out_dir=d, started_at=self.started_at, ended_at=ended,
                          stderr_tail=err_tail, tool_version=summary.get("version"))

    def entry_rates(self) -> list[dict]:
        """Per entry node: offered (its share of the schedule) and achieved rate, requests, errors."""
        rows = []
        for node, r in self.parts.items():
            rows.append({"node": node, "url": r.url, "offered_rate": r.target_rate, "achieved_rate": r.achieved_rate,
                         "achieved_ratio": r.achieved_ratio, "requests": r.requests, "errors": r.errors_total,
                         "status_codes": r.status_counts})
        return rows

