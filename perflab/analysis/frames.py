"""Tables of results, one row per run or search, keyed as the notebook keyed them: a label (index ``run``
or ``search``), or a tuple such as ``(workers, queue)`` with ``index=("workers", "queue")``; every number
next to how far it can be trusted (the validity level)."""

from __future__ import annotations

import pandas as pd


def keyed(rows: list[dict], keys: list, index) -> pd.DataFrame:
    """``rows`` as a table indexed by ``index``, the name (or names) of the parts of ``keys``."""
    names = [index] if isinstance(index, str) else list(index)
    for row, key in zip(rows, keys):
        parts = key if isinstance(key, tuple) else (key,)
        if len(parts) != len(names):
            raise ValueError(f"index {tuple(names)} does not fit the key {key!r}")
        row.update(dict(zip(names, parts)))
    columns = names + [c for c in (rows[0] if rows else {}) if c not in names]
    return pd.DataFrame(rows, columns=columns).set_index(names)


def validity_text(r) -> str:
    """A result's validity level with its first reason, or 'not assessed'."""
    v = getattr(r, "validity", None)
    return v.badge if v is not None else "not assessed"


def events_of(r) -> pd.DataFrame:
    """A run's server events (an empty table when it recorded none)."""
    ev = getattr(r, "events", None)
    return ev if ev is not None and len(ev) else pd.DataFrame(columns=["event", "dur_ms"])


def markdown_table(df: pd.DataFrame) -> str:
    """``df`` as a Markdown (GitHub) table, numbers as the notebook shows them (pandas' display float format),
    its index as the first columns when it has a name."""
    if df.index.names != [None]:
        df = df.reset_index()
    fmt_float = pd.get_option("display.float_format") or (lambda v: f"{v:g}")

    def cell(v) -> str:
        if isinstance(v, float):
            text = "" if v != v else fmt_float(v)
        else:
            text = "" if v is None else str(v)
        return text.replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(cell(c) for c in df.columns) + " |"
    rule = "| " + " | ".join("---:" if pd.api.types.is_numeric_dtype(t) else "---" for t in df.dtypes) + " |"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *rows])
