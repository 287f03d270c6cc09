"""The validity record on synthetic results: each check fires on what it is about, and only then."""

import pandas as pd
import pytest

from perflab import LoadParams, SessionOptions
from perflab.config import ValidityThresholds
from perflab.measure.result import LoadResult
from perflab.measure.validity import OVERLOAD_SYMPTOMS, Level, Validity, assess
from perflab.server.cpu import CpuWindow
from perflab.server.placement import Placement


class _Hdr:
    def __init__(self, df):
        self.intervals = df


def _intervals(p50s, p99s=None, count=1000):
    n = len(p50s)
    return pd.DataFrame(
        {
            "tag": "corrected",
            "start_s": [i * 0.1 for i in range(n)],
            "end_s": [(i + 1) * 0.1 for i in range(n)],
            "count": count,
            "p50_ms": p50s,
            "p99_ms": p99s if p99s is not None else [2 * x for x in p50s],
        }
    )


def result(
    rate=10_000,
    achieved=10_000,
    p99_us=2000,
    lag_p99_us=20,
    threads_cpu=(0.3, 0.3),
    runq=0.01,
    p50s=None,
    p99s=None,
    errors=None,
    codes=None,
    params=None,
    duration=10.0,
):
    p50s = p50s if p50s is not None else [1.0] * 100
    summary = {
        "target_rate": rate,
        "achieved_rate": achieved,
        "requests": int(achieved * duration),
        "duration_s": duration,
        "errors": errors or {"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 0},
        "status_codes": codes or {"200": int(achieved * duration)},
        "latency_us": {"p50": 1000, "p99": p99_us, "p99.9": p99_us * 2, "p100": p99_us * 3},
        "schedule_lag_us": {"mean": lag_p99_us / 3, "p50": lag_p99_us / 4, "p99": lag_p99_us, "max": lag_p99_us * 2},
        "cpu": {
            "user_s": 1,
            "sys_s": 1,
            "threads": [
                {
                    "tid": i,
                    "name": f"w{i}",
                    "user_s": c * duration / 2,
                    "sys_s": c * duration / 2,
                    "runqueue_wait_s": runq * duration,
                }
                for i, c in enumerate(threads_cpu)
            ],
        },
    }
    return LoadResult(
        params or LoadParams(rate=rate, duration=duration),
        "http://x",
        [],
        0,
        "",
        summary,
        hdr=_Hdr(_intervals(p50s, p99s)),
    )


def window(cores=0.8, busy=0.5):
    return CpuWindow(0, 10, cores * 10, cores, 100 << 20, busy, 2)


def test_a_clean_run_is_valid():
    v = assess(result(), window(), Placement.of("shared"))
    assert v.level == "valid" and v.reasons == [] and not v.generator_bound
    assert {c.status for c in v.checks.values()} <= {"ok", "n/a"}
    assert set(v.checks) >= {
        "achieved_rate",
        "schedule_lag",
        "generator_cpu",
        "generator_runqueue",
        "server_cpu",
        "machine_cpu",
        "cpu_sharing",
        "first_interval",
        "stationarity",
        "errors",
    }


def test_a_saturated_generator_thread_makes_the_run_invalid():
    v = assess(result(threads_cpu=(0.97, 0.4)), window())
    assert v.level == "invalid" and v.generator_bound
    assert v.checks["generator_cpu"].status == "fail" and "97% of a core" in v.reasons[0]


def test_generator_lag_that_is_most_of_the_latency_is_invalid():
    v = assess(result(p99_us=2000, lag_p99_us=1500), window())
    assert v.level == "invalid" and v.checks["schedule_lag"].status == "fail"
    warn = assess(result(p99_us=2000, lag_p99_us=400), window())
    assert warn.level == "suspect" and warn.checks["schedule_lag"].status == "warn"
    tiny = assess(result(p99_us=100, lag_p99_us=90), window())  # below the floor: never matters
    assert tiny.checks["schedule_lag"].status == "ok"


@pytest.mark.parametrize(
    "kw, check",
    [
        (dict(achieved=9_000), "achieved_rate"),
        (dict(runq=0.3), "generator_runqueue"),
        (dict(p50s=[10.0] + [1.0] * 99, p99s=[30.0] + [2.0] * 99), "first_interval"),
        (dict(p50s=[1.0 + i * 0.05 for i in range(100)]), "stationarity"),
        (dict(errors={"connect": 0, "read": 500, "write": 0, "timeout": 0, "status": 0}), "errors"),
        # a 5xx is an error and an answer that did not serve the request
        (
            dict(
                codes={"200": 99000, "503": 1000},
                errors={"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 1000},
            ),
            ("served", "errors"),
        ),
    ],
)
def test_each_warning_makes_the_run_suspect(kw, check):
    checks = check if isinstance(check, tuple) else (check,)
    v = assess(result(**kw), window())
    assert v.level == "suspect" and all(v.checks[c].status == "warn" for c in checks), v.to_dict()
    assert [c for c, x in v.checks.items() if x.status == "warn"] == list(checks)


def test_a_run_answered_with_504s_says_so_and_never_reads_as_held():
    """Every request answered, at the offered rate, in time: and every answer a 504 (a cluster without its
    quorum). The rate is achieved; what was served is not: not one request, so the run is invalid as a
    measure of serving, and the record says so first."""
    v = assess(
        result(codes={"504": 100_000}, errors={"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 100_000}),
        window(),
    )
    s = v.checks["served"]
    assert v.checks["achieved_rate"].status == "ok" and s.status == "fail" and s.value == 1.0
    assert "100,000 x 504" in s.note and "0/s served" in s.note and "not one request was served" in s.note
    assert v.level is Level.INVALID and v.reasons[0] == s.note
    some = assess(result(codes={"201": 90_000, "504": 10_000}), window())
    assert some.checks["served"].status == "warn" and some.level is not Level.INVALID
    ok = assess(result(codes={"200": 50000, "404": 50000}), window())
    assert ok.checks["served"].status == "ok"
    assert "served" in OVERLOAD_SYMPTOMS, "a probe answered with 504s fails; it is not inconclusive"


def test_404s_are_misses_not_errors_and_a_read_of_an_empty_store_is_invalid():
    v = assess(
        result(
            codes={"200": 50000, "404": 50000},
            errors={"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 50000},
        ),
        window(),
    )
    assert v.checks["errors"].status == "ok" and v.checks["served"].status == "ok"
    h = v.checks["hits"]
    assert h.status == "fail" and h.value == 0.5 and v.level is Level.INVALID
    assert "50.0% of 100,000 reads found their key (50,000 answered 404)" in h.note and "fill it first" in h.note
    full = assess(result(codes={"200": 99_950, "404": 50}), window())
    assert full.checks["hits"].status == "ok"
    asked = assess(
        result(codes={"200": 10, "404": 99_990}, params=LoadParams(rate=10_000, duration=10.0, allow_misses=True)),
        window(),
    )
    assert asked.checks["hits"].status == "n/a" and "asks for misses" in asked.checks["hits"].note
    puts = assess(result(codes={"201": 100_000}), window())
    assert puts.checks["hits"].status == "n/a"


def test_a_busy_machine_and_placement_are_recorded():
    v = assess(result(), window(busy=0.99), Placement("split", (0,), (1,)))
    assert v.checks["machine_cpu"].status == "warn" and "competed" in v.checks["machine_cpu"].note
    assert v.checks["cpu_sharing"].value is False and "server on CPUs [0]" in v.checks["cpu_sharing"].note
    assert v.checks["server_cpu"].note == "the server used 0.80 cores (80% of the 1 CPU it was placed on)"


def test_missing_data_is_not_applicable_not_ok():
    r = result()
    r.summary.pop("schedule_lag_us")
    r.summary.pop("cpu")
    v = assess(r, None)
    for name in ("schedule_lag", "generator_cpu", "generator_runqueue", "server_cpu", "machine_cpu"):
        assert v.checks[name].status == "n/a", name
    ramp = assess(result(params=LoadParams(ramp=(100, 1000), duration=10)), window())
    assert ramp.checks["stationarity"].status == "n/a"


def test_thresholds_are_parameters_and_the_record_round_trips():
    strict = ValidityThresholds(generator_cpu_warn=0.2, generator_cpu_fail=0.25)
    v = assess(result(threads_cpu=(0.3, 0.1)), window(), thresholds=strict)
    assert v.level == "invalid"
    again = Validity.from_dict(v.to_dict())
    assert again.level == v.level and again.reasons == v.reasons and again.generator_bound
    with pytest.raises(ValueError, match="thresholds must be a ValidityThresholds"):
        SessionOptions(thresholds={"generator_cpu_fail": 0.5})  # checked once, where a session's are given


def test_a_failing_probe_s_overload_is_its_finding_not_a_doubt():
    from perflab.measure.judgement import evaluate

    # over capacity: 82% achieved and p50 climbing, the generator fine -> fails, and its measurement is valid
    over = result(rate=2300, achieved=1890, p50s=[1.0 + i for i in range(100)], p99s=[20.0 + i for i in range(100)])
    v = assess(over, window(), Placement.of("shared"))
    assert v.level == "suspect" and {"achieved_rate", "stationarity"} <= {
        k for k, c in v.checks.items() if c.status == "warn"
    }
    verdict = evaluate(over, validity=v)
    assert verdict.passed is False and verdict.validity["verdict"] == "valid" and verdict.validity["reasons"] == []
    assert verdict.validity["checks"]["achieved_rate"]["status"] == "warn"  # kept in the record
    # a doubt about the machine stays a doubt
    busy = evaluate(over, validity=assess(over, window(busy=0.99), Placement.of("shared")))
    assert busy.passed is False and busy.validity["verdict"] == "suspect"
    # and a saturated generator still makes it inconclusive, never the server failing
    gen = evaluate(
        result(rate=2300, achieved=1890, threads_cpu=(0.99, 0.5)),
        validity=assess(result(rate=2300, achieved=1890, threads_cpu=(0.99, 0.5)), window()),
    )
    assert gen.passed is None
    # a passing probe keeps its doubts about the machine, but a late generator does not void the pass:
    # its lateness is inside the corrected latency that met the SLA
    ok = result()
    assert evaluate(ok, validity=assess(ok, window(busy=0.99))).validity["verdict"] == "suspect"
    late = result(p99_us=2000, lag_p99_us=1500)
    assert assess(late, window()).level == "invalid"
    passed = evaluate(late, validity=assess(late, window()))
    assert passed.passed is True and passed.validity["verdict"] == "valid"
    assert passed.validity["checks"]["schedule_lag"]["status"] == "fail"  # kept in the record


def _others(cores, top=(("python3", 1.0),)):
    from perflab.server.machine import OtherLoad

    return CpuWindow(0, 10, 8.0, 0.8, 100 << 20, 0.9, 2, OtherLoad(cores, 2, 10.0, top))


def test_other_programs_beyond_the_quiet_level_make_a_probe_invalid():
    t = ValidityThresholds()
    # a program that kept one of the two CPUs busy all along is the machine's quiet level: shared, not invalid
    steady = assess(result(), _others(1.0), quiet=1.0)
    assert steady.checks["others"].status == "warn" and steady.level == "suspect"
    assert (
        "other programs used 1.00 of 2 CPUs (python3 1.00) over the window, 1.00 at the session's quietest: a "
        "shared machine" == steady.checks["others"].note
    )
    # one that started during the window: more than the quiet level plus a quarter of the machine
    busy = assess(result(), _others(1.0), quiet=0.0)
    assert busy.checks["others"].status == "fail" and busy.level == "invalid"
    assert busy.checks["others"].value == 1.0 and busy.checks["others"].limit == t.others_fail * 2
    assert "the machine, not the server, set these numbers" in busy.reasons[0]
    # a little more than at the quietest: a warning
    assert assess(result(), _others(0.3, ()), quiet=0.0).checks["others"].status == "warn"
    assert assess(result(), _others(0.1, ()), quiet=0.0).checks["others"].status == "ok"
    # not read at the window's edges (a load without a start set ahead): not judged
    assert assess(result(), window()).checks["others"].status == "n/a"


def test_a_probe_the_machine_spoiled_is_inconclusive_and_says_whose_numbers_it_has():
    from perflab import BreakpointCriteria
    from perflab.measure.judgement import GENERATOR, MACHINE, evaluate

    over = result(achieved=9000)  # fell short of its rate: a failure, unless the machine set the numbers
    busy = evaluate(over, BreakpointCriteria(), assess(over, _others(1.0), quiet=0.0))
    assert busy.passed is None and busy.doubt == MACHINE and busy.cause == "the machine was busy"
    starved = result(achieved=9000, p99_us=2000, lag_p99_us=1800, threads_cpu=(0.2,), runq=0.3)
    j = evaluate(starved, BreakpointCriteria(), assess(starved, window()))
    assert j.passed is None and j.doubt == MACHINE and j.cause.startswith("the machine starved the generator")
    # late while it never waited for a CPU: late on its own, and said so (not "starved")
    late = result(achieved=9000, p99_us=2000, lag_p99_us=1800, threads_cpu=(0.2,), runq=0.0)
    j = evaluate(late, BreakpointCriteria(), assess(late, window()))
    assert j.passed is None and j.cause.startswith("the generator fell behind its schedule (its threads waited 0%"), (
        j.cause
    )
    saturated = result(achieved=9000, threads_cpu=(0.97,))
    j = evaluate(saturated, BreakpointCriteria(), assess(saturated, window()))
    assert j.passed is None and j.doubt == GENERATOR and j.cause == "the generator was at its limit"
    # a probe that kept up while other programs took the CPU passes: they could only have made it look worse
    kept = result()
    assert evaluate(kept, BreakpointCriteria(), assess(kept, _others(1.0), quiet=0.0)).passed is True


def test_a_burst_of_another_program_makes_a_tail_only_failure_inconclusive():
    from perflab import BreakpointCriteria
    from perflab.measure.judgement import MACHINE, evaluate
    from perflab.server.machine import OtherLoad

    def win(peak):
        return CpuWindow(0, 10, 8.0, 0.8, 100 << 20, 0.9, 2, OtherLoad(1.0, 2, 10.0, ()), peak)

    # the window's mean at the quiet level (a steady hog), but a quarter-second of 1.9 CPUs inside it
    assert assess(result(), win(1.9), quiet=1.0).checks["others_burst"].status == "warn"
    assert assess(result(), win(1.2), quiet=1.0).checks["others_burst"].status == "ok"
    assert assess(result(), win(None), quiet=1.0).checks["others_burst"].status == "n/a"
    slow = result(p99_us=40_000)  # the rate kept, no queue: only the tail over the SLA
    j = evaluate(slow, BreakpointCriteria(), assess(slow, win(1.9), quiet=1.0))
    assert j.passed is None and j.doubt == MACHINE and "another program burst" in j.reasons[0]
    # without the burst the same probe fails: the tail is the server's
    assert evaluate(slow, BreakpointCriteria(), assess(slow, win(1.1), quiet=1.0)).passed is False
    # a queue that builds (the rate not kept) fails whatever burst beside it: overload is the server's own
    over = result(achieved=9000, p99_us=40_000)
    assert evaluate(over, BreakpointCriteria(), assess(over, win(1.9), quiet=1.0)).passed is False
