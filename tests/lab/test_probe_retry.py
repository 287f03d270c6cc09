"""A probe whose generator missed the start time set ahead (it exited before its ready line: nothing was sent)
is tried once more; any other failure, and a second miss, are the probe's own (fakes: no processes)."""

from __future__ import annotations

import pytest

from perflab import LoadParams
from perflab.core.probe import probe
from perflab.errors import LoadError
from perflab.measure.validity import Level, Validity


class _Load:
    def __init__(self, outcome, before_start):
        self.outcome, self.failed_before_start, self.started_at = outcome, before_start, 1.0

    def wait(self):
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


class _Result:
    intervals = __import__("pandas").DataFrame()

    def record(self):
        return {"p50_ms": 1.0}


class _Run:
    def __init__(self, d):
        self.dir, self.rows = d, []

    def add_rows(self, table, rows):
        self.rows += rows


class _Session:
    def __init__(self, tmp_path, loads):
        self.loads, self.started = list(loads), 0
        self.run = _Run(tmp_path)

    def start_load(self, load, out_dir):
        self.started += 1
        return self.loads.pop(0)

    def validity(self, res, started_at):
        return Validity(Level.VALID, [], {})


def test_a_missed_start_is_tried_once_more(tmp_path):
    late = LoadError("perflab-load exited with status 1: --start-at: ... was 0.134 s ago")
    sess = _Session(tmp_path, [_Load(late, True), _Load(_Result(), False)])
    got = probe(sess, LoadParams(), tmp_path / "p")
    assert sess.started == 2 and got.load.record() == {"p50_ms": 1.0} and len(sess.run.rows) == 1
    sess = _Session(tmp_path, [_Load(late, True), _Load(late, True)])
    with pytest.raises(LoadError):
        probe(sess, LoadParams(), tmp_path / "p")
    assert sess.started == 2
    sess = _Session(tmp_path, [_Load(LoadError("perflab-load exited with status 1 mid-run"), False)])
    with pytest.raises(LoadError, match="mid-run"):
        probe(sess, LoadParams(), tmp_path / "p")
    assert sess.started == 1 and not sess.run.rows
