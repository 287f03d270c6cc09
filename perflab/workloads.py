"""Workloads: a script of ``wrk-scripts/`` with the arguments it takes, as one :class:`LoadParams`.

Every script documents its arguments in its header (``--   name=default  help``); :func:`workload`
passes a script only the lab's standard values it takes (``threads``, ``keys``, ``value``, ``seed``...),
so one call serves every script, and the generator's threads never exceed its connections.
"""

from __future__ import annotations

from .config import LoadParams
from .paths import script_arguments


def script_args(script: str, **values) -> tuple[str, ...]:
    """``name=value`` arguments for ``script``, keeping only those it takes (``None`` values are left out:
    the script's default applies). ``keys`` also feeds a sequential script's ``count`` (it wraps within
    the prefilled keys)."""
    accepted = script_arguments(script)
    if "keys" in values and "count" in accepted and "count" not in values:
        values["count"] = values["keys"]
    out = []
    for name, value in values.items():
        if value is None or name not in accepted:
            continue
        out.append(f"{name}={int(value) if isinstance(value, bool) else value}")
    return tuple(out)


def workload(
    script: str,
    connections: int,
    threads: int = 2,
    keys: int | None = None,
    value_size: int | None = None,
    seed: int | None = None,
    extra_args=(),
    **load,
) -> LoadParams:
    """The :class:`LoadParams` of ``script`` with ``connections`` connections: ``min(threads,
    connections)`` generator threads (each script thread gets its own keys: :class:`LoadParams` passes
    ``threads=`` to the scripts that take it), ``keys``, ``value_size`` and ``seed`` passed to the script where it takes them,
    then ``extra_args`` (e.g. ``path=/kv`` for your server's API); ``load``: any other LoadParams field
    (``rate``, ``duration``, ``warmup``...)."""
    t = min(threads, connections)
    args = script_args(script, keys=keys, value=value_size, seed=seed) + tuple(extra_args)
    return LoadParams(script=script, threads=t, connections=connections, script_args=args, **load)
