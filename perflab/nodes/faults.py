"""Faults scheduled in a run: ``at=10s node=2 kill`` and its kin, checked before any load is sent, applied
on time during the measured window, each recorded as an event on the latency timeline.

Grammar (one fault per string, words in any order)::

    at=<duration> node=<index> <action> [for=<duration>]

``at`` counts from the start of the measured window (the timeline's 0, after the warm-up); ``node`` is the
node's index in the ``--cluster`` list (0..N-1, the server's ``cluster.self``). Actions:

* ``kill``    SIGKILL (``kill -9``): the node is gone, with its open connections;
* ``stop``    graceful (SIGTERM: the built-in server flushes its memtables and exits);
* ``pause``   SIGSTOP: a hung node, its sockets open, nothing answered (clients and peers time out);
* ``resume``  SIGCONT after a pause;
* ``restart`` start the node again on its port and data (a running node is stopped gracefully first).

``for=<duration>`` adds the inverse action that much later: ``kill for=5s`` / ``stop for=5s`` restart the
node 5 s after, ``pause for=2s`` resumes it. The schedule is checked as a whole against the nodes' states
(a pause of a node that is down, a resume of one that is not paused, a restart of one member of a cluster
that one command started are errors naming the fault), and against the window (a fault after it never
happens). A node still paused when the window ends is resumed before the nodes are stopped.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass

from ..units import parse_duration

ACTIONS = ("kill", "stop", "pause", "resume", "restart")
#: the inverse action that ``for=`` schedules
_INVERSE = {"kill": "restart", "stop": "restart", "pause": "resume"}
#: which node states an action applies to, and the state it leaves
_STATES = {
    "kill": (("running", "paused"), "down"),
    "stop": (("running",), "down"),
    "pause": (("running",), "paused"),
    "resume": (("paused",), "running"),
    "restart": (("running", "down"), "running"),
}


@dataclass(frozen=True)
class Fault:
    """One fault: ``action`` on node ``node`` at ``at`` seconds into the measured window; ``text`` is what
    was written (for messages)."""

    at: float
    node: int
    action: str
    text: str = ""

    def to_dict(self) -> dict:
        return {"at_s": self.at, "node": self.node, "action": self.action, "text": self.text}

    def __str__(self):
        return self.text or f"at={self.at:g}s node={self.node} {self.action}"


def parse_fault(text: str) -> list[Fault]:
    """``at=10s node=2 kill [for=5s]`` as one fault (two with ``for=``). Raises ``ValueError`` naming the
    fault and what is wrong with it."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"fault: expected text like 'at=10s node=2 kill', got {text!r}")
    words = text.split()
    fields, actions = {}, []
    for w in words:
        m = re.fullmatch(r"(at|node|for)=(.+)", w)
        if m:
            if m.group(1) in fields:
                raise ValueError(f"fault {text!r}: {m.group(1)}= given twice")
            fields[m.group(1)] = m.group(2)
        elif w.lower() in ACTIONS:
            actions.append(w.lower())
        else:
            raise ValueError(
                f"fault {text!r}: unknown word {w!r} (expected at=<time> node=<index> and one of "
                f"{', '.join(ACTIONS)}, optionally for=<time>)"
            )
    if len(actions) != 1:
        raise ValueError(
            f"fault {text!r}: needs exactly one action ({', '.join(ACTIONS)}), got {', '.join(actions) or 'none'}"
        )
    for need in ("at", "node"):
        if need not in fields:
            raise ValueError(f"fault {text!r}: missing {need}=")
    try:
        at = parse_duration(fields["at"], "at")
    except ValueError:
        raise ValueError(f"fault {text!r}: at={fields['at']} is not a time like 10s or 500ms") from None
    if not fields["node"].isdigit():
        raise ValueError(f"fault {text!r}: node={fields['node']} is not a node index (0, 1, ...)")
    action = actions[0]
    out = [Fault(at, int(fields["node"]), action, text.strip())]
    if "for" in fields:
        if action not in _INVERSE:
            raise ValueError(f"fault {text!r}: for= undoes kill, stop or pause; {action} has nothing to undo")
        try:
            span = parse_duration(fields["for"], "for")
        except ValueError:
            raise ValueError(f"fault {text!r}: for={fields['for']} is not a time like 5s") from None
        if span <= 0:
            raise ValueError(f"fault {text!r}: for= must be > 0")
        out.append(Fault(at + span, out[0].node, _INVERSE[action], f"{text.strip()} (then {_INVERSE[action]})"))
    return out


