"""``CourseServer``: a highload-dht course server (polis-vk/2024-highload-dht), from the student's build output.

A course server has no main that takes a port: it is a ``ru.vk.itmo.Service`` made by a factory annotated
``@ru.vk.itmo.test.ServiceFactory(stage = N)``. perflab's launcher (``perflab.course.CourseLauncher``, in the
server's install under ``course/``: docs/contracts/server.md section 1) finds the factory by reflection (the
highest stage, or ``factory``/``stage``), gives it a ``ServiceConfig`` (port, self URL, the cluster's URLs,
a data directory), calls ``start()``, and ``stop()`` on SIGTERM so the student's DAO flushes. one-nio 1.7.1
and its run-time dependencies come with it. The student's classes decide the Java version: the class files
are read, and the first JDK here that runs them is used (``java_home`` to choose), or the error names the
version and the fix before anything starts.

``server()`` is the server as any server you bring (:class:`~perflab.config.target.ForeignServer`, its command
built here); ``cluster(nodes=3, ...)`` is N of them (:class:`~perflab.config.cluster.ClusterConfig`).
"""

from __future__ import annotations

import os
import shlex
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .. import jdk, paths
from ..units import arg_size
from .cluster import ClusterConfig
from .fields import Params, option
from .server import DEFAULT_HEAP
from .target import ForeignServer

#: the launcher's main class (java-server/src/course)
LAUNCHER = "perflab.course.CourseLauncher"
#: class file major version -> Java release (major 52 is Java 8)
_JAVA_OF_MAJOR = 44
#: minor version of a class compiled with --enable-preview: it runs on exactly its own release, with the flag
_PREVIEW = 0xFFFF
#: class files read to find the version (a student's build output holds a few hundred)
_SAMPLE = 2000


