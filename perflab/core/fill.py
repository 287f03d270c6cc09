"""Data for any target before a load reads it: ``key0 .. key<N-1>`` written once each through its API.

The built-in server can be prefilled in-process (its storage files written before it starts); a fill works
for every target, yours and a cluster too (a cluster's entry nodes with its ack/from, then settled), and
takes the load's own API and values (the script's ``path=``, ``param=``, ``prefix=``, ``value=``, ``seed=``),
so what the load reads is what was written. The fill is recorded in the run (``meta.json["fill"]``).
"""

from __future__ import annotations

from ..config import LoadParams


def fill(sess, keys: int, load: LoadParams) -> dict:
    """Write ``keys`` keys into ``sess``'s target for ``load`` (see the module docstring); the fill's row."""
    if isinstance(keys, bool) or not isinstance(keys, int) or keys < 1:
        raise ValueError(f"fill: a number of keys >= 1, got {keys!r}")
    row = sess.handle.fill(
        keys,
        int(load.script_arg("value", "100")),
        int(load.script_arg("seed", "0")),
        load.script_arg("prefix", "key"),
        *load.entity_api,
    )
    sess.run.update(fill=row)
    return row


def check_fill(keys) -> None:
    """``keys`` is a number of keys to fill (or ``None``), else ``ValueError``; before anything starts."""
    if keys is not None and (isinstance(keys, bool) or not isinstance(keys, int) or keys < 1):
        raise ValueError(f"fill: a number of keys >= 1, got {keys!r}")
