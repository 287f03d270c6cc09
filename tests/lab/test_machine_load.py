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


def test_a_program_that_is_not_ours_is_counted_with_its_name_and_ours_is_not():
    spin = subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 30\nwhile time.time() < end: pass"])
    try:
        time.sleep(0.3)
        a, c0 = machine.snapshot(), _cpu_s(spin.pid)
        time.sleep(1.0)
        b, c1 = machine.snapshot(), _cpu_s(spin.pid)
        name = a.procs[spin.pid][0]
        used = b.procs[spin.pid][2] - a.procs[spin.pid][2]
        assert used == pytest.approx(c1 - c0, abs=0.02)   # the snapshots read the process's own counter
        # counted when it is not descended from the roots given (another program), under its name (with any other
        # process of that name), and left out when it is ours: a child of this process
        theirs = machine.others(a, b, {1 << 30})
        mine = machine.others(a, b, {os.getpid()})
        assert spin.pid in a.tree({os.getpid()}) and theirs.cpus == os.cpu_count()
        assert (dict(theirs.top)[name] - dict(mine.top).get(name, 0.0)) * theirs.seconds == pytest.approx(used, abs=0.02)
        assert theirs.cores - mine.cores == pytest.approx(used / theirs.seconds, abs=0.03)  # and this idle test
    finally:
        spin.kill()
        spin.wait()


def test_the_words_and_the_record():
    o = OtherLoad(1.234, 2, 0.5, (("python3", 1.2), ("chromium", 0.034), ("bash", 0.001)))
    assert o.describe() == "1.23 of 2 CPUs (python3 1.20, chromium 0.03)" and o.share == pytest.approx(0.617)
    assert OtherLoad.from_dict(o.to_dict()).describe() == o.describe()


def _looks(seq):
    """A look that takes its time and sees ``seq`` in turn (its last value from then on)."""
    seen = itertools.chain(seq, itertools.repeat(seq[-1]))

    def look(seconds):
        time.sleep(seconds)
        return OtherLoad(next(seen), 2, seconds)
    return look


def test_the_first_check_waits_for_an_idle_machine_and_learns_the_quiet_level():
    # a program keeps one CPU busy all along: the first check waits for an idle machine, gives up after its bound,
    # and takes what it saw as the level; the next checks go on beside it without waiting
    q = QuietLevel(_looks([1.0]), margin=0.1)
    first = q.wait(0.2, max_wait_s=1.0)
    assert not first.quiet and 0.9 <= first.waited_s <= 3.0 and q.level == 1.0
    second = q.wait(0.2, max_wait_s=5.0)
    assert second.quiet and second.waited_s < 0.1 and q.summary()["checks"] == 2


def test_a_program_that_comes_and_goes_is_waited_out():
    q = QuietLevel(_looks([0.0, 1.5, 1.4, 0.05, 0.0]), margin=0.1)
    assert q.wait(0.2, 5.0).quiet and q.level == 0.0
    check = q.wait(0.2, 5.0)           # 1.5, 1.4 busy; 0.05 within 0 + 0.1 x 2 CPUs
    assert check.quiet and check.others.cores == 0.05 and check.waited_s > 0
    assert check.row() == {"others_idle_cores": 0.05, "quiet_waited_s": round(check.waited_s, 2), "quiet_level": 0.0,
                           "quiet": True}
