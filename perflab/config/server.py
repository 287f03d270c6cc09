"""``ServerConfig``: how to start the Java server, with one field per server flag.

The server's own option list (``perflab.server.Main --options-json``: key, kind, default, bounds, help)
is the single source of its flags. The build writes it to ``server_options.json`` next to this module
(``make setup``; a test checks the committed copy against the built server), and this module turns
every option into a field at import, so:

* every server flag is a field (``--memtable-size`` -> ``memtable_size``), with the server's default;
* every bound is checked before a JVM starts, in the server's own words
  (``memtable_size: --memtable-size: must be between 64k and 1g, got '1k'``);
* a new server flag needs no Python change.

Read at import rather than generated as Python source: the JSON is data the build already produces, a
generated ``.py`` would be a second copy to keep in step. Units follow the lab's convention: sizes in
bytes, durations in seconds (the server's milliseconds are converted).

The lab adds what the server's flags do not cover: the JVM (``heap``, ``gc``, ``jvm_flags``,
``java_home``), ``extra_args`` and ``install_dir`` (another build of the server, e.g. of another
commit). ``data-dir`` and ``config`` are chosen by the lab itself, and ``port`` defaults to 0 (a free
port) instead of the server's 8080.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from ..units import arg_size
from .fields import Params, option, spec_of

OPTIONS_FILE = Path(__file__).with_name("server_options.json")
#: server flags the lab sets itself (per run), never a ServerConfig field
LAB_MANAGED = ("data-dir", "config")
#: defaults that differ from the server's for a lab run
LAB_DEFAULTS = {"port": 0}
#: the server heap when none is given: fixed and small, so GC behaviour does not depend on the machine's RAM
DEFAULT_HEAP = "256m"
GC_FLAGS = {
    "g1": "-XX:+UseG1GC",
    "parallel": "-XX:+UseParallelGC",
    "serial": "-XX:+UseSerialGC",
    "z": "-XX:+UseZGC",
    "shenandoah": "-XX:+UseShenandoahGC",
    "epsilon": "-XX:+UseEpsilonGC",
}
_KINDS = {
    "int": "int",
    "size": "size",
    "duration": "duration",
    "enum": "enum",
    "string": "text",
    "path": "path",
    "bool": "bool",
}


def server_options() -> dict:
    """The server's option description (``--options-json``) as committed next to this module."""
    return json.loads(OPTIONS_FILE.read_text())


def _field_of(o: dict):
    key, kind = o["key"], _KINDS[o["kind"]]
    scale = 1e-3 if kind == "duration" else 1  # the server's milliseconds -> seconds
    default = LAB_DEFAULTS.get(key.replace("-", "_"), o["default"])
    if kind == "duration" and default is not None:
        default = default * scale
    bound = lambda v: None if v is None else v * scale
    f = option(
        default,
        kind,
        o["help"],
        min=bound(o.get("min")),
        max=bound(o.get("max")),
        choices=tuple(o["choices"]) if o.get("choices") else None,
        optional=o["default"] is None,
        bounds_text=o.get("bounds_text"),
        prefix=f"--{key}: ",
        flag=f"--{key}",
        default_text=None if key.replace("-", "_") in LAB_DEFAULTS else o.get("default_text"),
    )
    f.metadata = {**f.metadata, "server_key": key, "server_default": o["default"], "scope": o.get("scope")}
    return key.replace("-", "_"), object, f


def _lab_fields():
    return [
        (
            "heap",
            object,
            option(DEFAULT_HEAP, "size", "the server JVM's heap (-Xmx; also -Xms with fixed_heap)", min=16 << 20),
        ),
        (
            "fixed_heap",
            object,
            option(True, "bool", "start with the whole heap (-Xms = -Xmx): no resizing during a run"),
        ),
        ("gc", object, option(None, "enum", "garbage collector", choices=tuple(GC_FLAGS), optional=True)),
        (
            "jvm_flags",
            object,
            option((), "texts", "extra JVM flags, after the lab's own (so they win)", flag="--jvm-flag"),
        ),
        (
            "java_home",
            object,
            option(None, "path", "JDK to run the server on (default: $JAVA_HOME or the java on PATH)", optional=True),
        ),
        ("extra_args", object, option((), "texts", "extra server flags appended verbatim", flag="--server-arg")),
        (
            "install_dir",
            object,
            option(
                None,
                "path",
                "the server build to run: an install directory with lib/*.jar "
                "(default: this checkout's java-server/build/install/perflab-server; perflab ab "
                "--a-commit builds one per commit)",
                optional=True,
            ),
        ),
    ]


