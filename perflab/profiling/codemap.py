"""What is known about the profiled server's code: :class:`CodeMap`.

A profile's categories (:mod:`perflab.profiling.flame`) are of two kinds: what every JVM server runs (one-nio,
the JDK's network, GC, JIT, locks, executors, idle threads), named by patterns that hold for any server, and
the server's own code and its storage, which only the server can name. A :class:`CodeMap` carries the
latter:

* ``packages``: the server's own code (package prefixes, ``ru/vk/itmo/test/alice``). Empty: found
  automatically, every Java frame outside the JDK and the known libraries (:data:`LIBRARIES`).
* ``storage``: ``(category, regex)`` rules for its storage, in nesting order. ``None``: the course's storage
  heuristic (:data:`STORAGE_HEURISTIC`).
* ``code_category``: what its own code is called (``your code``; the built-in server's is ``request
  handling``, the name the lab's notebooks have always read).
* ``categories``: the user's own ``(NAME, regex)`` categories, tested before every other one.

:data:`BUILTIN` is the lab's own server (its LSM's parts, RocksDB); :meth:`CodeMap.course` a course server from
the course launcher's ready line (the classes behind a ``Dao`` interface, the course's or the student's own copy,
always with :data:`STORAGE_HEURISTIC`); ``CodeMap()`` any other server.
A run keeps its map in ``code-map.json`` (:func:`write`, :func:`read`) so its categories can be recomputed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

#: Java frames come as one/nio/X.m or one.nio.X.m depending on the tool
SEP = r"[./]"
#: the category of a server's own code and of its storage when nothing finer is known
YOUR_CODE = "your code"
STORAGE = "storage"

#: package prefixes that are not the server's own code: the JDK, one-nio and the libraries servers use
LIBRARIES = (
    "java",
    "javax",
    "jdk",
    "sun",
    "com/sun",
    "one/nio",
    "org/rocksdb",
    "org/slf4j",
    "ch/qos/logback",
    "org/apache",
    "org/objectweb/asm",
    "com/google",
    "com/fasterxml",
    "io/netty",
    "org/jetbrains",
    "kotlin",
    "kotlinx",
    "scala",
    "perflab/course",
)

_METHOD = r"[A-Za-z_$<][\w$<>]*"
#: what follows a class's name in its frames: a nested class, a lambda's hidden class, then the method
_MEMBER = rf"(?:\$[\w$]*)?(?:{SEP}0x[0-9a-fA-F]+)?{SEP}{_METHOD}$"
#: a Java frame (``pkg/Class.method``, lambdas' ``Class$$Lambda.0x1f.run`` included), of whichever code:
#: a package, a class and a method starting like a Java name (so ``libc.so.6`` is not one), or a class of
#: the default package (``TinyKv.kv``, a single-file server) named in upper case as Java classes are
JAVA_FRAME = rf"(?:[A-Za-z_$][\w$]*(?:{SEP}[\w$]+)+|[A-Z][\w$]*(?:{SEP}0x[0-9a-fA-F]+)?){SEP}{_METHOD}"
_NOT_LIBRARY = "(?!(?:" + "|".join(p.replace("/", SEP) for p in LIBRARIES) + f"){SEP})"
#: a frame of the server's own code when no package is known: a Java frame outside :data:`LIBRARIES`
AUTOMATIC_CODE = f"^{_NOT_LIBRARY}{JAVA_FRAME}$"
#: the course's own interfaces (``Dao``'s default methods, ``BaseEntry``): storage in every course server
_COURSE_DAO = f"ru{SEP}vk{SEP}itmo{SEP}dao{SEP}"

#: A course server's storage by its names alone (every course server's, whatever the launcher lists beside it):
#: the course's own interfaces (``ru/vk/itmo/dao/``), any class in a package named ``dao`` or ``dao2`` (the
#: course's layout: the server in ``ru/vk/itmo/test/NAME``, its DAO in ``.../NAME/dao``, its ``SSTable``,
#: ``MemTable`` and iterators included), and any class whose name ends in ``Dao``/``DAO`` (``InMemoryDao``, not
#: ``DaoServer``), with its nested classes and lambdas; libraries excluded.
STORAGE_HEURISTIC = (
    f"^{_COURSE_DAO}"
    f"|^{_NOT_LIBRARY}(?:[\\w$]+{SEP})*dao\\d*{SEP}(?:[\\w$]+{SEP})+{_METHOD}$"
    f"|^{_NOT_LIBRARY}(?:[\\w$]+{SEP})+[\\w$]*(?:Dao|DAO){_MEMBER}"
)


def _slashed(name: str) -> str:
    """``ru.vk.itmo.Foo`` or ``ru/vk/itmo/Foo/`` -> ``ru/vk/itmo/Foo``."""
    return name.strip().replace(".", "/").strip("/")


def _package_of(cls: str) -> str:
    return cls.rsplit("/", 1)[0] if "/" in cls else ""


def _within(pkg: str, root: str) -> bool:
    return pkg == root or pkg.startswith(root + "/")


def _package_rx(name: str) -> str:
    return SEP.join(re.escape(part) for part in name.split("/"))


@dataclass(frozen=True)
class CodeMap:
    """What is known about one server's code (see the module docstring). Frozen and hashable: the category
    rules derived from a map are compiled once per map."""

    packages: tuple[str, ...] = ()
    storage: tuple[tuple[str, str], ...] | None = None
    code_category: str = YOUR_CODE
    categories: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if isinstance(self.packages, str):
            raise ValueError(f"packages: must be a list of packages, got the single string {self.packages!r}")
        object.__setattr__(self, "packages", tuple(_slashed(p) for p in self.packages))
        if self.storage is not None:
            object.__setattr__(self, "storage", tuple((str(n), str(p)) for n, p in self.storage))
        object.__setattr__(self, "categories", tuple((str(n), str(p)) for n, p in self.categories))
        for what, rules in (("storage", self.storage or ()), ("categories", self.categories)):
            for name, pattern in rules:
                if not name.strip():
                    raise ValueError(f"{what}: a category needs a name, got {name!r} for {pattern!r}")
                try:
                    re.compile(pattern, re.M)
                except re.error as e:
                    raise ValueError(f"{what}: {name}={pattern!r} is not a valid regular expression: {e}") from None
        if not self.code_category.strip():
            raise ValueError("code_category: must name the server's own code, got an empty name")

    @property
    def code_pattern(self) -> str:
        """The regex (one frame per line) of a frame of the server's own code."""
        if not self.packages:
            return AUTOMATIC_CODE
        return "^(?:" + "|".join(_package_rx(p) for p in self.packages) + f"){SEP}"

    @property
    def storage_rules(self) -> tuple[tuple[str, str], ...]:
        return self.storage if self.storage is not None else ((STORAGE, STORAGE_HEURISTIC),)

    def with_categories(self, categories) -> CodeMap:
        """This map with the user's ``(NAME, regex)`` categories (:attr:`perflab.config.ProfileParams.categories`)
        added after any it has: tested before every other category."""
        return CodeMap(self.packages, self.storage, self.code_category, self.categories + tuple(categories))

    @classmethod
    def course(cls, dao_classes, packages=(), factory: str | None = None) -> CodeMap:
        """A course server's map from what the course launcher reports (its ``ready`` line): ``dao_classes``,
        the classes implementing a ``Dao`` interface (the course's ``ru.vk.itmo.dao.Dao``, or a student's own
        copy of it); ``packages``, the student's packages (its own code; empty: found automatically);
        ``factory``, the ``@ServiceFactory`` class.

        Storage is :data:`STORAGE_HEURISTIC` (the course's ``ru/vk/itmo/dao/`` interfaces, every package named
        ``dao``: the student's ``ru/vk/itmo/test/NAME/dao/...``, classes named ``...Dao``) and, beyond it, the
        Dao classes (nested classes and lambdas included) and every package holding one, with its subpackages
        (where a DAO keeps its memtable, tables and iterators), unless the factory lies in it: a Dao class
        beside the server makes only itself storage. An empty list leaves the heuristic alone: a student's DAO
        the launcher could not name (one implementing no ``Dao`` interface) is still storage, never "your
        code"."""
        classes = [_slashed(c) for c in dao_classes]
        home = _package_of(_slashed(factory)) if factory else None
        pkgs = sorted({p for p in map(_package_of, classes) if p and not (home is not None and _within(home, p))})
        alone = [c for c in classes if not any(_within(_package_of(c), p) for p in pkgs)]
        listed = [_package_rx(p) + SEP for p in pkgs] + [_package_rx(c) + _MEMBER for c in alone]
        rule = ("^(?:" + "|".join(listed) + ")|" if listed else "") + STORAGE_HEURISTIC
        return cls(packages=tuple(packages), storage=((STORAGE, rule),))

    @classmethod
    def from_ready(cls, ready: dict | None) -> CodeMap:
        """The map a server's ``ready`` line gives: a course server's (:meth:`course`) when it lists
        ``dao_classes``; otherwise what is found automatically (``CodeMap()``)."""
        if isinstance(ready, dict) and ready.get("dao_classes") is not None:
            return cls.course(ready["dao_classes"], ready.get("packages") or (), ready.get("factory"))
        return cls()

    def to_dict(self) -> dict:
        return {
            "packages": list(self.packages),
            "code_category": self.code_category,
            "storage": [list(r) for r in self.storage] if self.storage is not None else None,
            "categories": [list(r) for r in self.categories],
        }

    @classmethod
    def from_dict(cls, d: dict) -> CodeMap:
        storage = d.get("storage")
        return cls(
            tuple(d.get("packages") or ()),
            tuple(map(tuple, storage)) if storage is not None else None,
            d.get("code_category") or YOUR_CODE,
            tuple(map(tuple, d.get("categories") or ())),
        )


