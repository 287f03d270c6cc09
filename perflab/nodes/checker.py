"""The consistency checker: a small client of its own that records every acknowledged write and delete,
reads keys back with the configured ack/from, during the faults and after them, and judges every read.

Why its own client and not the load generator: it must know exactly which writes were acknowledged and
compare each read's value with them. It is deterministic: its keys (``<prefix><seed>-<i>``), its values
(``<key>#<n>``: the key's n-th write) and its sequence of operations come from the seed. Each key belongs to
one thread, so a key's operations are sequential, and the next operation on a key waits ``gap`` after the
previous answer: write timestamps are milliseconds (docs/contracts/cluster.md section 7), so last-write-wins
orders writes at least 1 ms apart whichever node coordinated them; closer ones it may not.

Every read is judged against the key's history before it was sent:

* the value of the last acknowledged write (or "absent" after an acknowledged delete), or the value of a
  later write that failed without a definite "no" (a 504 or a timeout: the replicas that answered may have
  stored it) is **ok**;
* "absent" when the last acknowledged operation wrote a value: a **missed write**;
* a value older than the last acknowledged write: a **stale read**; older than an acknowledged delete:
  a **resurrected delete**;
* a value it never wrote, or whose write was refused outright (no connection, a 4xx): **unknown**;
* no answer with ``ack`` replicas (504, timeout, refused connection, another status): **unavailable**.

The invariant it holds the cluster to: a read quorum and a write quorum of the same ``from`` replicas share
a replica when ``ack(write) + ack(read) > from``, so such reads are never stale, missed or resurrected,
whatever nodes are down (they are then unavailable instead), as long as a node keeps what it acknowledged
(not the ``memory`` backend across a restart). :func:`predict` states that for a configuration and
:meth:`Checker.verdict` compares the counts with it.
"""

from __future__ import annotations

import http.client
import random
import threading
import time
import urllib.parse
from dataclasses import dataclass, field

import pandas as pd

from ..config.cluster import ConsistencyParams

ABSENT = None
#: read outcomes that break the invariant, in the order sentences name them
ANOMALIES = ("stale", "missed", "resurrected", "unknown")
OK_STATUSES = {"GET": (200, 404), "PUT": (200, 201, 204), "DELETE": (200, 202, 204)}


@dataclass(frozen=True)
class Prediction:
    """What the ack/from invariants predict: ``never`` (no stale, missed or resurrected read can happen) or
    not, and why."""

    never: bool
    reason: str
    write: str
    read: str

    def to_dict(self) -> dict:
        return {"never_stale": self.never, "reason": self.reason, "write": self.write, "read": self.read}


def predict(
    write_ack: int, read_ack: int, frm: int, keeps_data: bool | None = True, restarts: bool = False
) -> Prediction:
    """The invariant's prediction for writes acknowledged by ``write_ack`` and reads by ``read_ack`` of
    ``frm`` replicas. ``keeps_data``: whether a node keeps what it acknowledged across a restart (``False``
    for the ``memory`` backend, ``None``: unknown, your own nodes); ``restarts``: whether the run restarts
    nodes."""
    w, r = f"{write_ack}/{frm}", f"{read_ack}/{frm}"
    if write_ack + read_ack > frm:
        if restarts and keeps_data is False:
            return Prediction(
                False,
                f"ack(write) + ack(read) = {write_ack} + {read_ack} > from = {frm}, but a "
                f"restarted node lost what it held (backend memory), so a quorum may miss a write",
                w,
                r,
            )
        cond = (
            ""
            if keeps_data or not restarts
            else ", provided a restarted node keeps what it acknowledged (unknown for your own nodes)"
        )
        return Prediction(
            True,
            f"ack(write) + ack(read) = {write_ack} + {read_ack} > from = {frm}: every read "
            f"quorum meets every write quorum in a replica, so no read is stale, however many nodes "
            f"are down (reads are unavailable instead){cond}",
            w,
            r,
        )
    return Prediction(
        False,
        f"ack(write) + ack(read) = {write_ack} + {read_ack} <= from = {frm}: a read may "
        f"reach only replicas that missed the newest write, so stale reads are allowed",
        w,
        r,
    )


