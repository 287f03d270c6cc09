"""``ScanParams``: the course's stage 6 measured: fill a server beyond its heap, then read the whole range once
(:mod:`perflab.scan`)."""

from __future__ import annotations

from dataclasses import dataclass

from .fields import Params, option


@dataclass(frozen=True)
class ScanParams(Params):
    """How a range scan fills and reads (:func:`perflab.scan.run_scan`).

    ``fill_factor``: the data written, as a multiple of the server JVM's heap (its ``-Xmx``, asked of the JVM);
    ``value_size``: each value's bytes; ``seed``: the values' seed (:func:`perflab.server.fill.value_of`);
    ``timeout``: the longest wait for any one thing (the first byte, the next block), the whole read's deadline
    growing with the bytes expected (:func:`perflab.server.range.deadline_s`); ``heap_interval``: time between
    the heap's samples (``jstat -gc``).
    """

    fill_factor: float = option(1.25, "float", "data written, as a multiple of the server's heap", min=0.01, max=20)
    value_size: int = option(4096, "size", "bytes of each value written", min=1, max=1 << 20)
    seed: int = option(0, "int", "the values' seed", min=0)
    timeout: float = option(30.0, "duration", "longest wait for the first byte or the next block", min=0.1)
    heap_interval: float = option(0.1, "duration", "time between samples of the heap (jstat)", min=0.001, max=60)
