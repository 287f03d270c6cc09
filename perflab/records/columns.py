"""The SQL type of each index column, from the values the runs wrote, widened as more runs arrive.

The index is built a few runs at a time (:mod:`.index`), so a column's type is decided from the values seen so
far and only ever widens, to the type a build from every run at once gives: whole numbers stay ``BIGINT``
while every row has one (a gap makes them ``DOUBLE``, as pandas makes a column of ints with a missing value
floats, and a reader testing ``isnan`` keeps working); numbers with a fraction are ``DOUBLE``; ``true`` and
``false`` are ``BOOLEAN``; text, and lists and objects (as their JSON), are ``VARCHAR``; and a column whose
values mix these kinds (a parameter that was a number in one run and text in another) becomes text, every
value as Python writes it (``256``, ``256m``, ``True``), so DuckDB can hold it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

#: the kinds a column can be, and the SQL type each is stored as ("null": no value seen yet, see :attr:`Column.sql`)
SQL_TYPE = {"null": '"NULL"', "int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN", "str": "VARCHAR"}
#: the pandas type each kind's values are handed to DuckDB in
_DTYPE = {"null": object, "int": "int64", "float": "float64", "bool": object, "str": object}
_INT64 = (-(2**63), 2**63 - 1)
_KIND = {bool: "bool", int: "int", float: "float", str: "str", type(None): None}


def gather(rows: list[dict]) -> dict[str, tuple[list, bool]]:
    """Each column of ``rows``, in the order first seen: its values (one per row, ``None`` where a row lacks
    it; lists and objects as their JSON text) and whether some row lacks it."""
    n = len(rows)
    cols: dict[str, list] = {}
    counts: dict[str, int] = {}
    for i, r in enumerate(rows):
        for k, v in r.items():
            col = cols.get(k)
            if col is None:
                col = cols[k] = [None] * n
                counts[k] = 0
            col[i] = json.dumps(v) if v.__class__ in (list, dict) else v
            counts[k] += 1
    return {k: (col, counts[k] < n) for k, col in cols.items()}


def kinds_of(values: list) -> set[str]:
    """The kinds of a column's values (:func:`gather`), missing ones left out; an integer too large for
    ``BIGINT`` is a float."""
    types = set(map(type, values))
    kinds = {_KIND.get(t, "str") for t in types} - {None}
    if int in types:
        ints = [v for v in values if v.__class__ is int]
        if min(ints) < _INT64[0] or max(ints) > _INT64[1]:
            kinds.add("float")
    return kinds


@dataclass(frozen=True)
class Column:
    """One column's kind, whether some row has no value in it (``gaps``: a null, or the row lacks the column)
    and whether some row lacks it (``absent``)."""

    kind: str = "null"
    gaps: bool = False
    absent: bool = False

    @property
    def sql(self) -> str:
        """The SQL type; a column of nulls alone is ``"NULL"``, or ``DOUBLE`` where some row lacks it (a build
        from every run at once types such a column so too)."""
        return "DOUBLE" if self.kind == "null" and self.absent else SQL_TYPE[self.kind]

    def widened(self, kinds: set[str], gaps: bool, absent: bool) -> Column:
        """This column after rows with values of ``kinds`` were added; ``gaps``: one of them had no value in
        it, ``absent``: one of them lacked it."""
        gaps, absent = self.gaps or gaps or absent, self.absent or absent
        seen = kinds | ({self.kind} - {"null"})
        if not seen:
            kind = "null"
        elif seen == {"int"}:
            kind = "float" if gaps else "int"
        elif seen <= {"int", "float"}:
            kind = "float"
        elif len(seen) == 1:
            kind = next(iter(seen))
        else:
            kind = "str"
        return Column(kind, gaps, absent)

    def stored(self, values: list) -> pd.Series:
        """A column's values (:func:`gather`) as this column stores them, to hand to DuckDB: a text column takes
        every value as Python writes it."""
        if self.kind == "str" and any(v is not None and v.__class__ is not str for v in values):
            values = [v if v is None or v.__class__ is str else str(v) for v in values]
        return pd.Series(values, dtype=_DTYPE[self.kind])

    def cast_from(self, old: Column, name: str) -> str:
        """The SQL expression that turns column ``name``'s stored values of kind ``old`` into this kind
        (booleans become ``True``/``False``, as Python writes them, when a column becomes text)."""
        col = f'"{name}"'
        if self.kind == "str" and old.kind == "bool":
            return f"CASE WHEN {col} IS NULL THEN NULL WHEN {col} THEN 'True' ELSE 'False' END"
        return f"CAST({col} AS {self.sql})"