#: the lab's own server: its code under ``perflab/server`` (its cluster's under ``perflab/cluster`` is a
#: category of its own), its storage the LSM's parts (``perflab/storage``) and RocksDB's, innermost first
BUILTIN = CodeMap(
    packages=("perflab/server",),
    code_category="request handling",
    storage=(
        (
            "storage: WAL",
            rf"perflab{SEP}storage{SEP}\S*(Wal|WAL|WriteAhead|wal{SEP})|"
            r"rocksdb::(WalManager|log::Writer|DBImpl::WriteToWAL)",
        ),
        (
            "storage: flush",
            rf"perflab{SEP}storage{SEP}\S*([Ff]lush)|"
            r"rocksdb::(FlushJob|DBImpl::BackgroundFlush|BuildTable)",
        ),
        (
            "storage: compaction",
            rf"perflab{SEP}storage{SEP}\S*[Cc]ompact|"
            r"rocksdb::(Compaction|DBImpl::BackgroundCompaction)",
        ),
        (
            "storage: SSTable read",
            rf"perflab{SEP}storage{SEP}\S*(SSTable|SsTable|Sstable|(?<![Mm]em)Table|Bloom|"
            rf"MappedRegion|Block|Index|KeyHash|Checksums|SortedRun|RunCursor|"
            rf"Version{SEP}get)|"
            r"rocksdb::(BlockBasedTable|DataBlockIter|IndexBlockIter|FilterBlock|Version::Get|"
            r"TableCache|BlockFetcher|FullFilterBlockReader)",
        ),
        (
            "storage: memtable",
            rf"perflab{SEP}storage{SEP}\S*([Mm]em[Tt]able|MemoryStorage)|"
            r"rocksdb::(MemTable|InlineSkipList|SkipList)",
        ),
        ("storage: other", rf"perflab{SEP}storage{SEP}|org{SEP}rocksdb{SEP}|rocksdb::"),
    ),
)

_HIDDEN_CLASS = re.compile(f"{SEP}0x[0-9a-fA-F]+(?={SEP})")

#: the file of a run directory that holds the map its profiles were categorized with
FILE = "code-map.json"


def write(code_map: CodeMap, run_dir: str | Path) -> Path:
    p = Path(run_dir) / FILE
    p.write_text(json.dumps(code_map.to_dict(), indent=1) + "\n")
    return p


def read(run_dir: str | Path) -> CodeMap:
    """The map a run recorded; :data:`BUILTIN` for a run from before maps were recorded (that is how its
    categories were computed)."""
    p = Path(run_dir) / FILE
    return CodeMap.from_dict(json.loads(p.read_text())) if p.is_file() else BUILTIN


def package_of_frame(frame: str) -> str:
    """``ru/vk/itmo/test/alice/Server$1.run`` -> ``ru/vk/itmo/test/alice`` (slash form whatever the tool wrote;
    ``(default package)`` for ``TinyKv.kv``)."""
    name = _HIDDEN_CLASS.sub("", frame)
    return "/".join(re.split(SEP, name)[:-2]) or "(default package)"