@dataclass(frozen=True)
class CourseServer(Params):
    """A course server from ``classes`` (see the module docstring)."""

    classes: str = option(
        None,
        "text",
        "the student's build output: class directories or jars separated by ':' (Gradle: build/classes/java/main)",
        flag="--course-classes",
    )
    factory: str | None = option(
        None,
        "text",
        "the @ServiceFactory class to use (default: the highest stage found)",
        optional=True,
        flag="--course-factory",
    )
    stage: int | None = option(
        None, "int", "use the factory of this stage", optional=True, min=1, flag="--course-stage"
    )
    java_home: str | None = option(
        None,
        "path",
        "JDK to run it on (default: the first JDK here new enough for its classes)",
        optional=True,
        flag="--course-java-home",
    )
    heap: int = option(
        DEFAULT_HEAP, "size", "the server JVM's heap (-Xmx and -Xms)", min=16 << 20, flag="--course-heap"
    )
    label: str | None = option(
        None,
        "text",
        "a short name for the server in reports (default: the factory, or the build output's directory)",
        optional=True,
        flag="--course-label",
    )

    def _check(self):
        entries = [e for e in self.classes.split(os.pathsep) if e]
        for e in entries:
            if not Path(e).exists():
                raise ValueError(
                    f"classes: {e} does not exist (give the student's build output, e.g. "
                    f"build/classes/java/main after `./gradlew compileJava`)"
                )
        self._set("classes", os.pathsep.join(str(Path(e).resolve()) for e in entries))
        if self.factory is not None and self.stage is not None:
            raise ValueError("factory/stage: give one (a factory class, or the stage whose factory to use)")

    # --- what the classes need ------------------------------------------------------------------------
    def class_version(self) -> tuple[int, bool]:
        """``(Java release, preview)`` the classes were compiled for: the newest among them."""
        found = [_class_version(data) for data in _class_files(self.classes.split(os.pathsep))]
        if not found:
            raise ValueError(
                f"classes: no .class file in {self.classes} (compile the student's code first: ./gradlew compileJava)"
            )
        major, minor = max(found)
        return major - _JAVA_OF_MAJOR, minor == _PREVIEW

    def java(self) -> tuple[str, int, bool]:
        """``(java home, Java release the classes need, preview)``: ``java_home`` if it runs them, else the
        first JDK here that does; a ``ValueError`` naming the version and the fix otherwise."""
        need, preview = self.class_version()
        if self.java_home is not None:
            have = jdk.version(self.java_home)[0]
            if have < need or (preview and have != need):
                raise ValueError(
                    f"java_home: {self.java_home} is Java {have}; the classes in {self.classes} need "
                    f"Java {need}{' exactly (compiled with --enable-preview)' if preview else ' or newer'}"
                )
            return self.java_home, need, preview
        home = jdk.find(need) if not preview else jdk.find(need, exact=True)
        if home is None:
            raise ValueError(
                f"classes: {self.classes} holds classes compiled for Java {need}"
                f"{' with --enable-preview' if preview else ''}, and no JDK {need}"
                f"{'' if preview else '+'} is installed here (the default is Java "
                f"{jdk.version()[0]}): install one, or give its home with --course-java-home"
            )
        return home, need, preview

    # --- as a server, or N ------------------------------------------------------------------------------
    def command(self) -> str:
        """The launcher's command with the placeholders of a cluster's node (``{port}``, ``{host}``, ``{dir}``,
        ``{cluster}``, ``{self}``): one server is a cluster of one."""
        home, _, preview = self.java()
        course = paths.course_dir()
        cp = os.pathsep.join([str(course / "perflab-course.jar"), self.classes, str(course / "lib" / "*")])
        args = [
            str(Path(home) / "bin" / "java"),
            f"-Xmx{arg_size(self.heap)}",
            f"-Xms{arg_size(self.heap)}",
            *(["--enable-preview"] if preview else []),
            # async-profiler attaches to the running JVM; JDK 21+ asks for leave to load an agent that way
            "-XX:+EnableDynamicAgentLoading",
            "-XX:+UnlockDiagnosticVMOptions",
            "-XX:+DebugNonSafepoints",
            "-cp",
            cp,
            LAUNCHER,
            "--port",
            "{port}",
            "--host",
            "{host}",
            "--data-dir",
            "{dir}",
            "--cluster",
            "{cluster}",
            "--self-url",
            "{self}",
        ]
        if self.factory is not None:
            args += ["--factory", self.factory]
        if self.stage is not None:
            args += ["--stage", str(self.stage)]
        return shlex.join(args).replace("'{", "{").replace("}'", "}")

    # --- which factory, and the stage before it -----------------------------------------------------------
    def factories(self) -> list[Factory]:
        """Every ``@ServiceFactory`` class in the classes, with its stage (read from the class files, as the
        launcher's scan finds them), highest stage first."""
        found = [
            f
            for data in _class_files(self.classes.split(os.pathsep), whole=True, mentioning=_ANNOTATION)
            if (f := _factory_of(data)) is not None
        ]
        return sorted(found, key=lambda f: (-f.stage, f.name))

    def chosen(self) -> Factory | None:
        """The factory the launcher will run (``factory``, else the one of ``stage``, else the highest stage's),
        ``None`` when the class files do not tell (none found, or several at that stage: the launcher says so)."""
        found = self.factories()
        if self.factory is not None:
            return next((f for f in found if f.name == self.factory), None)
        stage = self.stage if self.stage is not None else (found[0].stage if found else None)
        at = [f for f in found if f.stage == stage]
        return at[0] if len(at) == 1 else None

    def previous(self) -> CourseServer | None:
        """The same student's factory of the highest stage below this one's (their previous stage, when they
        kept its factory), as a server of its own; ``None`` when there is none."""
        me = self.chosen()
        if me is None:
            return None
        before = [f for f in self.factories() if f.stage < me.stage and f.student == me.student]
        if not before:
            return None
        return self.replace(factory=before[0].name, stage=None, label=None)

    @property
    def name(self) -> str:
        """What reports call it: ``label``, else the student's package and the stage of the factory it runs
        (``kislovdanil, stage 5``), else the factory's class, else the build output's directory."""
        if self.label:
            return self.label
        me = self.chosen()
        if me is not None:
            return f"{me.student.rsplit('.', 1)[-1]}, stage {me.stage}"
        if self.factory:
            return self.factory.rsplit(".", 1)[-1]
        first = Path(self.classes.split(os.pathsep)[0])
        return first.parent.parent.parent.name if first.name == "main" and first.parent.name == "java" else first.name

    def server(self) -> ForeignServer:
        """This course server as a server you bring: its launcher command, any answer on ``/`` as its ready
        check (a course server answers unknown paths 400)."""
        return ForeignServer(command=self.command(), ready_path="/", label=self.name)

    def cluster(self, nodes: int = 3, **fields) -> ClusterConfig:
        """``nodes`` of it as a cluster (``fields``: the ClusterConfig's ack, from_, entry, api)."""
        return ClusterConfig(nodes=nodes, command=self.command(), ready_path="/", **fields)


def _class_files(entries: list[str], whole: bool = False, mentioning: bytes | None = None):
    """The headers of the first :data:`_SAMPLE` class files under ``entries`` (directories or jars); ``whole``:
    every class file whole, those ``mentioning`` a byte string only."""
    n = 0

    def keep(data: bytes):
        return data if whole else data[:8]

    for e in map(Path, entries):
        if e.is_dir():
            for f in e.rglob("*.class"):
                data = f.read_bytes()
                if mentioning is None or mentioning in data:
                    yield keep(data)
                n += 1
                if n >= _SAMPLE and not whole:
                    return
        elif zipfile.is_zipfile(e):
            with zipfile.ZipFile(e) as z:
                for info in z.infolist():
                    if info.filename.endswith(".class") and not info.filename.startswith("META-INF/"):
                        data = z.read(info)
                        if mentioning is None or mentioning in data:
                            yield keep(data)
                        n += 1
                        if n >= _SAMPLE and not whole:
                            return


