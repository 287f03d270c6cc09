"""``perflab bench``: the server's standard benchmark, through the same library users run.

For each target (workload × backend) and each CPU placement it runs :func:`perflab.find_breakpoint`
(one recorded run per search) and prints one Markdown table: the breakpoint with its interval and
outcome, the validity of the probes it rests on, the ratio to the ``/v0/status`` ceiling of the same
placement, and where the CPU went at the highest passing rate (server and generator, per request).
``--rates`` skips the searches and holds every target at the same fixed rates instead (one recorded
experiment each), for a table of CPU per request at equal rates.

``java-server/bench/RESULTS.md`` quotes its tables with the command that produced them.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from . import fmt
from .breakpoint import find_breakpoint
from .config import BreakpointParams, LoadParams, PrefillParams, ServerConfig
from .core.session import SessionOptions
from .experiment import run_experiment
from .server.placement import Placement
from .workloads import workload


@dataclass(frozen=True)
class Target:
    """What one benchmark target measures: the server's configuration (besides ``--mode``), the script, and
    whether it reads a prefilled database; ``connections``/``threads`` fixed by the target, else the
    command line's."""

    server: dict
    script: str
    prefilled: bool = False
    connections: int | None = None
    threads: int | None = None


TARGETS = {
    "ceiling": Target({"backend": "memory"}, "status.lua"),
    "lsm-get": Target({"backend": "lsm"}, "get-random.lua", prefilled=True),
    "lsm-put": Target({"backend": "lsm"}, "put-random.lua", prefilled=True),
    "rocksdb-get": Target({"backend": "rocksdb"}, "get-random.lua", prefilled=True),
    "rocksdb-put": Target({"backend": "rocksdb"}, "put-random.lua", prefilled=True),
    "memory-put": Target({"backend": "memory"}, "put-random.lua"),
    # capacity set by a 2 ms park on each of 4 workers (2,000/s), not by the CPU: how close the search gets
    "known-capacity": Target(
        {"backend": "memory", "mode": "async", "workers": 4, "debug_delay": "2ms"},
        "status.lua",
        connections=16,
        threads=1,
    ),
}


@dataclass
class Row:
    target: str
    placement: str
    round: int = 1
    rate: float | None = None
    interval: tuple = (None, None)
    outcome: str = ""
    validity: str = ""
    server_us: float | None = None
    generator_us: float | None = None
    p99_ms: float | None = None
    seconds: float | None = None
    run_id: str | None = None
    host: float | None = None


def _cpu_per_request(res, validity: dict | None) -> tuple[float | None, float | None]:
    """(server, generator) CPU microseconds per request of one load, from its validity record."""
    v = validity or {}
    if res is None or not res.requests:
        return None, None
    cores = ((v.get("checks") or {}).get("server_cpu") or {}).get("value")
    server = cores * res.duration_s / res.requests * 1e6 if isinstance(cores, (int, float)) else None
    cpu = res.generator_cpu or {}
    gen = (cpu.get("user_s", 0) + cpu.get("sys_s", 0)) / res.requests * 1e6 if cpu else None
    return server, gen


def _setup(target: str, args) -> tuple[ServerConfig, LoadParams, PrefillParams | None]:
    t = TARGETS[target]
    server = ServerConfig(**{"mode": args.mode, **t.server})
    load = workload(
        t.script, t.connections or args.connections, threads=t.threads or args.threads, keys=args.keys, seed=1
    )
    return server, load, PrefillParams(keys=args.keys) if t.prefilled else None


def search_row(target: str, placement: str, args, data_root=None) -> Row:
    server, load, prefill = _setup(target, args)
    res = find_breakpoint(
        server,
        load,
        params=BreakpointParams(),
        prefill=prefill,
        name=f"bench-{target}",
        progress=not args.quiet,
        session=SessionOptions(data_root=data_root, placement=placement),
    )
    row = Row(
        target,
        placement,
        rate=res.rate,
        interval=res.interval,
        outcome=str(res.outcome),
        validity=res.validity or "not assessed",
        seconds=res.seconds,
        run_id=res.run_id,
        host=res.host_spread,
    )
    at = [p for p in res.probes if p.rate == res.edges[0] and p.judgement.passed]
    if at:
        row.server_us, row.generator_us = _cpu_per_request(at[-1].result, at[-1].validity)
        row.p99_ms = at[-1].judgement.metrics.get("p99_ms")
    return row


def rate_row(target: str, placement: str, rate: float, args, data_root=None) -> Row:
    server, load, prefill = _setup(target, args)
    res = run_experiment(
        server,
        load.replace(rate=rate, duration=args.duration, warmup=args.warmup),
        prefill=prefill,
        name=f"bench-{target}",
        session=SessionOptions(data_root=data_root, placement=placement),
    )
    server_us, gen_us = _cpu_per_request(res.load, res.validity.to_dict())
    return Row(
        target,
        placement,
        rate=rate,
        outcome="fixed rate",
        validity=res.validity.level,
        server_us=server_us,
        generator_us=gen_us,
        p99_ms=res.load.p99_ms,
        run_id=res.run_id,
    )


