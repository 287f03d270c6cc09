"""A timed load whose start was missed (a part not ready before the start time, or one that exited before
its ready line: nothing was sent) is started again, each time with a lead grown from what the miss taught,
up to ``START_TRIES``; any other failure is the load's own at once (fakes: no processes)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from perflab import LoadParams
from perflab.core import load as load_mod
from perflab.core.load import FIRST_LEAD_S, LEAD_FACTOR, MAX_LEAD_S, MIN_LEAD_S, StartMissed, lead_for
from perflab.core.session import START_TRIES, Session
from perflab.errors import LoadError


class _Load:
    """What ``Session.start_load`` reads of a ``DistributedLoad``."""

    def __init__(self, missed: bool = False, exited: Exception | None = None):
        self.missed, self.exited, self.failed_before_start = missed, exited, False

    def barrier(self):
        if self.missed:
            self.failed_before_start = True
            raise StartMissed("generator host gen1 not ready 0.10 s after the start was set")
        if self.exited is not None:
            self.failed_before_start = True

    def wait(self):
        raise self.exited


class _Session:
    start_load = Session.start_load

    def __init__(self, loads):
        self.loads, self.started = list(loads), 0

    def _start_once(self, load, out_dir, timed=None):
        self.started += 1
        return self.loads.pop(0)


def test_a_missed_start_is_tried_again_and_the_last_miss_is_the_error(tmp_path):
    ok = _Load()
    sess = _Session([_Load(missed=True), _Load(missed=True), ok])
    assert sess.start_load(LoadParams(), tmp_path) is ok and sess.started == 3 == START_TRIES
    late = LoadError("perflab-load exited with status 1: --start-at: ... was 0.134 s ago")
    sess = _Session([_Load(exited=late), ok])
    assert sess.start_load(LoadParams(), tmp_path) is ok and sess.started == 2
    sess = _Session([_Load(missed=True)] * START_TRIES)
    with pytest.raises(StartMissed, match="not ready"):
        sess.start_load(LoadParams(), tmp_path)
    assert sess.started == START_TRIES
    sess = _Session([_Load(exited=late)] * START_TRIES)
    with pytest.raises(LoadError, match="was 0.134 s ago"):
        sess.start_load(LoadParams(), tmp_path)


def test_the_lead_grows_with_the_hosts_ready_times_and_with_each_miss(monkeypatch):
    monkeypatch.setattr(load_mod, "_ready_s", {})
    hosts = SimpleNamespace(pool=SimpleNamespace(address="inproc://x"), generators=[SimpleNamespace(name="local")])
    assert lead_for(hosts) == FIRST_LEAD_S  # nothing known of these hosts yet
    load_mod._seen(hosts, 0.01)
    assert lead_for(hosts) == MIN_LEAD_S  # ready in 10 ms: the shortest lead
    load_mod._seen(hosts, 0.15)  # one slow start among quick ones: its time counts
    assert lead_for(hosts) == pytest.approx(LEAD_FACTOR * 0.15)
    lead = lead_for(hosts)
    load_mod._seen(hosts, lead)  # a miss counts as the whole lead
    assert lead_for(hosts) == pytest.approx(LEAD_FACTOR * lead)
    for _ in range(5):
        load_mod._seen(hosts, lead_for(hosts))
    assert lead_for(hosts) == MAX_LEAD_S
    for _ in range(load_mod.READY_SEEN):  # the slow times age out after READY_SEEN loads
        load_mod._seen(hosts, 0.02)
    assert lead_for(hosts) == MIN_LEAD_S


def test_other_failures_are_not_retried(tmp_path):
    class _Broken(_Load):
        def barrier(self):
            raise LoadError("generator host gen1 could not start perflab-load")

    sess = _Session([_Broken(), _Load()])
    with pytest.raises(LoadError, match="could not start"):
        sess.start_load(LoadParams(), tmp_path)
    assert sess.started == 1


def test_a_warm_up_that_missed_its_start_is_tried_again(tmp_path):
    """A cluster's warm-up is split over its entry nodes, so it has a start time though nothing of it is
    measured (``timed=False``): a miss there is retried like a measured load's (CI once failed notebook 7 on it)."""
    from perflab.core.probe import warm

    class _Done(_Load):
        def wait(self):
            return "its result"

    sess = _Session([_Load(missed=True), _Done()])
    assert warm(sess, LoadParams(), 2.0, tmp_path) == "its result" and sess.started == 2