def _check(self):
    if self.gc is not None and isinstance(self.gc, str):
        self._set("gc", self.gc)
    for flag in self.jvm_flags:
        if not flag.startswith("-"):
            raise ValueError(f"jvm_flags: entries must start with '-', got {flag!r}")
    if self.java_home is not None and not (Path(self.java_home) / "bin" / "java").exists():
        raise ValueError(f"java_home: {self.java_home} has no bin/java")
    if self.install_dir is not None:
        if not any((Path(self.install_dir) / "lib").glob("*.jar")):
            raise ValueError(f"install_dir: {self.install_dir} has no lib/*.jar (a server build's install directory)")
        self._set("install_dir", str(Path(self.install_dir).resolve()))


def _needs_data_dir(self) -> bool:
    return self.backend != "memory"


def _jvm_args(self) -> list[str]:
    """JVM flags in the order they are passed (heap, GC, the lab's, then the user's so they win)."""
    args = [f"-Xmx{arg_size(self.heap)}"] + ([f"-Xms{arg_size(self.heap)}"] if self.fixed_heap else [])
    if self.gc is not None:
        args.append(GC_FLAGS[self.gc])
    # async-profiler attaches later: without DebugNonSafepoints its Java stacks are skewed to safepoints;
    # StartAttachListener opens the attach socket at start-up instead of on the first attach, which a
    # JVM busy under load may answer too late (AttachNotSupportedException after 10 s).
    args += ["-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints", "-XX:+StartAttachListener"]
    return args + list(self.jvm_flags)


def _server_args(self, data_dir: str | os.PathLike | None) -> list[str]:
    """``perflab.server.Main`` flags: every option that differs from the server's own default (the
    server reports the complete effective configuration in its ``config`` line), plus the data dir."""
    out = []
    for f in dataclasses.fields(self):
        key = f.metadata.get("server_key")
        if key is None:
            continue
        v = getattr(self, f.name)
        server_default = f.metadata["server_default"]
        spec = spec_of(f)
        canonical = v * 1000 if spec.kind == "duration" and v is not None else v
        if v is None or canonical == server_default:
            continue
        out += [f"--{key}", spec.fmt(v)]
    if data_dir is not None:
        out += ["--data-dir", str(data_dir)]
    return out + list(self.extra_args)


def _storage_options(self) -> dict[str, str]:
    """The storage options for ``StorageFactory.open`` / Prefill (same keys as the server flags)."""
    return {
        f.metadata["server_key"]: spec_of(f).fmt(getattr(self, f.name))
        for f in dataclasses.fields(self)
        if f.metadata.get("scope") == "storage" and getattr(self, f.name) is not None
    }


def _build():
    opts = [o for o in server_options()["options"] if o["key"] not in LAB_MANAGED]
    fields = [_field_of(o) for o in opts] + _lab_fields()
    doc_lines = [
        "How to start the Java server: one field per server flag (from its ``--options-json``) plus the JVM.",
        "",
        "Fields (default):",
        "",
    ]
    for name, _, f in fields:
        spec = spec_of(f)
        doc_lines.append(f"* ``{name}`` ({spec.describe_default(f.default)}): {spec.help}")
    ns = {
        "__doc__": "\n".join(doc_lines),
        "__module__": __name__,
        "_check": _check,
        "needs_data_dir": property(_needs_data_dir),
        "jvm_args": _jvm_args,
        "server_args": _server_args,
        "storage_options": _storage_options,
    }
    return dataclasses.make_dataclass("ServerConfig", fields, bases=(Params,), namespace=ns, frozen=True)


ServerConfig = _build()
BACKENDS = spec_of(next(f for f in dataclasses.fields(ServerConfig) if f.name == "backend")).choices
MODES = spec_of(next(f for f in dataclasses.fields(ServerConfig) if f.name == "mode")).choices
