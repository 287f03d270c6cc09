"""Other programs' CPU (perflab.server.machine) and the wait for a quiet moment (perflab.core.quiet).

The snapshot test runs a real spinning process and checks that what the snapshots say of it is what its own CPU
clock says (the same counter, read twice), and that the caller's own process tree is left out; nothing depends on
how busy the machine is. The quiet level runs on a scripted look."""

import itertools
import os
import subprocess
import sys
import time

import pytest

from perflab.core.quiet import QuietLevel
from perflab.server import machine
from perflab.server.machine import OtherLoad


def _cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_snapshot_reads_each_process_s_own_cpu_counter():
    spin = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.time() + 30\nwhile time.time() < end: pass"]
    )
    try:
        time.sleep(0.3)
        a, c0 = machine.snapshot(), _cpu_s(spin.pid)
        time.sleep(1.0)
        b, c1 = machine.snapshot(), _cpu_s(spin.pid)
        assert b.procs[spin.pid][2] - a.procs[spin.pid][2] == pytest.approx(c1 - c0, abs=0.02)
        assert a.procs[spin.pid][1] == os.getpid() and spin.pid in a.tree({os.getpid()})
    finally:
        spin.kill()
        spin.wait()


def test_other_programs_are_everything_but_our_tree_by_name():
    # pid: (name, ppid, cpu s); 10 is us, 11 our generator, 12 our server; 20 a browser with a child 21; 30 starts
    # inside the window (it counts whole); 40 is gone by the end (its last second is lost, as it must be)
    a = machine.Snapshot(
        100.0,
        {
            10: ("python3", 1, 5.0),
            11: ("perflab-load", 10, 2.0),
            12: ("java", 10, 9.0),
            20: ("chromium", 1, 50.0),
            21: ("chromium", 20, 7.0),
            40: ("make", 1, 1.0),
        },
    )
    b = machine.Snapshot(
        102.0,
        {
            10: ("python3", 1, 5.2),
            11: ("perflab-load", 10, 3.0),
            12: ("java", 10, 12.0),
            20: ("chromium", 1, 51.0),
            21: ("chromium", 20, 7.5),
            30: ("cc1", 1, 0.5),
        },
    )
    got = machine.others(a, b, {10})
    assert got.seconds == 2.0 and got.cores == pytest.approx((1.0 + 0.5 + 0.5) / 2)
    assert got.top == (("chromium", 0.75), ("cc1", 0.25))
    # a server perflab did not start (a URL) is ours by its pid
    assert machine.others(a, b, {10, 20}).cores == pytest.approx(0.25)


def test_the_words_and_the_record():
    o = OtherLoad(1.234, 2, 0.5, (("python3", 1.2), ("chromium", 0.034), ("bash", 0.001)))
    assert o.describe() == "1.23 of 2 CPUs (python3 1.20, chromium 0.03)" and o.share == pytest.approx(0.617)
    assert OtherLoad.from_dict(o.to_dict()).describe() == o.describe()


def _looks(seq):
    """A look that takes its time and sees ``seq`` in turn (its last value from then on); ``look.count``: how
    many looks were taken."""
    seen = itertools.chain(seq, itertools.repeat(seq[-1]))

    def look(seconds):
        look.count += 1
        time.sleep(seconds)
        return OtherLoad(next(seen), 2, seconds)

    look.count = 0
    return look


def test_the_first_check_waits_for_an_idle_machine_and_learns_the_quiet_level():
    # a program keeps one CPU busy all along: the first check waits for an idle machine, gives up after its bound,
    # and takes what it saw as the level; the next checks go on beside it without waiting
    look = _looks([1.0])
    q = QuietLevel(look, margin=0.1)
    first = q.wait(0.2, max_wait_s=1.0)
    # it gave up after its bound (looks of 0.2-0.5 s: 1.2 s or so; 3 s would take a stall of 1.8 s)
    assert not first.quiet and 0.9 <= first.waited_s <= 3.0 and q.level == 1.0 and look.count >= 2
    looks = look.count
    second = q.wait(0.2, max_wait_s=5.0)
    # no waiting: the one look every check takes, nothing after it (its time on the clock is this machine's)
    assert second.quiet and look.count == looks + 1 and q.summary()["checks"] == 2


def test_a_program_that_comes_and_goes_is_waited_out():
    q = QuietLevel(_looks([0.0, 1.5, 1.4, 0.05, 0.0]), margin=0.1)
    assert q.wait(0.2, 5.0).quiet and q.level == 0.0
    check = q.wait(0.2, 5.0)  # 1.5, 1.4 busy; 0.05 within 0 + 0.1 x 2 CPUs
    assert check.quiet and check.others.cores == 0.05 and check.waited_s > 0
    assert check.row() == {
        "others_idle_cores": 0.05,
        "quiet_waited_s": round(check.waited_s, 2),
        "quiet_level": 0.0,
        "quiet": True,
    }
