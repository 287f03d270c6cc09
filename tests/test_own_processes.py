"""The ``own_processes`` fixture finds what a test started, a grandchild left behind in a session of its own
too, and nothing that another test started from the same command."""

from __future__ import annotations

import os
import subprocess
import sys

from support import TOKEN_ENV

SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]


def test_a_test_sees_its_own_orphan_and_not_a_neighbours_process(own_processes):
    neighbour = subprocess.Popen(SLEEP, env={**os.environ, TOKEN_ENV: "another test"})
    # a shell that starts the sleep in a new session and exits at once: the sleep is an orphan of init
    subprocess.run(["setsid", "sh", "-c", " ".join(SLEEP[:2]) + ' "import time; time.sleep(60)" &'], check=True)
    try:
        mine = own_processes()
        assert len(mine) == 1 and mine[0].pid != neighbour.pid and mine[0].ppid() != os.getpid(), mine
        mine[0].kill()
        mine[0].wait(10)
        assert own_processes() == []
    finally:
        neighbour.kill()
        neighbour.wait()
