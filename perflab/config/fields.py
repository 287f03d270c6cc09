"""The one validation layer: each parameter field carries a :class:`Spec` (kind, bounds, help, CLI flag).

Every parameter class (``ServerConfig``, ``LoadParams``, ...) derives from :class:`Params`; on
construction each field is converted from what a user may write (``"4m"``, ``"500ms"``, ``"10k"``) to
its canonical Python unit (bytes, seconds, requests/s) and checked against its spec, and the error
names the field: ``ValueError: rate: must be > 0, got 0``. The command line (:func:`add_arguments`)
and the documentation of each field are derived from the same specs, so a bound or a default is
written once.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..units import arg_duration, arg_rate, arg_size, parse_duration, parse_rate, parse_size

KINDS = ("int", "float", "size", "duration", "rate", "rates", "enum", "bool", "text", "texts", "path")


@dataclass(frozen=True)
class Spec:
    """How one field is read, checked and offered on the command line.

    ``kind``: one of :data:`KINDS` (``size`` -> bytes, ``duration`` -> seconds, ``rate`` -> req/s,
    ``rates`` -> tuple of req/s, written ``A:B:S`` on the command line, ``texts`` -> tuple of strings). ``min``/``max`` in the canonical unit (``min_open``: strictly
    greater). ``optional``: ``None`` is allowed (meaning "not set"). ``bounds_text``: the phrase after
    "must be " in errors (default derived from the bounds; server options carry the server's own).
    ``flag``: the CLI flag (default ``--<name-with-dashes>``; ``""``: not on the command line).
    ``prefix``: text before "must be" in errors (server options: ``--memtable-size: ``).
    """

    kind: str
    help: str
    min: float | None = None
    max: float | None = None
    min_open: bool = False
    choices: tuple | None = None
    optional: bool = False
    bounds_text: str | None = None
    flag: str | None = None
    short: str | None = None
    default_text: str | None = None
    prefix: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    def fmt(self, v) -> str:
        """A value as the tools write it (``4m``, ``5ms``, ``10000``)."""
        if v is None:
            return "none"
        if isinstance(v, str):
            return v
        if self.kind == "size":
            return arg_size(int(v))
        if self.kind == "duration":
            return arg_duration(float(v))
        if self.kind == "rate":
            return arg_rate(float(v))
        if self.kind == "rates":
            return ":".join(arg_rate(float(x)) for x in v)
        if self.kind == "float":
            return f"{v:g}"
        if self.kind == "bool":
            return "true" if v else "false"
        return str(v)

    def bounds(self) -> str | None:
        if self.bounds_text:
            return self.bounds_text
        lo, hi = self.min, self.max
        if lo is not None and hi is not None and not self.min_open:
            return f"between {self.fmt(lo)} and {self.fmt(hi)}"
        parts = []
        if lo is not None:
            parts.append(f"{'>' if self.min_open else '>='} {self.fmt(lo)}")
        if hi is not None:
            parts.append(f"<= {self.fmt(hi)}")
        return " and ".join(parts) or None

    def describe_default(self, default) -> str:
        if self.default_text is not None:
            return self.default_text
        if default is None or default == ():
            return "none"
        return self.fmt(default)


def option(default: Any, kind: str, help: str, **spec) -> Any:
    """A dataclass field with its :class:`Spec` (``default`` may be a mutable-free value only)."""
    return dataclasses.field(default=default, metadata={"spec": Spec(kind, help, **spec)})


def spec_of(f: dataclasses.Field) -> Spec | None:
    return f.metadata.get("spec")


def with_default(cls, name: str, default: Any) -> Any:
    """Field ``name`` of ``cls`` (its spec: help, bounds, flag) with another ``default``: a subclass that
    means something else by default (the CI gate's alpha) declares only that."""
    f = next((f for f in dataclasses.fields(cls) if f.name == name), None)
    if f is None:
        raise ValueError(f"{cls.__name__} has no field {name!r}")
    return dataclasses.field(default=default, metadata=f.metadata)


def _shown(raw) -> str:
    return repr(raw) if not isinstance(raw, str) else f"'{raw}'"


def convert(name: str, spec: Spec, raw):
    """``raw`` in the canonical unit of ``spec`` (raises ``ValueError`` naming ``name``)."""
    if raw is None:
        if spec.optional:
            return None
        raise ValueError(f"{name}: {spec.prefix}must be given, got None")
    k = spec.kind
    try:
        if k == "int":
            if isinstance(raw, str) and raw.strip().lstrip("-").isdigit():
                raw_n = int(raw.strip())
            else:
                raw_n = raw
            if (
                isinstance(raw_n, bool)
                or not isinstance(raw_n, (int, float))
                or (isinstance(raw_n, float) and not raw_n.is_integer())
            ):
                raise ValueError(f"{name}: {spec.prefix}expected an integer, got {_shown(raw)}")
            v = int(raw_n)
        elif k == "float":
            if isinstance(raw, bool):
                raise ValueError(f"{name}: {spec.prefix}expected a number, got {_shown(raw)}")
            try:
                # a share may be written as a percentage: "5%" is 0.05
                v = float(raw.strip()[:-1]) / 100 if isinstance(raw, str) and raw.strip().endswith("%") else float(raw)
            except (TypeError, ValueError):
                raise ValueError(f"{name}: {spec.prefix}expected a number, got {_shown(raw)}") from None
            if not math.isfinite(v):
                raise ValueError(f"{name}: {spec.prefix}expected a finite number, got {_shown(raw)}")
        elif k == "size":
            try:
                v = parse_size(raw, name)
            except ValueError:
                if not spec.prefix:
                    raise
                raise ValueError(
                    f"{name}: {spec.prefix}expected a size like 4m, 512k or 1048576, got {_shown(raw)}"
                ) from None
        elif k == "duration":
            try:
                v = parse_duration(raw, name)
            except ValueError:
                if not spec.prefix:
                    raise
                raise ValueError(
                    f"{name}: {spec.prefix}expected a duration like 5ms or 2s, got {_shown(raw)}"
                ) from None
        elif k == "rate":
            v = parse_rate(raw, name)
        elif k == "rates":
            items = raw.split(":") if isinstance(raw, str) else raw
            try:
                v = tuple(parse_rate(x, name) for x in items)
            except TypeError:
                raise ValueError(f"{name}: expected rates like 1000:5000:1000, got {_shown(raw)}") from None
            if spec.choices and len(v) not in spec.choices:
                raise ValueError(
                    f"{name}: expected {' or '.join(str(n) for n in spec.choices)} rates, got {_shown(raw)}"
                )
            if any(x <= 0 for x in v):
                raise ValueError(f"{name}: every rate must be > 0, got {_shown(raw)}")
        elif k == "bool":
            if isinstance(raw, str) and raw.lower() in ("true", "on", "yes", "1", "false", "off", "no", "0"):
                v = raw.lower() in ("true", "on", "yes", "1")
            elif isinstance(raw, bool):
                v = raw
            else:
                raise ValueError(f"{name}: {spec.prefix}expected true or false, got {_shown(raw)}")
        elif k == "enum":
            v = raw.lower() if isinstance(raw, str) else raw
            if v not in spec.choices:
                raise ValueError(
                    f"{name}: {spec.prefix}expected one of {', '.join(map(str, spec.choices))}, got {_shown(raw)}"
                )
        elif k in ("text", "path"):
            if isinstance(raw, Path):
                raw = str(raw)
            if not isinstance(raw, str) or not raw.strip():
                raise ValueError(f"{name}: {spec.prefix}expected a non-empty string, got {_shown(raw)}")
            v = raw
        else:  # texts
            if isinstance(raw, (str, bytes)):
                raise ValueError(f"{name}: must be a list of strings, got a single string {raw!r}")
            try:
                items = tuple(raw)
            except TypeError:
                raise ValueError(f"{name}: must be a list of strings, got {raw!r}") from None
            for item in items:
                if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                    raise ValueError(f"{name}: must hold strings, got {item!r}")
            v = tuple(str(x) for x in items)
    except ValueError as e:
        msg = str(e)
        if not msg.startswith(f"{name}:"):
            msg = f"{name}: {spec.prefix}{msg.removeprefix(name).lstrip(': ')}"
        raise ValueError(msg) from None
    if k in ("int", "float", "size", "duration", "rate"):
        low_bad = spec.min is not None and (v <= spec.min if spec.min_open else v < spec.min)
        high_bad = spec.max is not None and v > spec.max
        if low_bad or high_bad:
            if spec.prefix:  # a server option: the value as it would appear on the server's command line
                shown = f"'{raw}'" if isinstance(raw, str) else f"'{spec.fmt(v)}'"
            else:
                shown = _shown(raw)
            raise ValueError(f"{name}: {spec.prefix}must be {spec.bounds()}, got {shown}")
    return v


class Params:
    """Base of the parameter dataclasses: converts and checks every field on construction (and on
    :meth:`replace`), then runs the class's cross-field :meth:`_check`."""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            spec = spec_of(f)
            if spec is not None:
                object.__setattr__(self, f.name, convert(f.name, spec, getattr(self, f.name)))
        self._check()

    def _check(self) -> None:
        """Rules between fields (override)."""

    def _set(self, name: str, value) -> None:
        object.__setattr__(self, name, value)

    def replace(self, **changes):
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-friendly dict (tuples as lists)."""

        def conv(v):
            if isinstance(v, tuple):
                return [conv(x) for x in v]
            if isinstance(v, Path):
                return str(v)
            return v

        return {f.name: conv(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def describe(cls) -> list[dict]:
        """One row per field: name, kind, default, bounds, help (for docs and ``--help``)."""
        rows = []
        for f in dataclasses.fields(cls):
            spec = spec_of(f)
            if spec is None:
                continue
            default = f.default if f.default is not dataclasses.MISSING else None
            rows.append(
                {
                    "name": f.name,
                    "kind": spec.kind,
                    "default": spec.describe_default(default),
                    "bounds": spec.bounds(),
                    "choices": spec.choices,
                    "help": spec.help,
                }
            )
        return rows


# --- the command line, derived from the fields ---------------------------------------------------


def param(name: str, value, kind: str, **spec):
    """A value that is no config's field (a notebook parameter), converted and checked like one, e.g.
    ``param("max_rows", max_rows, "int", min=1)``; ``kind`` ``"texts"`` or ``"ints"`` checks a list."""
    if kind == "ints":
        items = convert(name, Spec("texts", ""), value) if not isinstance(value, (list, tuple)) else value
        return tuple(convert(f"{name}[{i}]", Spec("int", "", **spec), v) for i, v in enumerate(items))
    return convert(name, Spec(kind, "", **spec), value)


def cli_flag(f: dataclasses.Field) -> str | None:
    spec = spec_of(f)
    if spec is None or spec.flag == "":
        return None
    return spec.flag or "--" + f.name.replace("_", "-")


def add_arguments(
    parser,
    cls,
    exclude: tuple[str, ...] = (),
    dest_prefix: str = "",
    flag_prefix: str | None = None,
    flags: dict[str, str] | None = None,
) -> None:
    """One option per field of ``cls`` (``--memtable-size``...). Values stay text and are converted by
    ``cls`` itself, so the command line and Python share one validation; an option not given is left
    out and the field's default applies. ``flag_prefix`` (e.g. ``--validity-``) replaces the ``--`` of
    every flag (two classes with a field of the same name on one command); ``flags`` renames single
    fields' flags for one command."""
    flags = flags or {}
    for f in dataclasses.fields(cls):
        flag = cli_flag(f)
        if flag is None or f.name in exclude:
            continue
        spec = spec_of(f)
        if flag_prefix:
            flag = flag_prefix + flag[2:]
        flag = flags.get(f.name, flag)
        default = f.default if f.default is not dataclasses.MISSING else None
        help_text = f"{spec.help} (default {spec.describe_default(default)})".replace("%", "%%")  # argparse formats it
        names = [flag] + ([spec.short] if spec.short and not flag_prefix else [])
        dest = dest_prefix + f.name
        if spec.kind == "bool":
            parser.add_argument(*names, dest=dest, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        elif spec.kind == "texts":
            parser.add_argument(
                *names, dest=dest, action="append", default=None, metavar="TEXT", help=help_text + " (repeatable)"
            )
        else:
            metavar = {
                "size": "SIZE",
                "duration": "DUR",
                "rate": "RATE",
                "rates": "A:B[:S]",
                "int": "N",
                "float": "X",
                "enum": "|".join(map(str, spec.choices or ())),
                "path": "PATH",
            }.get(spec.kind, "TEXT")
            parser.add_argument(*names, dest=dest, default=None, metavar=metavar, help=help_text)


def from_arguments(cls, ns: argparse.Namespace, dest_prefix: str = "", **fixed):
    """Build ``cls`` from the options :func:`add_arguments` declared (only those given) plus ``fixed``."""
    kw = {}
    for f in dataclasses.fields(cls):
        v = getattr(ns, dest_prefix + f.name, None)
        if v is not None:
            kw[f.name] = tuple(v) if spec_of(f) and spec_of(f).kind == "texts" else v
    kw.update({k: v for k, v in fixed.items() if v is not None})
    return cls(**kw)
