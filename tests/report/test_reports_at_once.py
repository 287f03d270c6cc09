"""Two reports at once in one checkout: each notebook's kernel talks to its batch over IPC sockets in a
directory of its own. They were named in the notebooks' directory, so kernels started at once by two batches
picked the same sockets and read each other's messages ("Invalid Signature": the other batch's key)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from perflab import paths

PLAN = {"name": "at-once", "notebooks": [{"notebook": "06-summary", "parameters": {}}]}


def test_two_reports_started_together_both_run_their_notebooks(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    procs = []
    for side in ("a", "b"):
        env = {
            **os.environ,
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


def test_a_report_runs_its_notebooks_from_a_temporary_directory_too_deep_for_unix_sockets(tmp_path):
    # pytest's own under xdist was (its kernel could not bind its sockets there, and the report waited on it)
    deep = tmp_path / ("a-temporary-directory-deeper-than-a-unix-socket-path-may-be-" + "x" * 40)
    deep.mkdir()
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    env = {
        **os.environ,
        "TMPDIR": str(deep),
        "PERFLAB_DATA": str(tmp_path / "data"),
        "PERFLAB_REPORT": str(tmp_path / "report"),
    }
    r = subprocess.run(
        [sys.executable, "-m", "perflab", "report", "--plan", str(plan), "--no-progress", "--no-browser"],
        env=env,
        cwd=str(paths.repo_root()),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0 and "06-summary: ok" in r.stderr, r.stderr[-3000:]
    assert os.listdir(deep) == []
