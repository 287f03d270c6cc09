"""Analysis of collapsed stacks: frames with self/total shares, categories, differences.

Collapsed format (async-profiler's ``collapsed`` output, Brendan Gregg's folded format): one line
per distinct stack, frames root-first separated by ``;``, then a space and the sample count (or
bytes for ``alloc``, nanoseconds for ``lock``). With the ``threads`` option the root frame is the
thread, ``[name tid=N]``.

Categories answer the questions the lab reports ask of a flame graph: where does the time go (network
read/write, HTTP parsing, the server's own code, its storage, executor queue, GC, JIT, locks, idle threads,
a cluster node's internal requests)? A stack gets the first category for which any of its frames matches
the category's pattern, in the order :func:`category_order` lists them. The order encodes nesting: e.g. in
one-nio the request handler runs *inside* the HTTP parser's loop and the storage call inside the handler, so
storage is tested before the server's own code, which is tested before "HTTP parsing"; the selector's socket
``read``/``write`` calls sit under the same loop and win over both.

The patterns of what every JVM server runs (one-nio, the JDK, the JVM) are written here; the server's own
code and its storage come from a :class:`~perflab.profiling.codemap.CodeMap` (default: the lab's own
server, :data:`~perflab.profiling.codemap.BUILTIN`), and so do the user's own categories, tested first.

"idle": a thread that waits (parked, ``Object.wait``, sleeping, a JVM thread on its monitor; in ``wall``
profiles also a selector in ``epoll_wait`` or an acceptor in ``accept``) with no frame of work on its stack
(the server's code, its storage, HTTP parsing, a response being written; a thread's own ``run``/``main``
loop that waits right there in the JDK is no work) and not contending for a lock: a worker parked in
``ThreadPoolExecutor.getTask`` is idle, not "executor queue"; a thread waiting to acquire a
``ReentrantLock``/monitor stays "locks" (or "executor queue" for the queue's own lock), and so does a
request handler waiting for a future. In a ``wall`` profile idle threads dominate; in a ``cpu`` profile
"idle" is the CPU spent going to sleep and waking up.
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..config.profile import EXECUTION_EVENTS, PROFILE_EVENTS
from .codemap import BUILTIN, JAVA_FRAME, CodeMap, package_of_frame
from .codemap import SEP as _S

#: what every JVM server runs, tested before the server's storage: (category, regex), first match wins
_BEFORE_STORAGE: list[tuple[str, str]] = [
    (
        "GC",
        r"G1[A-Z]|GCTaskThread|GC Thread|G1 |ParallelGC|PSScavenge|PSParallel|MarkSweep|ZDriver|ZWorker|ZDirector|"
        r"Shenandoah|ConcurrentMark|CollectedHeap::|GCTask|WorkerThread::run|GangWorker|SerialHeap|DefNewGeneration|"
        r"ScavengeRoots|OopClosure|CardTable|G1Refine|\bGC\b",
    ),
    (
        "JIT",
        r"CompileBroker|C2Compiler|C1Compiler|Compile::|Compilation::|CompilerThread|PhaseIdealLoop|PhaseChaitin|"
        r"Parse::|GraphBuilder|JVMCI|C[12] CompilerThre",
    ),
    (
        "executor queue",
        rf"ThreadPoolExecutor{_S}getTask|ThreadPoolExecutor{_S}execute|ThreadPoolExecutor{_S}addWorker|"
        rf"ArrayBlockingQueue{_S}|LinkedBlockingQueue{_S}|LinkedBlockingDeque{_S}|LifoQueue{_S}|"
        rf"SynchronousQueue{_S}|(Pool|Virtual)Dispatcher{_S}dispatch\b|ForkJoinPool{_S}(scan|awaitWork|signalWork|push)|"
        rf"VirtualThread{_S}(submitRunContinuation|park|yield|unpark)",
    ),
    (
        "locks",
        rf"LockSupport{_S}park|Unsafe{_S}park|AbstractQueuedSynchronizer|ReentrantLock{_S}|ReentrantReadWriteLock|"
        rf"ObjectMonitor::|ObjectSynchronizer::|__lll_lock|pthread_mutex_lock|pthread_cond_wait|futex_wait|"
        rf"StampedLock{_S}|Object{_S}wait",
    ),
]
#: tested after the storage, before the server's own code
_AFTER_STORAGE: list[tuple[str, str]] = [
    # a cluster node's coordination and its HTTP client to the other nodes (their socket I/O included): what
    # proxying costs; a replica's own storage work above stays storage
    (
        "cluster: internal requests",
        rf"perflab{_S}cluster{_S}|jdk{_S}internal{_S}net{_S}http{_S}|"
        rf"java{_S}net{_S}http{_S}",
    ),
    (
        "network write",
        rf"NativeSocket{_S}write|NativeSocket{_S}writeRaw|JavaSocket{_S}write|Session{_S}write|"
        rf"Session{_S}sendResponse|KvSession{_S}(send|sendStream|next)\b|"
        rf"HttpSession{_S}(sendResponse|writeResponse)|Session{_S}flush|SocketChannelImpl{_S}write|"
        rf"NioSocketImpl{_S}write|SocketDispatcher{_S}write|"
        r"\b__send|\bsend\b|sendto|__libc_write|__write|writev|tcp_sendmsg|sys_write|ksys_write|do_writev",
    ),
    (
        "network read",
        rf"NativeSocket{_S}read|NativeSocket{_S}readRaw|JavaSocket{_S}read|Session{_S}read|SocketChannelImpl{_S}read|"
        rf"NioSocketImpl{_S}read|SocketDispatcher{_S}read|"
        rf"NativeSelector{_S}(select|epollWait)|JavaSelector{_S}|EPoll|epoll_wait|SelectorImpl{_S}|"
        r"\b__recv|\brecv\b|recvfrom|__libc_read|__read|tcp_recvmsg|sys_read|ksys_read|sock_read",
    ),
]
#: tested after the server's own code: one-nio's side of a request (its handler dispatch, the request's and
#: response's API) and the parser around it (one-nio's, or the JDK's HTTP server)
_AFTER_CODE: list[tuple[str, str]] = [
    (
        "request handling",
        rf"HttpServer{_S}handleRequest|one{_S}nio{_S}http{_S}Response|"
        rf"one{_S}nio{_S}http{_S}Request{_S}get|one{_S}nio{_S}util{_S}(Utf8|ByteArrayBuilder)",
    ),
    (
        "HTTP parsing",
        rf"HttpSession{_S}(processRead|processHttpBuffer|parseRequest|handleParsedRequest|getRequest)|"
        rf"one{_S}nio{_S}http{_S}Request{_S}|one{_S}nio{_S}http{_S}HttpParser|Session{_S}process|"
        rf"sun{_S}net{_S}httpserver{_S}",
    ),  # the JDK's own HTTP server: its parser and exchange
]
#: the categories above that are work: a waiting stack with one of their frames is not idle (nor with a frame
#: of the server's code, its storage or the user's categories)
_WORK = ("network write", "request handling", "HTTP parsing")
IDLE = "idle"
OTHER = "other"

#: Frames that are ancestors of most work (so cannot be rules above) but, when they are the leaf
#: of a stack that matched nothing, say where the time went: the selector loop itself, the
#: executor's own bookkeeping around tasks.
LEAF_RULES: list[tuple[str, str]] = [
    ("network read", rf"SelectorThread{_S}run$|JavaSelector|NativeSelector"),
    (
        "executor queue",
        rf"ThreadPoolExecutor{_S}(runWorker|beforeExecute|afterExecute)$|ThreadPoolExecutor\$Worker{_S}run$",
    ),
]
_LEAF_COMPILED = [(c, re.compile(p)) for c, p in LEAF_RULES]

#: a thread waiting: any frame from its innermost Java frame down (the JVM's and the kernel's frames under it)
_WAITS = (
    rf"\b(LockSupport{_S}park|Unsafe{_S}park|Object{_S}wait|Thread{_S}sleep)|Unsafe_Park|Parker::park|"
    r"JVM_MonitorWait|ObjectMonitor::wait|JVM_Sleep|Monitor::wait|PlatformMonitor::wait|PlatformEvent::park|"
    r"Semaphore::wait|\bsem_(timed)?wait|pthread_cond_(timed|clock)?wait|futex_wait|__futex_abstimed_wait|"
    r"nanosleep"
)
_WAIT = re.compile(_WAITS)
#: in a wall-clock profile a selector blocked in epoll_wait, or an acceptor in accept, waits too (in a cpu
#: profile a sample there is the system call's own work)
_WAIT_WALL = re.compile(
    _WAITS + rf"|epoll_p?wait|\b(NativeSelector{_S}epollWait|EPoll{_S}wait|Net{_S}(poll|accept)|"
    rf"NativeSocket{_S}accept)|(^|_)(poll|ppoll|accept4?)$"
)
#: waiting to acquire a lock (contention), not for work: ReentrantLock, read-write and stamped locks,
#: monitors, native mutexes (a latch's or a condition's wait is no lock)
_CONTENDED = re.compile(
    rf"ReentrantLock(\$\w+)?{_S}(lock|tryLock)|"
    rf"ReentrantReadWriteLock\$\w+{_S}(lock|tryLock)|StampedLock{_S}(readLock|writeLock|acquire)|"
    r"ObjectMonitor::enter|ObjectMonitor::EnterI|ObjectSynchronizer::enter|monitorenter|"
    r"complete_monitor_locking|__lll_lock_wait|pthread_mutex_lock|Mutex::lock"
)
_JAVA = re.compile(JAVA_FRAME)
_THREAD_BODY = re.compile(rf"{_S}(run|main)$")


def _slots(code_map: CodeMap) -> list[list[tuple[str, str | None]]]:
    """A map's categories as ``(name, regex)`` in the order a stack is tested, slot by slot (idle is a rule of
    its own, :func:`_idle`)."""
    return [
        list(code_map.categories),
        [(IDLE, None)],
        _BEFORE_STORAGE,
        list(code_map.storage_rules),
        _AFTER_STORAGE,
        [(code_map.code_category, code_map.code_pattern)],
        _AFTER_CODE,
        [(OTHER, None)],
    ]


def category_order(code_map: CodeMap = BUILTIN) -> list[str]:
    """The categories of ``code_map`` (the user's first), in the order they are tested and listed."""
    return list(dict.fromkeys(name for slot in _slots(code_map) for name, _ in slot))


#: every category of the lab's maps, any server's and the built-in one's, slot by slot (the user's own
#: categories come before these): idle, GC, JIT, executor queue, locks, storage, the built-in LSM's storage
#: parts, cluster: internal requests, network write, network read, your code, request handling, HTTP
#: parsing, other
CATEGORY_ORDER = list(
    dict.fromkeys(name for slots in zip(_slots(CodeMap()), _slots(BUILTIN)) for slot in slots for name, _ in slot)
)


@dataclass(frozen=True)
class _Rules:
    user: list  # (name, compiled) tested first
    ordered: list  # (name, compiled) after idle
    work: list  # compiled: a waiting stack with one of these frames is not idle


@functools.lru_cache(maxsize=64)
def _rules(code_map: CodeMap) -> _Rules:
    user, idle, *rest = _slots(code_map)
    work = [
        *code_map.categories,
        *code_map.storage_rules,
        (code_map.code_category, code_map.code_pattern),
        *[(n, p) for n, p in _AFTER_STORAGE + _AFTER_CODE if n in _WORK],
    ]
    return _Rules(
        [(n, re.compile(p, re.M)) for n, p in user],
        [(n, re.compile(p, re.M)) for slot in rest for n, p in slot if p is not None],
        [re.compile(p, re.M) for _, p in work],
    )


_THREAD_RE = re.compile(r"^\[(.*?)(?: tid=\d+)?\]$")
# JFR conversions mark Java frames with their compilation type (_[0] interpreted, _[1] C1, _[j] JIT,
# _[i] inlined); the agent's own collapsed output does not. Stripped so both kinds of profile name a
# method the same way (kernel frames keep _[k]).
_TYPE_SUFFIX_RE = re.compile(r"_\[[0-9ij]\](?=;|$)")


def read_collapsed(source: str | Path) -> pd.DataFrame:
    """Collapsed stacks as a DataFrame ``stack`` (frames joined by ';'), ``samples`` (int),
    ``thread`` (root thread frame without ``tid``, or ``None``).

    ``source``: a path to a collapsed file, or the collapsed text itself (a string with a newline or
    a ';'). Lines that do not end with a count are rejected with ``ValueError`` naming the line.
    """
    if isinstance(source, Path) or (
        isinstance(source, str) and "\n" not in source and ";" not in source and Path(source).exists()
    ):
        text = Path(source).read_text(errors="replace")
    elif isinstance(source, str):
        if "\n" not in source and ";" not in source and source.strip():
            raise ValueError(f"source: {source} is neither an existing file nor collapsed text")
        text = source
    else:
        raise ValueError(f"source must be a path or collapsed text, got {type(source).__name__}")
    counts: Counter = Counter()
    for n, line in enumerate(text.splitlines(), 1):
        line = line.rstrip()
        if not line:
            continue
        stack, sep, num = line.rpartition(" ")
        if not sep or not num.isdigit():
            raise ValueError(f"collapsed line {n} does not end with a sample count: {line[:100]!r}")
        counts[_TYPE_SUFFIX_RE.sub("", stack)] += int(num)
    df = pd.DataFrame(
        {"stack": list(counts.keys()), "samples": np.fromiter(counts.values(), dtype="int64", count=len(counts))}
    )
    df["thread"] = df["stack"].map(_thread_of)
    return df


def _thread_of(stack: str):
    root = stack.split(";", 1)[0]
    m = _THREAD_RE.match(root)
    return m.group(1) if m else None


def _frames(stack: str, strip_thread: bool = True) -> list[str]:
    fr = stack.split(";")
    if strip_thread and fr and _THREAD_RE.match(fr[0]):
        fr = fr[1:]
    return fr


def _check(stacks):
    if not isinstance(stacks, pd.DataFrame) or not {"stack", "samples"} <= set(stacks.columns):
        raise ValueError("stacks must be a DataFrame from read_collapsed (columns stack, samples)")


def frames_table(stacks: pd.DataFrame, strip_threads: bool = True) -> pd.DataFrame:
    """Per frame: ``self`` (samples where it is the leaf), ``total`` (samples where it is on the
    stack, counted once per stack even under recursion), and both as shares of all samples.
    Sorted by ``total`` descending."""
    _check(stacks)
    self_c: Counter = Counter()
    total_c: Counter = Counter()
    for stack, n in zip(stacks["stack"], stacks["samples"]):
        fr = _frames(stack, strip_threads)
        if not fr:
            continue
        self_c[fr[-1]] += n
        for f in set(fr):
            total_c[f] += n
    all_samples = int(stacks["samples"].sum()) or 1
    df = pd.DataFrame({"frame": list(total_c.keys()), "total": list(total_c.values())})
    df["self"] = df["frame"].map(self_c).fillna(0).astype("int64")
    df["self_share"] = df["self"] / all_samples
    df["total_share"] = df["total"] / all_samples
    return df[["frame", "self", "total", "self_share", "total_share"]].sort_values(
        ["total", "self"], ascending=False, ignore_index=True
    )


def classify_stack(frames: list[str], event: str = "cpu", code_map: CodeMap = BUILTIN) -> str:
    """The category of one stack (frames root-first) of a profile of ``event``. ``code_map``: what is known of
    the server's code (default: the lab's own server). In ``lock`` profiles every sample is lock contention,
    so the "locks" rule is skipped there and the category tells *where* it happens."""
    if event not in PROFILE_EVENTS:
        raise ValueError(f"event must be a profiling event ({', '.join(PROFILE_EVENTS)}), got {event!r}")
    if event in ("alloc", "lock") and frames:
        # There the leaf is the allocated type / the lock's class, not code: classify by the call site.
        frames = frames[:-1]
    rules = _rules(code_map)
    text = "\n".join(frames)
    for cat, rx in rules.user:
        if rx.search(text):
            return cat
    if event in EXECUTION_EVENTS and _idle(frames, text, event, rules):
        return IDLE
    for cat, rx in rules.ordered:
        if cat == "locks" and event == "lock":
            continue
        if rx.search(text):
            return cat
    if frames:
        for cat, rx in _LEAF_COMPILED:
            if rx.search(frames[-1]):
                return cat
    return OTHER


def _idle(frames: list[str], text: str, event: str, rules: _Rules) -> bool:
    """Waiting, not for a lock, with no frame of work on the stack (see the module docstring)."""
    wait = _WAIT_WALL if event == "wall" else _WAIT
    for f in reversed(frames):  # the innermost Java frame and the native frames under it
        if wait.search(f):
            break
        if _JAVA.fullmatch(f):
            return False
    else:
        return False
    if _CONTENDED.search(text):
        return False
    work = next((f for f in reversed(frames) if any(rx.search(f) for rx in rules.work)), None)
    # a thread's own loop (its run or main) that waits directly in the JDK waits for work, as a pool's does
    return work is None or bool(_THREAD_BODY.search(work))


def categorize(
    stacks: pd.DataFrame, event: str = "cpu", by_thread: bool = False, code_map: CodeMap = BUILTIN
) -> pd.DataFrame:
    """Samples per category (all of :func:`category_order` of ``code_map``, zeros included, in that order),
    with ``share`` of the total. ``by_thread`` adds a ``thread_group`` column (thread names with numbers
    removed, e.g. ``selector``, ``worker``)."""
    _check(stacks)
    acc: dict = defaultdict(int)
    for stack, n, th in zip(stacks["stack"], stacks["samples"], stacks.get("thread", [None] * len(stacks))):
        cat = classify_stack(_frames(stack), event, code_map)
        key = (thread_group(th), cat) if by_thread else cat
        acc[key] += int(n)
    total = sum(acc.values()) or 1
    if by_thread:
        rows = [{"thread_group": g, "category": c, "samples": v, "share": v / total} for (g, c), v in acc.items()]
        return pd.DataFrame(rows, columns=["thread_group", "category", "samples", "share"]).sort_values(
            "samples", ascending=False, ignore_index=True
        )
    rows = [{"category": c, "samples": acc.get(c, 0), "share": acc.get(c, 0) / total} for c in category_order(code_map)]
    return pd.DataFrame(rows)


def code_packages(stacks: pd.DataFrame, event: str = "cpu", code_map: CodeMap = BUILTIN) -> pd.DataFrame:
    """The server's own code category (``your code``) split by package: each of its stacks counts for the
    package of its innermost frame of the server's code (the code doing the work; JDK and one-nio frames
    it calls count for it). ``package, samples, share`` (of all samples), largest first; a stack of the
    category without a frame of the server's own (one-nio's request handling) counts as ``(none)``."""
    _check(stacks)
    own = re.compile(code_map.code_pattern)
    acc: dict = defaultdict(int)
    for stack, n in zip(stacks["stack"], stacks["samples"]):
        frames = _frames(stack)
        if classify_stack(frames, event, code_map) != code_map.code_category:
            continue
        frame = next((f for f in reversed(frames) if own.search(f)), None)
        acc[package_of_frame(frame) if frame else "(none)"] += int(n)
    total = int(stacks["samples"].sum()) or 1
    df = pd.DataFrame({"package": list(acc), "samples": list(acc.values())}, columns=["package", "samples"])
    df["share"] = df["samples"] / total
    return df.sort_values(["samples", "package"], ascending=[False, True], ignore_index=True)


def thread_group(name: str | None) -> str:
    """A thread name without its numbers (``one-nio selector #1`` -> ``one-nio selector``)."""
    if not name:
        return "(all threads)"
    g = re.sub(r"[-_ #]*\d+$", "", name).strip()
    g = re.sub(r"\d+", "N", g)
    return g or name


def threads_table(stacks: pd.DataFrame) -> pd.DataFrame:
    """Samples per thread group (needs a profile taken with ``threads``)."""
    _check(stacks)
    g = stacks.assign(thread_group=stacks["thread"].map(thread_group)).groupby("thread_group")["samples"].sum()
    df = g.sort_values(ascending=False).reset_index()
    df["share"] = df["samples"] / (df["samples"].sum() or 1)
    return df


def diff_profiles(
    base: pd.DataFrame,
    new: pd.DataFrame,
    by: str = "frame",
    metric: str = "self",
    event: str = "cpu",
    code_map: CodeMap = BUILTIN,
) -> pd.DataFrame:
    """What grew and what shrank between two profiles, on normalized shares (each profile sums to
    1, so profiles of different lengths or rates compare).

    ``by``: ``frame`` (``metric`` ``self`` or ``total`` share), ``category`` (of ``code_map``) or ``thread``. Columns:
    ``key, base_share, new_share, delta`` (new - base, in share points), ``ratio`` (new/base), sorted
    by ``|delta|`` descending.
    """
    _check(base)
    _check(new)
    if by not in ("frame", "category", "thread"):
        raise ValueError(f"by must be 'frame', 'category' or 'thread', got {by!r}")
    if metric not in ("self", "total"):
        raise ValueError(f"metric must be 'self' or 'total', got {metric!r}")

    def shares(st):
        if by == "frame":
            t = frames_table(st)
            return t.set_index("frame")[f"{metric}_share"]
        if by == "category":
            return categorize(st, event, code_map=code_map).set_index("category")["share"]
        return threads_table(st).set_index("thread_group")["share"]

    a, b = shares(base), shares(new)
    df = pd.concat([a.rename("base_share"), b.rename("new_share")], axis=1).fillna(0.0)
    df.index.name = "key"
    df = df.reset_index()
    df["delta"] = df["new_share"] - df["base_share"]
    with np.errstate(divide="ignore", invalid="ignore"):
        df["ratio"] = np.where(
            df["base_share"] > 0, df["new_share"] / df["base_share"].where(df["base_share"] > 0, 1), np.inf
        )
    return df.reindex(df["delta"].abs().sort_values(ascending=False).index).reset_index(drop=True)


def icicle_nodes(
    stacks: pd.DataFrame, min_share: float = 0.002, max_depth: int = 60, threads: str = "name"
) -> pd.DataFrame:
    """The call tree as ``id, parent, label, value, share, self`` rows for a plotly icicle/sunburst.

    Nodes below ``min_share`` of all samples are merged into their parent (keeps the figure
    responsive); depth is capped at ``max_depth``. ``threads``: what to do with the thread root
    frame: ``name`` keeps ``[name]`` (tid dropped, so two runs line up), ``group`` keeps the thread
    group (``[worker]``), ``strip`` removes it."""
    _check(stacks)
    if not (0 <= min_share < 1):
        raise ValueError(f"min_share must be in [0, 1), got {min_share!r}")
    if threads not in ("name", "group", "strip"):
        raise ValueError(f"threads must be 'name', 'group' or 'strip', got {threads!r}")
    total_all = int(stacks["samples"].sum())
    tree: dict = defaultdict(int)
    selfs: dict = defaultdict(int)
    for stack, n in zip(stacks["stack"], stacks["samples"]):
        fr = _frames(stack, strip_thread=False)
        m = _THREAD_RE.match(fr[0]) if fr else None
        if m:
            fr = (
                fr[1:]
                if threads == "strip"
                else [f"[{m.group(1) if threads == 'name' else thread_group(m.group(1))}]"] + fr[1:]
            )
        fr = fr[:max_depth]
        path = "all"
        tree[path] += n
        for f in fr:
            path = path + ";" + f
            tree[path] += n
        selfs[path] += n
    limit = min_share * total_all
    rows = []
    for pid, v in tree.items():
        if v < limit and pid != "all":
            continue
        parent = pid.rsplit(";", 1)[0] if pid != "all" else ""
        label = pid.rsplit(";", 1)[-1]
        rows.append((pid, parent, label, v, v / (total_all or 1), selfs.get(pid, 0)))
    return pd.DataFrame(rows, columns=["id", "parent", "label", "value", "share", "self"])


def merge_collapsed(*stacks: pd.DataFrame) -> pd.DataFrame:
    """Sum several profiles' stacks (e.g. repeated runs)."""
    for s in stacks:
        _check(s)
    df = pd.concat(stacks).groupby("stack", as_index=False)["samples"].sum()
    df["thread"] = df["stack"].map(_thread_of)
    return df


def write_collapsed(stacks: pd.DataFrame, path: str | Path) -> Path:
    _check(stacks)
    p = Path(path)
    p.write_text("".join(f"{s} {int(n)}\n" for s, n in zip(stacks["stack"], stacks["samples"])))
    return p