@dataclass(frozen=True)
class Factory:
    """A ``@ServiceFactory(stage = N)`` class: its binary name and stage."""

    name: str
    stage: int

    @property
    def student(self) -> str:
        """The student's root package (``ru.vk.itmo.test.<student>``), as the launcher names it."""
        pkg = self.name.rsplit(".", 1)[0] if "." in self.name else ""
        if pkg.startswith(_COURSE_TESTS):
            return _COURSE_TESTS + pkg[len(_COURSE_TESTS) :].split(".", 1)[0]
        return pkg


#: the course's annotation as a class file names it, and the package of the students' code
_ANNOTATION = b"Lru/vk/itmo/test/ServiceFactory;"
_COURSE_TESTS = "ru.vk.itmo.test."


def _factory_of(data: bytes) -> Factory | None:
    """The class and its ``stage`` when the class file carries ``@ServiceFactory`` (a runtime-visible
    annotation of the class), else ``None``; a class file this reader does not follow is ``None`` too."""
    try:
        return _ClassFile(data).factory()
    except (IndexError, struct.error, ValueError, KeyError):
        return None


class _ClassFile:
    """Just enough of the JVM class file format (JVMS chapter 4) to read a class's annotations."""

    def __init__(self, data: bytes):
        self.d, self.i = data, 8
        count = self.u2()
        self.utf8: dict[int, str] = {}
        self.ints: dict[int, int] = {}
        self.classes: dict[int, int] = {}
        k = 1
        while k < count:
            tag = self.u1()
            if tag == 1:
                n = self.u2()
                self.utf8[k] = self.d[self.i : self.i + n].decode("utf-8", "replace")  # modified UTF-8: names are ASCII
                self.i += n
            elif tag == 3:
                self.ints[k] = struct.unpack(">i", self.d[self.i : self.i + 4])[0]
                self.i += 4
            elif tag == 7:
                self.classes[k] = self.u2()
            else:
                size = {4: 4, 5: 8, 6: 8, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2}[
                    tag
                ]
                self.i += size
                if tag in (5, 6):
                    k += 1  # a long or a double takes two entries
            k += 1

    def u1(self) -> int:
        self.i += 1
        return self.d[self.i - 1]

    def u2(self) -> int:
        self.i += 2
        return struct.unpack(">H", self.d[self.i - 2 : self.i])[0]

    def u4(self) -> int:
        self.i += 4
        return struct.unpack(">I", self.d[self.i - 4 : self.i])[0]

    def _skip_members(self) -> None:
        for _ in range(self.u2()):
            self.i += 6
            for _ in range(self.u2()):
                self.i += 2
                length = self.u4()  # read before adding: u4() moves self.i itself
                self.i += length

    def factory(self) -> Factory | None:
        self.i += 2
        this = self.utf8[self.classes[self.u2()]].replace("/", ".")
        self.i += 2
        interfaces = self.u2()
        self.i += 2 * interfaces
        self._skip_members()  # fields
        self._skip_members()  # methods
        for _ in range(self.u2()):
            name, length = self.utf8.get(self.u2()), self.u4()
            end = self.i + length
            if name == "RuntimeVisibleAnnotations":
                for _ in range(self.u2()):
                    kind, values = self._annotation()
                    if kind == _ANNOTATION.decode() and isinstance(values.get("stage"), int):
                        return Factory(this, values["stage"])
            self.i = end
        return None

    def _annotation(self) -> tuple[str, dict]:
        kind = self.utf8[self.u2()]
        values = {}
        for _ in range(self.u2()):
            name = self.utf8[self.u2()]
            values[name] = self._element()
        return kind, values

    def _element(self):
        tag = chr(self.u1())
        if tag in "BCDFIJSZs":
            index = self.u2()
            return self.ints.get(index) if tag == "I" else None
        if tag == "e":
            self.i += 4
        elif tag == "c":
            self.i += 2
        elif tag == "@":
            self._annotation()
        elif tag == "[":
            for _ in range(self.u2()):
                self._element()
        else:
            raise ValueError(f"element value tag {tag!r}")
        return None


def _class_version(head: bytes) -> tuple[int, int]:
    """``(major, minor)`` of a class file's header (magic CAFEBABE, then minor and major, big-endian)."""
    if len(head) < 8 or head[:4] != b"\xca\xfe\xba\xbe":
        return (0, 0)
    minor, major = struct.unpack(">HH", head[4:8])
    return major, minor
