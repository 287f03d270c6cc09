"""What each stage of the course asks its report for, and which notebook answers each ask.

The course (polis-vk/2024-highload-dht, its README) asks every stage's report for its own measurements: one
connection at a stable rate below the breakpoint at stage 1, at least 64 connections and lock profiles at 2, the
sharded cluster against one node at 3, replication's ack/from at 4, locks against the previous stage at 5, the
whole range streamed from a database larger than the heap at 6. A report about a course server (its stage is its
``@ServiceFactory(stage = N)``, or ``stage`` in a ``perflab.toml``) runs what its stage asks, in that order, each
with the parameters that make it answer (on top of the plan's durations); every other notebook is left out, saying
so (``perflab report --all`` runs them too). The asks are message ids of :mod:`perflab.i18n`: the report says
them in its language.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .. import i18n
from . import facts

#: the stable rate of stages 1, 2 and 5: this fraction of the breakpoint the notebook measures first
STABLE_FRACTION = 0.7
#: "at least 64 connections" (stage 2 and after)
MANY_CONNECTIONS = 64


@dataclass(frozen=True)
class Ask:
    """One thing a stage's report must show (a message id) and the notebook that shows it; ``measured``: whether
    the notebook's runs (their ``meta.json``) hold it, when running is not enough, and ``unmeasured`` (a message
    id) why not."""

    text: str
    notebook: str
    measured: Callable[[list[dict]], bool] | None = None
    unmeasured: str = ""


def _keys_per_node(runs: list[dict]) -> bool:
    """A cluster run counted the keys of each node (the nodes' range API), or knows its routing function."""
    for m in runs:
        d = (m.get("results") or {}).get("key_distribution") or {}
        if d.get("owners") or (d.get("stored") and all(v is not None for v in d["stored"])):
            return True
    return False


@dataclass(frozen=True)
class Stage:
    number: int
    asks: tuple[Ask, ...]
    #: per notebook, the parameters that make it answer this stage's asks (over the plan's own)
    parameters: dict[str, dict] = field(default_factory=dict)

    @property
    def notebooks(self) -> tuple[str, ...]:
        """The notebooks that answer the asks, in the order the asks come."""
        return tuple(dict.fromkeys(a.notebook for a in self.asks))


def _stable(connections: int, events: str) -> dict:
    return {"connections": [connections], "stable_fraction": STABLE_FRACTION, "profile_events": events}


_CLUSTER = "07-cluster"
_STABLE = "01-stable-load"
_PREVIOUS = "08-ab"
_RANGE = "10-range"

STAGES: dict[int, Stage] = {
    1: Stage(
        1,
        (
            Ask("one connection: PUT, then GET on a filled database, at a stable rate below the breakpoint", _STABLE),
            Ask("the load generator's console for PUT and for GET", _STABLE),
            Ask("cpu and alloc profiles of each", _STABLE),
        ),
        {_STABLE: _stable(1, "cpu,alloc")},
    ),
    2: Stage(
        2,
        (
            Ask(
                "at least 64 connections: PUT and GET at a stable rate below the breakpoint, the load generator's "
                "console",
                _STABLE,
            ),
            Ask("cpu, alloc and lock profiles", _STABLE),
            Ask("against the previous stage (the synchronous server)", _PREVIOUS),
        ),
        {_STABLE: _stable(MANY_CONNECTIONS, "cpu,alloc,lock")},
    ),
    3: Stage(
        3,
        (
            Ask(
                "the sharded cluster (3 nodes unless the file says): latency and breakpoint against one node", _CLUSTER
            ),
            Ask(
                "keys per node",
                _CLUSTER,
                _keys_per_node,
                "the nodes did not say how many keys each holds: they answer no GET /v0/entities (the range API "
                "comes at stage 6) and their routing is their own",
            ),
            Ask("against the previous stage (not distributed)", _PREVIOUS),
        ),
        # sharding without replication: each key on one node, as the stage asks
        {_CLUSTER: {"ack": 1, "from_": 1}},
    ),
    4: Stage(
        4,
        (
            Ask("replication: latency for each ack/from", _CLUSTER),
            Ask("a node down: what the clients get, and whether an acknowledged write is lost", _CLUSTER),
            Ask("against the previous stage", _PREVIOUS),
        ),
    ),
    5: Stage(
        5,
        (
            Ask("lock profiles first, then cpu and alloc, at a stable rate below the breakpoint", _STABLE),
            Ask("latency and profiles against the previous stage", _PREVIOUS),
        ),
        {_STABLE: _stable(MANY_CONNECTIONS, "lock,cpu,alloc")},
    ),
    6: Stage(
        6,
        (
            Ask("a database larger than the server's heap, filled through the API", _RANGE),
            Ask("one request streams the whole range while cpu, alloc and lock are profiled", _RANGE),
            Ask("time to stream and bytes per second; the server's heap over the stream", _RANGE),
        ),
    ),
}


def of(number: int | None) -> Stage | None:
    """The stage ``number`` asks for (``None``: not a course stage, or one the course does not have)."""
    return STAGES.get(number) if number is not None else None


def not_asked(t: i18n.Language, number: int) -> str:
    """Why a notebook is left out of a stage's report, in the report's language."""
    return t("not asked by stage {n} (perflab report --all runs it too)", n=number)


def told(t: i18n.Language, stage: Stage, ran: dict[str, dict], runs: dict[str, list[dict]] | None = None) -> list[dict]:
    """Each ask of ``stage`` and what the report did about it: ``ran`` is the report's notebooks by name
    (``status``, ``error``, ``title``, ``html``), ``runs`` their runs' ``meta.json`` (an ask that needs more than a
    notebook that ran is checked on them); an ask whose notebook is not in the report says so."""
    out = []
    for a in stage.asks:
        n = ran.get(a.notebook)
        if n is None:
            status, why = "missing", t("this plan has no notebook for it")
        elif n.get("status") == "ok" and a.measured is not None and runs is not None:
            held = a.measured(runs.get(a.notebook) or [])
            status, why = ("answered", "") if held else ("not measured", t(a.unmeasured))
        elif n.get("status") == "ok":
            status, why = "answered", ""
        elif n.get("status") == facts.SERVER_FAULT:
            status, why = facts.SERVER_FAULT, facts.server_fault(t, n.get("error"))
        elif n.get("status") == "not applicable":
            status, why = "not applicable", (n.get("error") or "").removeprefix("not applicable: ")
        else:
            status, why = "failed", n.get("error") or ""
        out.append({"ask": t(a.text), "notebook": a.notebook, "status": status, "why": why})
    return out