@dataclass
class _Key:
    name: str
    writes: int = 0
    history: list = field(default_factory=list)  # (state, acked: True | "maybe" | False)
    last_done: float = 0.0


class Checker:
    """The checker against ``urls`` (every node's URL in index order). ``write``/``read``: ``(ack, from)`` of
    writes and deletes / of reads; ``api``: ``ack-from`` or ``replicas``; ``entries``: the node indexes its
    requests go to (each operation to the next one in turn); ``path``/``param``: your API (default the
    course's ``/v0/entity?id=``)."""

    def __init__(
        self,
        urls: list[str],
        params: ConsistencyParams | None = None,
        write: tuple[int, int] = (2, 3),
        read: tuple[int, int] = (2, 3),
        api: str = "ack-from",
        entries=None,
        path: str = "/v0/entity",
        param: str = "id",
    ):
        self.params = params or ConsistencyParams()
        if not isinstance(self.params, ConsistencyParams):
            raise ValueError(f"params must be a ConsistencyParams, got {type(self.params).__name__}")
        self.urls = list(urls)
        self.write_q, self.read_q = tuple(write), tuple(read)
        for name, (a, f) in (("write", self.write_q), ("read", self.read_q)):
            if not 1 <= a <= f <= len(self.urls):
                raise ValueError(f"{name}: needs 1 <= ack <= from <= {len(self.urls)} nodes, got {a}/{f}")
        self.api = api
        self.entries = list(entries if entries is not None else range(len(self.urls)))
        self.path, self.param = path, param
        p = self.params
        self.keys = [_Key(f"{p.key_prefix}{p.seed}-{i}") for i in range(p.keys)]
        self.ops: list[dict] = []
        self._ops_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._conns: dict = {}
        self._turn = 0

    # --- one operation --------------------------------------------------------------------------------
    def _query(self, key: str, q: tuple[int, int]) -> str:
        base = f"{self.path}?{self.param}={urllib.parse.quote(key, safe='')}"
        a, f = q
        return base + (f"&replicas={a}/{f}" if self.api == "replicas" else f"&ack={a}&from={f}")

    def _request(self, method: str, node: int, target: str, body: bytes | None):
        """(status or error word, body bytes)."""
        key = (threading.get_ident(), node)
        url = urllib.parse.urlsplit(self.urls[node])
        for attempt in (0, 1):
            conn = self._conns.get(key)
            if conn is None:
                conn = http.client.HTTPConnection(url.hostname, url.port, timeout=self.params.timeout)
                self._conns[key] = conn
            try:
                conn.request(method, target, body=body, headers={"Content-Length": str(len(body or b""))})
                r = conn.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    self._conns.pop(key, None)
                return r.status, data
            except (
                TimeoutError,
                ConnectionRefusedError,
                ConnectionResetError,
                BrokenPipeError,
                OSError,
                http.client.HTTPException,
            ) as e:
                conn.close()
                self._conns.pop(key, None)
                if isinstance(e, TimeoutError) or "timed out" in str(e):
                    return "timeout", b""
                if isinstance(e, ConnectionRefusedError):
                    return "refused", b""
                # a kept-alive connection the node closed (a restart): one fresh try, then an error
                if attempt == 0 and isinstance(
                    e, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)
                ):
                    continue
                return "error", b""
        return "error", b""

    def _op(self, k: _Key, op: str, node: int, thread: int, phase: str) -> dict:
        wait = k.last_done + self.params.gap - time.time()
        if wait > 0:
            time.sleep(wait)
        value = None
        if op == "PUT":
            k.writes += 1
            value = f"{k.name}#{k.writes}"
        q = self.read_q if op == "GET" else self.write_q
        before = list(k.history)
        t0 = time.time()
        status, data = self._request(op, node, self._query(k.name, q), value.encode() if value else None)
        t1 = time.time()
        k.last_done = t1
        row = {
            "t_send": t0,
            "t_done": t1,
            "thread": thread,
            "phase": phase,
            "key": k.name,
            "op": op,
            "node": node,
            "status": status,
            "value": value,
            "observed": None,
            "outcome": None,
        }
        if op == "GET":
            observed = data.decode("utf-8", "replace") if status == 200 else ABSENT
            row["observed"] = observed if status == 200 else None
            row["outcome"] = judge(before, observed) if status in (200, 404) else "unavailable"
        else:
            acked = (
                True
                if status in OK_STATUSES[op]
                else "maybe"
                if status in ("timeout", "error") or (isinstance(status, int) and status >= 500)
                else False
            )
            k.history.append((value if op == "PUT" else ABSENT, acked))
            row["outcome"] = "acked" if acked is True else "maybe" if acked == "maybe" else "refused"
        with self._ops_lock:
            self.ops.append(row)
        return row

    def _next_entry(self, via) -> int:
        nodes = list(via) if via is not None else self.entries
        self._turn += 1
        return nodes[self._turn % len(nodes)]

    # --- scripted steps (tests, scenarios) ------------------------------------------------------------
    def _keys(self, keys) -> list[_Key]:
        if keys is None:
            return self.keys
        return [self.keys[i] for i in keys]

    def write(self, keys=None, via=None, phase: str = "write") -> list[dict]:
        """Write the next value of each key (indexes into the checker's keys; all by default), one after
        another, each through the next node of ``via`` (default: the checker's entries)."""
        return [self._op(k, "PUT", self._next_entry(via), 0, phase) for k in self._keys(keys)]

    def delete(self, keys=None, via=None, phase: str = "delete") -> list[dict]:
        return [self._op(k, "DELETE", self._next_entry(via), 0, phase) for k in self._keys(keys)]

    def read(self, keys=None, via=None, phase: str = "read") -> list[dict]:
        return [self._op(k, "GET", self._next_entry(via), 0, phase) for k in self._keys(keys)]

    # --- the mixed operations during a run --------------------------------------------------------------
    def start(self, duration_s: float, at: float | None = None) -> Checker:
        """Run the mixed operations on ``threads`` background threads from epoch ``at`` (default now) for
        ``duration_s`` seconds, at most ``max_ops`` in all, at most ``rate`` per second."""
        p = self.params
        begin = at if at is not None else time.time()
        budget = [p.max_ops]
        lock = threading.Lock()

        def worker(t: int):
            rng = random.Random(p.seed * 1_000_003 + t)
            mine = [k for i, k in enumerate(self.keys) if i % p.threads == t]
            interval = p.threads / p.rate
            if self._stop.wait(max(0.0, begin - time.time())):
                return
            nxt = time.time()
            while not self._stop.is_set() and time.time() < begin + duration_s:
                with lock:
                    if budget[0] <= 0:
                        return
                    budget[0] -= 1
                u = rng.random()
                op = "GET" if u < p.read else "DELETE" if u < p.read + p.delete else "PUT"
                k = mine[rng.randrange(len(mine))]
                self._op(k, op, self.entries[rng.randrange(len(self.entries))], t, "mixed")
                nxt += interval
                if self._stop.wait(max(0.0, nxt - time.time())):
                    return

        self._threads = [
            threading.Thread(target=worker, args=(t,), name=f"perflab-checker-{t}", daemon=True)
            for t in range(p.threads)
        ]
        for th in self._threads:
            th.start()
        return self

    def join(self, timeout: float | None = None) -> None:
        for th in self._threads:
            th.join(timeout)

    def stop(self) -> None:
        self._stop.set()
        self.join(self.params.timeout + 5)

    def final_read(self, via=None) -> list[dict]:
        """Read every key once more (after the faults), through ``via`` (default: the entries in turn)."""
        return self.read(None, via, phase="final")

    def close(self) -> None:
        for c in list(self._conns.values()):
            c.close()
        self._conns.clear()

    # --- the result -------------------------------------------------------------------------------------
    def frame(self) -> pd.DataFrame:
        return frame_of(self.ops)

    def counts(self) -> dict:
        df = self.frame()
        reads = df[df["op"] == "GET"]
        writes = df[df["op"] != "GET"]
        out = {
            "operations": len(df),
            "reads": len(reads),
            "writes": int((writes["op"] == "PUT").sum()),
            "deletes": int((writes["op"] == "DELETE").sum()),
            "acknowledged": int((writes["outcome"] == "acked").sum()),
            "unacknowledged": int((writes["outcome"] != "acked").sum()),
        }
        for o in ("ok",) + ANOMALIES + ("unavailable",):
            out[o] = int((reads["outcome"] == o).sum())
        out["statuses"] = {str(k): int(v) for k, v in df["status"].value_counts().items()}
        return out

    def verdict(self, keeps_data: bool | None = True, restarts: bool = False) -> Verdict:
        frm = self.read_q[1]
        pred = predict(self.write_q[0], self.read_q[0], frm, keeps_data, restarts)
        if self.write_q[1] != self.read_q[1]:
            pred = Prediction(
                False,
                f"writes ask from = {self.write_q[1]} replicas and reads {self.read_q[1]}: "
                f"the quorums need not overlap",
                pred.write,
                pred.read,
            )
        return Verdict(pred, self.counts())