def _fmt(v, spec=",.0f"):
    return "" if v is None else format(v, spec)


def table(rows: list[Row], fixed: bool = False) -> str:
    # each row against the ceiling of its own round and placement: the host's speed drifts between rounds
    ceilings = {(r.round, r.placement): r.rate for r in rows if r.target == "ceiling" and r.rate}
    if fixed:
        head = "| rate | target | placement | validity | server CPU us/req | generator CPU us/req | p99 ms | run |"
        lines = [head, "|---:|---|---|---|---:|---:|---:|---|"]
        for r in rows:
            lines.append(
                f"| {_fmt(r.rate)} | {r.target} | {r.placement} | {r.validity} | {_fmt(r.server_us, '.1f')} | "
                f"{_fmt(r.generator_us, '.1f')} | {_fmt(r.p99_ms, '.2f')} | {r.run_id} |"
            )
        return "\n".join(lines)
    head = (
        "| round | target | placement | breakpoint req/s | interval | outcome | probes' validity | x ceiling | "
        "server CPU us/req | generator CPU us/req | search s | host speed spread |"
    )
    lines = [head, "|---:|---|---|---:|---|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        c = ceilings.get((r.round, r.placement))
        ratio = r.rate / c if r.rate and c and r.target != "ceiling" else None
        lines.append(
            f"| {r.round} | {r.target} | {r.placement} | {_fmt(r.rate)} | {fmt.interval(r.interval)} | {r.outcome} | "
            f"{r.validity} | {_fmt(ratio, '.2f')} | {_fmt(r.server_us, '.1f')} | "
            f"{_fmt(r.generator_us, '.1f')} | {_fmt(r.seconds, '.0f')} | {_fmt(r.host, '.2f')}{'x' if r.host else ''} |"
        )
    return "\n".join(lines)


def add_parser(sub) -> argparse.ArgumentParser:
    b = sub.add_parser("bench", help="the server's standard benchmark: breakpoints of every target and placement")
    b.add_argument(
        "--only",
        default="ceiling,lsm-get,lsm-put",
        help=f"targets, comma-separated, of {', '.join(TARGETS)} (default ceiling,lsm-get,lsm-put)",
    )
    b.add_argument("--placement", default="shared,split", help="placements to measure (default shared,split)")
    b.add_argument("--keys", type=int, default=1_000_000, help="prefilled keys (default 1000000)")
    b.add_argument("--threads", type=int, default=2, help="generator threads (default 2)")
    b.add_argument("--connections", type=int, default=32, help="connections (default 32)")
    b.add_argument("--mode", default="sync", help="server mode (default sync)")
    b.add_argument("--rounds", type=int, default=1, help="repeat the whole set, interleaved (default 1)")
    b.add_argument("--rates", help="R1,R2,...: fixed rates instead of searches (CPU per request at equal rates)")
    b.add_argument("--duration", default="10s", help="with --rates: measured window (default 10s)")
    b.add_argument("--warmup", default="5s", help="with --rates: unrecorded load first (default 5s)")
    b.add_argument("--data", help="data root (default $PERFLAB_DATA or <repo>/data)")
    b.add_argument("--quiet", action="store_true", help="no progress bars")
    return b


def main(args) -> int:
    targets = [t.strip() for t in args.only.split(",") if t.strip()]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        raise ValueError(f"--only: unknown target {', '.join(unknown)} (known: {', '.join(TARGETS)})")
    placements = [p.strip() for p in args.placement.split(",") if p.strip()]
    for p in placements:
        Placement.of(p)  # a bad placement fails before any server starts
    rates = None
    if args.rates:
        try:
            rates = [float(x) for x in args.rates.split(",")]
        except ValueError:
            raise ValueError(f"--rates: expected comma-separated rates like 20000,40000, got {args.rates!r}") from None
        if any(r <= 0 for r in rates):
            raise ValueError(f"--rates: rates must be > 0, got {args.rates!r}")
    if args.rounds < 1:
        raise ValueError(f"--rounds: must be >= 1, got {args.rounds}")
    rows = []
    for n in range(1, args.rounds + 1):
        for placement in placements:
            for t in targets:
                if rates:
                    for r in rates:
                        rows.append(rate_row(t, placement, r, args, args.data))
                        rows[-1].round = n
                        print(table(rows[-1:], fixed=True).splitlines()[-1], flush=True)
                else:
                    rows.append(search_row(t, placement, args, args.data))
                    rows[-1].round = n
                    print(table(rows).splitlines()[-1], flush=True)
    print()
    print(table(rows, fixed=bool(rates)))
    return 0
