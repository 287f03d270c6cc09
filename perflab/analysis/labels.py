"""What runs, searches and configurations are called everywhere in a notebook: its dict keys, table
rows, legends and sentences use these words, so one load reads the same in all of them."""

from __future__ import annotations

from .. import fmt

__all__ = ["load", "executor", "memtable", "row"]


def load(op: str, connections: int, placement: str | None = None) -> str:
    """A run or a search: 'PUT, 1 connection', 'GET, 64 connections [split]' (the placement when a notebook
    measures several)."""
    return f"{op}, {fmt.count(connections, 'connection')}" + (f" [{placement}]" if placement else "")


def executor(workers: int, queue: int) -> str:
    """An executor configuration: '2 workers, queue 128'."""
    return f"{fmt.count(workers, 'worker')}, queue {queue}"


def memtable(memtable_size: str, flush_threads: int) -> str:
    """A storage configuration: 'memtable 4m, 2 flush threads'."""
    return f"memtable {memtable_size}, {fmt.count(flush_threads, 'flush thread')}"


def row(breakpoint_row: dict) -> str:
    """A breakpoint row's workload and connections, short (figures, the summary): 'GET, 64 conn'."""
    conns = breakpoint_row.get("connections")
    return str(breakpoint_row.get("workload")) + (f", {conns} conn" if conns else "")
