"""Analysis of collapsed stacks: frames with self/total shares, categories, differences.

Collapsed format (async-profiler's ``collapsed`` output, Brendan Gregg's folded format): one line
per distinct stack, frames root-first separated by ``;``, then a space and the sample count (or
bytes for ``alloc``, nanoseconds for ``lock``). With the ``threads`` option the root frame is the
thread, ``[name tid=N]``.

Categories answer the questions the lab reports ask of a flame graph (where does the time go:
network read/write, HTTP parsing, request handling, storage: memtable / flush / SSTable read /
compaction, WAL, executor queue, GC, JIT, locks, a cluster node's internal requests). A stack gets
the first category, in :data:`CATEGORY_ORDER`, for which any of its frames matches the category's
pattern. The order
encodes nesting: e.g. in one-nio the request handler runs *inside* the HTTP parser's loop and the
storage call inside the handler, so "storage" is tested before "request handling", which is tested
before "HTTP parsing"; the selector's socket ``read``/``write`` calls sit under the same loop and win
over both. The patterns name frames of our server (``perflab/server``, ``perflab/storage``), of
one-nio, RocksDB, the JDK and the JVM.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

_S = r"[./]"  # Java frames come as one/nio/X.m or one.nio.X.m depending on the tool

#: (category, regex) in priority order; the first category with a matching frame wins.
CATEGORY_RULES: list[tuple[str, str]] = [
    ("GC", r"G1[A-Z]|GCTaskThread|GC Thread|G1 |ParallelGC|PSScavenge|PSParallel|MarkSweep|ZDriver|ZWorker|ZDirector|"
           r"Shenandoah|ConcurrentMark|CollectedHeap::|GCTask|WorkerThread::run|GangWorker|SerialHeap|DefNewGeneration|"
           r"ScavengeRoots|OopClosure|CardTable|G1Refine|\bGC\b"),
    ("JIT", r"CompileBroker|C2Compiler|C1Compiler|Compile::|Compilation::|CompilerThread|PhaseIdealLoop|PhaseChaitin|"
            r"Parse::|GraphBuilder|JVMCI|C[12] CompilerThre"),
    ("executor queue", rf"ThreadPoolExecutor{_S}getTask|ThreadPoolExecutor{_S}execute|ThreadPoolExecutor{_S}addWorker|"
                       rf"ArrayBlockingQueue{_S}|LinkedBlockingQueue{_S}|LinkedBlockingDeque{_S}|LifoQueue{_S}|"
                       rf"SynchronousQueue{_S}|(Pool|Virtual)Dispatcher{_S}dispatch\b|ForkJoinPool{_S}(scan|awaitWork|signalWork|push)|"
                       rf"VirtualThread{_S}(submitRunContinuation|park|yield|unpark)"),
    ("locks", rf"LockSupport{_S}park|Unsafe{_S}park|AbstractQueuedSynchronizer|ReentrantLock{_S}|ReentrantReadWriteLock|"
              rf"ObjectMonitor::|ObjectSynchronizer::|__lll_lock|pthread_mutex_lock|pthread_cond_wait|futex_wait|"
              rf"StampedLock{_S}|Object{_S}wait"),
    ("storage: WAL", rf"perflab{_S}storage{_S}\S*(Wal|WAL|WriteAhead|wal{_S})|rocksdb::(WalManager|log::Writer|DBImpl::WriteToWAL)"),
    ("storage: flush", rf"perflab{_S}storage{_S}\S*([Ff]lush)|rocksdb::(FlushJob|DBImpl::BackgroundFlush|BuildTable)"),
    ("storage: compaction", rf"perflab{_S}storage{_S}\S*[Cc]ompact|rocksdb::(Compaction|DBImpl::BackgroundCompaction)"),
    ("storage: SSTable read", rf"perflab{_S}storage{_S}\S*(SSTable|SsTable|Sstable|(?<![Mm]em)Table|Bloom|MappedRegion|Block|Index|KeyHash|"
                              rf"Checksums|SortedRun|RunCursor|Version{_S}get)|"
                              rf"rocksdb::(BlockBasedTable|DataBlockIter|IndexBlockIter|FilterBlock|Version::Get|TableCache|"
                              rf"BlockFetcher|FullFilterBlockReader)"),
    ("storage: memtable", rf"perflab{_S}storage{_S}\S*([Mm]em[Tt]able|MemoryStorage)|rocksdb::(MemTable|InlineSkipList|SkipList)"),
    ("storage: other", rf"perflab{_S}storage{_S}|org{_S}rocksdb{_S}|rocksdb::"),
    # a cluster node's coordination and its HTTP client to the other nodes (their socket I/O included): what
    # proxying costs; a replica's own storage work above stays storage
    ("cluster: internal requests", rf"perflab{_S}cluster{_S}|jdk{_S}internal{_S}net{_S}http{_S}|"
                                   rf"java{_S}net{_S}http{_S}"),
    ("network write", rf"NativeSocket{_S}write|NativeSocket{_S}writeRaw|JavaSocket{_S}write|Session{_S}write|"
                      rf"Session{_S}sendResponse|KvSession{_S}(send|sendStream|next)\b|"
                      rf"HttpSession{_S}(sendResponse|writeResponse)|Session{_S}flush|SocketChannelImpl{_S}write|"
                      r"\b__send|\bsend\b|sendto|__libc_write|__write|writev|tcp_sendmsg|sys_write|ksys_write|do_writev"),
    ("network read", rf"NativeSocket{_S}read|NativeSocket{_S}readRaw|JavaSocket{_S}read|Session{_S}read|SocketChannelImpl{_S}read|"
                     rf"NativeSelector{_S}(select|epollWait)|JavaSelector{_S}|EPoll|epoll_wait|SelectorImpl{_S}|"
                     r"\b__recv|\brecv\b|recvfrom|__libc_read|__read|tcp_recvmsg|sys_read|ksys_read|sock_read"),
    ("request handling", rf"perflab{_S}server{_S}|HttpServer{_S}handleRequest|one{_S}nio{_S}http{_S}Response|"
                         rf"one{_S}nio{_S}http{_S}Request{_S}get|one{_S}nio{_S}util{_S}(Utf8|ByteArrayBuilder)"),
    ("HTTP parsing", rf"HttpSession{_S}(processRead|processHttpBuffer|parseRequest|handleParsedRequest|getRequest)|"
                     rf"one{_S}nio{_S}http{_S}Request{_S}|one{_S}nio{_S}http{_S}HttpParser|Session{_S}process"),
]
CATEGORY_ORDER = [c for c, _ in CATEGORY_RULES] + ["other"]

#: Frames that are ancestors of most work (so cannot be rules above) but, when they are the leaf
#: of a stack that matched nothing, say where the time went: the selector loop itself, the
#: executor's own bookkeeping around tasks.
LEAF_RULES: list[tuple[str, str]] = [
    ("network read", rf"SelectorThread{_S}run$|JavaSelector|NativeSelector"),
    ("executor queue", rf"ThreadPoolExecutor{_S}(runWorker|beforeExecute|afterExecute)$|ThreadPoolExecutor\$Worker{_S}run$"),
]
_COMPILED = [(c, re.compile(p)) for c, p in CATEGORY_RULES]
_LEAF_COMPILED = [(c, re.compile(p)) for c, p in LEAF_RULES]
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
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source and ";" not in source
                                      and Path(source).exists()):
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
    df = pd.DataFrame({"stack": list(counts.keys()), "samples": np.fromiter(counts.values(), dtype="int64", count=len(counts))})
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
        ["total", "self"], ascending=False, ignore_index=True)


def classify_stack(frames: list[str], event: str = "cpu") -> str:
    """The category of one stack (frames root-first). In ``lock`` profiles every sample is lock
    contention, so the "locks" rule is skipped there and the category tells *where* it happens."""
    if event not in ("cpu", "alloc", "lock", "wall", "itimer", "ctimer"):
        raise ValueError(f"event must be a profiling event (cpu, alloc, lock, wall, itimer, ctimer), got {event!r}")
    if event in ("alloc", "lock") and frames:
        # There the leaf is the allocated type / the lock's class, not code: classify by the call site.
        frames = frames[:-1]
    text = "\n".join(frames)
    for cat, rx in _COMPILED:
        if cat == "locks" and event == "lock":
            continue
        if rx.search(text):
            return cat
    if frames:
        for cat, rx in _LEAF_COMPILED:
            if rx.search(frames[-1]):
                return cat
    return "other"


def categorize(stacks: pd.DataFrame, event: str = "cpu", by_thread: bool = False) -> pd.DataFrame:
    """Samples per category (all of :data:`CATEGORY_ORDER`, zeros included, in that order), with
    ``share`` of the total. ``by_thread`` adds a ``thread_group`` column (thread names with numbers
    removed, e.g. ``selector``, ``worker``)."""
    _check(stacks)
    acc: dict = defaultdict(int)
    for stack, n, th in zip(stacks["stack"], stacks["samples"], stacks.get("thread", [None] * len(stacks))):
        cat = classify_stack(_frames(stack), event)
        key = (thread_group(th), cat) if by_thread else cat
        acc[key] += int(n)
    total = sum(acc.values()) or 1
    if by_thread:
        rows = [{"thread_group": g, "category": c, "samples": v, "share": v / total} for (g, c), v in acc.items()]
        return pd.DataFrame(rows, columns=["thread_group", "category", "samples", "share"]).sort_values(
            "samples", ascending=False, ignore_index=True)
    rows = [{"category": c, "samples": acc.get(c, 0), "share": acc.get(c, 0) / total} for c in CATEGORY_ORDER]
    return pd.DataFrame(rows)


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


def diff_profiles(base: pd.DataFrame, new: pd.DataFrame, by: str = "frame", metric: str = "self",
                  event: str = "cpu") -> pd.DataFrame:
    """What grew and what shrank between two profiles, on normalized shares (each profile sums to
    1, so profiles of different lengths or rates compare).

    ``by``: ``frame`` (``metric`` ``self`` or ``total`` share), ``category`` or ``thread``. Columns:
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
            return categorize(st, event).set_index("category")["share"]
        return threads_table(st).set_index("thread_group")["share"]

    a, b = shares(base), shares(new)
    df = pd.concat([a.rename("base_share"), b.rename("new_share")], axis=1).fillna(0.0)
    df.index.name = "key"
    df = df.reset_index()
    df["delta"] = df["new_share"] - df["base_share"]
    with np.errstate(divide="ignore", invalid="ignore"):
        df["ratio"] = np.where(df["base_share"] > 0, df["new_share"] / df["base_share"].where(df["base_share"] > 0, 1), np.inf)
    return df.reindex(df["delta"].abs().sort_values(ascending=False).index).reset_index(drop=True)


def icicle_nodes(stacks: pd.DataFrame, min_share: float = 0.002, max_depth: int = 60,
                 threads: str = "name") -> pd.DataFrame:
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
            fr = fr[1:] if threads == "strip" else \
                [f"[{m.group(1) if threads == 'name' else thread_group(m.group(1))}]"] + fr[1:]
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