def frame_of(ops: list[dict]) -> pd.DataFrame:
    """The checker's operations as a frame, in the order they were sent (``t_send``: epoch seconds)."""
    cols = ["t_send", "t_done", "thread", "phase", "key", "op", "node", "status", "value", "observed", "outcome"]
    df = pd.DataFrame(ops, columns=cols)
    df["status"] = df["status"].astype(str)
    return df.sort_values("t_send").reset_index(drop=True)


def judge(history: list, observed) -> str:
    """One read's outcome (see the module docstring) from the key's writes and deletes before it:
    ``history`` as ``(state, acked)`` with ``state`` the value written or ``ABSENT`` and ``acked`` ``True``,
    ``"maybe"`` or ``False``; ``observed`` the value read or ``ABSENT``."""
    last = max((i for i, (_, a) in enumerate(history) if a is True), default=None)
    allowed = {history[last][0] if last is not None else ABSENT}
    allowed |= {s for s, a in history[(last + 1) if last is not None else 0 :] if a == "maybe"}
    if observed in allowed:
        return "ok"
    if observed is ABSENT:
        return "missed"
    if observed not in {s for s, a in history if a is not False}:  # a refused write cannot be there
        return "unknown"
    return "resurrected" if history[last][0] is ABSENT else "stale"


@dataclass
class Verdict:
    """The checker's counts against the prediction: ``ok`` when they agree (none seen where none can happen,
    or anomalies where the configuration allows them)."""

    prediction: Prediction
    counts: dict

    @property
    def anomalies(self) -> int:
        return sum(self.counts.get(k, 0) for k in ANOMALIES)

    @property
    def seen(self) -> dict[str, int]:
        """Each kind of anomaly the checker saw (``stale``, ``missed``, ``resurrected``, ``unknown``), with its
        count, in that order."""
        return {k: self.counts[k] for k in ANOMALIES if self.counts.get(k)}

    @property
    def violated(self) -> bool:
        """The invariant predicts none and the checker saw some: the cluster broke its promise."""
        return self.prediction.never and self.anomalies > 0

    @property
    def level(self) -> str:
        if self.violated:
            return "violation"
        if self.anomalies:
            return "anomalies allowed"
        return "consistent" if self.prediction.never else "none seen"

    def to_dict(self) -> dict:
        return {
            "level": self.level,
            "violated": self.violated,
            "anomalies": self.anomalies,
            "prediction": self.prediction.to_dict(),
            "counts": self.counts,
        }
