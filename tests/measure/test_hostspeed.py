"""The machine's own speed: real calibrations on every CPU, the summary on synthetic ones, the validity check
and ``perflab host``."""

import os
import subprocess
import sys
import time

import pytest
from test_validity import result

from perflab import hostspeed
from perflab.config import ValidityThresholds
from perflab.hostspeed import Calibration
from perflab.measure.validity import assess

CPUS = sorted(os.sched_getaffinity(0))


def test_calibrate_times_the_loop_on_every_cpu():
    t0 = time.time()
    cal = hostspeed.calibrate(0.05)
    assert sorted(cal.us) == CPUS
    assert t0 <= cal.at <= time.time()
    # 10,000 empty iterations: tens of microseconds on the fastest machine, milliseconds on the slowest
    assert all(10 < us < 50_000 for us in cal.us.values()), cal
    assert Calibration.from_dict(cal.to_dict()).us == pytest.approx(cal.us, abs=0.06)
    one = hostspeed.calibrate(0.05, on=[CPUS[-1]])
    assert list(one.us) == [CPUS[-1]]


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"seconds": 0}, "seconds"),
        ({"seconds": 61}, "seconds"),
        ({"on": [max(CPUS) + 1]}, "subset"),
        ({"on": []}, "subset"),
    ],
)
def test_calibrate_refuses_bad_arguments(kwargs, words):
    with pytest.raises(ValueError, match=words):
        hostspeed.calibrate(**{"seconds": 0.05, **kwargs})


def _cals(values):
    return [Calibration(float(i), {0: a, 1: b}) for i, (a, b) in enumerate(values)]


def test_a_steady_machine_is_called_steady():
    cals = _cals([(300, 310), (305, 300), (320, 302), (299, 315)])
    s = hostspeed.summarise(cals)
    assert s["spread"] == pytest.approx(320 / 299) and s["slow_share"] == 0
    assert s["cpus"][0]["median_us"] == pytest.approx(302.5) and s["cpus"][1]["slowest_us"] == 315
    assert hostspeed.describe(s).startswith("steady")


def test_a_machine_with_two_speeds_is_not():
    # what this project's shared 2-vCPU host shows: the same loop at ~300 us or ~600 us, for seconds at a time
    cals = _cals([(300, 600), (600, 600), (300, 300), (610, 290)])
    s = hostspeed.summarise(cals)
    assert s["spread"] == pytest.approx(610 / 290)
    assert s["slow_share"] == pytest.approx(4 / 8) and s["cpus"][0]["slow_share"] == pytest.approx(0.5)
    text = hostspeed.describe(s)
    assert text.startswith("not steady") and "2.10x" in text and "50%" in text
    assert hostspeed.spread([]) is None
    with pytest.raises(ValueError, match="no calibrations"):
        hostspeed.summarise([])


def test_the_validity_check_holds_the_window_against_the_session():
    session = _cals([(300, 305), (310, 600), (590, 300)])
    t = ValidityThresholds()
    calm = assess(result(), host=(session[:1], session)).checks["host_speed"]
    assert calm.status == "ok" and calm.value == pytest.approx(305 / 300)
    slow = assess(result(), host=(session[1:], session))
    assert slow.checks["host_speed"].status == "warn" and slow.checks["host_speed"].value == pytest.approx(2.0)
    assert slow.level == "suspect" and any("machine itself ran slower" in r for r in slow.reasons)
    # a looser threshold lets it pass; without calibrations the check is n/a, not ok
    assert (
        assess(result(), host=(session[1:], session), thresholds=t.replace(host_speed_warn=2.5))
        .checks["host_speed"]
        .status
        == "ok"
    )
    assert assess(result()).checks["host_speed"].status == "n/a"
    with pytest.raises(ValueError, match="host_speed_warn"):
        t.replace(host_speed_warn=1.0)


def _perflab(*args):
    return subprocess.run([sys.executable, "-m", "perflab", *args], capture_output=True, text=True, timeout=120)


def test_perflab_host_surveys_and_writes_json(tmp_path):
    out = tmp_path / "host.json"
    p = _perflab("host", "--seconds", "1", "--every", "0.25", "--sample", "0.05", "--json", str(out))
    assert p.returncode == 0, p.stderr
    rows = [ln.split() for ln in p.stdout.splitlines() if ln.split() and ln.split()[0].isdigit()]
    assert [int(r[0]) for r in rows] == CPUS and all(int(r[1]) >= 2 for r in rows)
    assert "steady" in p.stdout
    import json

    d = json.loads(out.read_text())
    assert d["n"] == len(d["calibrations"]) >= 2 and set(d["cpus"]) == {str(c) for c in CPUS}


@pytest.mark.parametrize(
    "args, words", [(["--seconds", "0"], "--seconds"), (["--every", "0.1", "--sample", "0.2"], "--sample")]
)
def test_perflab_host_refuses_bad_arguments(args, words):
    p = _perflab("host", *args)
    assert p.returncode == 2 and words in p.stderr and "error" in p.stderr