def schedule(faults, nodes: int, window_s: float | None = None, one_command: bool = False) -> list[Fault]:
    """The faults (strings or :class:`Fault`) in time order, checked against ``nodes`` nodes, the measured
    window's length and the node states they pass through; raises ``ValueError`` naming the fault."""
    if isinstance(faults, (str, Fault)):
        faults = [faults]
    parsed: list[Fault] = []
    for f in faults or ():
        parsed += parse_fault(f) if isinstance(f, str) else [f] if isinstance(f, Fault) else _bad(f)
    parsed.sort(key=lambda f: f.at)  # stable: faults at the same time keep their written order
    states = ["running"] * nodes
    for f in parsed:
        if not 0 <= f.node < nodes:
            raise ValueError(f"fault '{f}': node {f.node} is out of range: the cluster has nodes 0..{nodes - 1}")
        if window_s is not None and f.at >= window_s:
            raise ValueError(f"fault '{f}': at {f.at:g} s is not inside the measured window ({window_s:g} s)")
        if one_command and f.action == "restart":
            raise ValueError(
                f"fault '{f}': one command ({{ports}}) started every node, so one node cannot be "
                f"restarted; give a command per node ({{port}})"
            )
        allowed, after = _STATES[f.action]
        if states[f.node] not in allowed:
            raise ValueError(
                f"fault '{f}': node {f.node} is {states[f.node]} then; {f.action} needs it {' or '.join(allowed)}"
            )
        states[f.node] = after
    return parsed


def _bad(f):
    raise ValueError(f"fault: expected text like 'at=10s node=2 kill' or a Fault, got {f!r}")


class FaultRunner:
    """Applies a checked schedule on background threads, each fault at ``window_start + at`` (epoch
    seconds), and records what happened: ``applied`` rows ``{fault, node, action, at_s, ts_us, dur_us,
    late_s, error}`` (``ts_us`` when the action began, ``dur_us`` how long it took: a restart until the node
    answers again). One thread per node: a node's faults follow each other in order (a pause after a restart
    waits for it), another node's are not held up by them. A fault that never happened (the window ended
    while the node's previous one was still under way) is recorded with ``error`` saying so."""

    def __init__(self, cluster, faults: list[Fault], window_start: float):
        self.cluster = cluster
        self.faults = list(faults)
        self.window_start = window_start
        self.applied: list[dict] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> FaultRunner:
        for node in sorted({f.node for f in self.faults}):
            mine = [f for f in self.faults if f.node == node]
            th = threading.Thread(target=self._run, args=(mine,), name=f"perflab-faults-{node}", daemon=True)
            th.start()
            self._threads.append(th)
        return self

    def _run(self, faults: list[Fault]):
        for i, f in enumerate(faults):
            if self._stop.wait(max(0.0, self.window_start + f.at - time.time())):
                for g in faults[i:]:
                    self._record(
                        g,
                        None,
                        0,
                        "not applied: the measured window ended first (the node's previous fault was still under way)",
                    )
                return
            self.apply(f)

    def _record(self, f: Fault, t0: float | None, dur_us: int, error: str | None) -> dict:
        row = {
            "fault": str(f),
            "node": f.node,
            "action": f.action,
            "at_s": f.at,
            "ts_us": int(t0 * 1e6) if t0 is not None else None,
            "dur_us": dur_us,
            "late_s": round(t0 - (self.window_start + f.at), 4) if t0 is not None else None,
            "error": error,
        }
        with self._lock:
            self.applied.append(row)
        return row

    def apply(self, f: Fault) -> dict:
        node = self.cluster.node(f.node)
        t0 = time.time()
        m0 = time.monotonic()
        error = None
        try:
            getattr(node, f.action)()
        except Exception as e:  # a fault that could not be applied is recorded, the run goes on
            error = f"{type(e).__name__}: {e}"
        return self._record(f, t0, int((time.monotonic() - m0) * 1e6), error)

    def stop(self, timeout: float = 120.0) -> list[dict]:
        """Stop scheduling (faults not yet due never happen, and say so) and wait for one being applied (a
        restart); returns every fault's row in time order."""
        self._stop.set()
        end = time.monotonic() + timeout
        for th in self._threads:
            th.join(max(0.1, end - time.monotonic()))
        with self._lock:
            return sorted(self.applied, key=lambda r: (r["ts_us"] is None, r["ts_us"] or 0, r["at_s"]))
