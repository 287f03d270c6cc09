"""`perflab report --server-cmd`: the notebooks that take your server run against a non-JVM one (the
load-only path), the others are marked not applicable on the index, and the batch still succeeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from perflab import paths

# make test-all: the course report (tests/report/test_report_course.py) takes the same notebooks' foreign path in
# `make test`; this one adds a server that is not a JVM (a minute of notebooks)
pytestmark = pytest.mark.slow

TINY = {
    "name": "tiny-foreign",
    "notebooks": [
        {
            "notebook": "01-stable-load",
            "parameters": {
                "duration": 1,
                "warmup": 1,
                "put_rate": 300,
                "get_rate": 300,
                "connections": [1, 4],
                "prefill_keys": 2000,
                "profile_events": "cpu",
            },
        },
        {
            "notebook": "02-breakpoint",
            "parameters": {
                "probe_duration": 1,
                "warmup": 1,
                "ramp_duration": 2,
                "connections": [4],
                "start_rate": 200,
                "repeats": 1,
                "max_probes": 2,
                "prefill_keys": 2000,
                "include_ceiling": False,
                "sla_p99": "200ms",
                "sustain": 1,
                "hold_windows": 1,
                "sustain_tries": 2,
                "quiet_wait": 1,
            },
        },
        {"notebook": "05-storage", "parameters": {}},
    ],
}


def test_report_for_a_foreign_server(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(TINY))
    env = {**os.environ, "PERFLAB_DATA": str(tmp_path / "data"), "PERFLAB_REPORT": str(tmp_path / "report")}
    cmd = f"{sys.executable} tests/servers/tiny_kv.py {{port}}"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "perflab",
            "report",
            "--plan",
            str(plan),
            "--no-progress",
            "--no-browser",
            "--server-cmd",
            cmd,
            "--ready-path",
            "/health",
            "--script-args",
            "path=/kv param=key",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=str(paths.repo_root()),
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    index = Path(proc.stdout.strip().splitlines()[-1])
    data = json.loads((index.parent / "report.json").read_text())
    by = {n["notebook"]: n for n in data["notebooks"]}
    assert data["target"] == f"your server ({cmd})" and data["failed"] == []
    for name in ("01-stable-load", "02-breakpoint"):
        assert by[name]["status"] == "ok", by[name]["error"]
        assert by[name]["effective_parameters"]["server_cmd"] == repr(cmd)
        assert by[name]["runs"], f"{name} recorded no run"
        for run in by[name]["runs"]:
            meta = json.loads((index.parent / run["path"] / "meta.json").read_text())
            assert meta["params"]["target"] == "foreign" and meta["params"]["server"]["command"] == cmd, meta
    assert by["05-storage"]["status"] == "not applicable"
    assert by["05-storage"]["runs"] == [] and by["05-storage"]["html"] is None
    page = index.read_text()
    assert "1 of 3 notebooks do not apply to your server" in page
    assert "swaps storage engines and their tuning through server options" in page
