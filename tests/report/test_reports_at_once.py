"""Two reports at once in one checkout: each notebook's kernel talks to its batch over IPC sockets in a
directory of its own. They were named in the notebooks' directory, so kernels started at once by two batches
picked the same sockets and read each other's messages ("Invalid Signature": the other batch's key). One of the
two runs from a $TMPDIR too deep for a socket's path: its kernel's sockets go to /tmp instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from perflab import paths

PLAN = {"name": "at-once", "notebooks": [{"notebook": "06-summary", "parameters": {}}]}


def test_two_reports_started_together_both_run_their_notebooks_one_from_a_too_deep_temporary_directory(tmp_path):
    # the second one's $TMPDIR is too deep for a Unix socket's path, as pytest's own under xdist was (its kernel
    # could not bind its sockets there, and the report waited on it); one pair of reports checks both, a report
    # fewer for the suite (a kernel and perflab's imports: some 8 CPU-s)
    deep = tmp_path / ("a-temporary-directory-deeper-than-a-unix-socket-path-may-be-" + "x" * 40)
    deep.mkdir()
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    procs = []
    for side, tmp in (("a", {}), ("b", {"TMPDIR": str(deep)})):
        env = {
            **os.environ,
            **tmp,
            "PERFLAB_DATA": str(tmp_path / side / "data"),
            "PERFLAB_REPORT": str(tmp_path / side / "report"),
        }
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "perflab", "report", "--plan", str(plan), "--no-progress", "--no-browser"],
                env=env,
                cwd=str(paths.repo_root()),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        assert "06-summary: ok" in err, err[-3000:]
    assert not list((paths.repo_root() / "notebooks").glob("kernel-ipc*")), "no socket left in the notebooks"
    assert os.listdir(deep) == []
