"""The console parser reads real wrk2 outputs: the fixtures and the seeds' pasted outputs."""

import math

import pytest

from perflab.measure.wrk_output import parse_bytes, parse_metric, parse_time_ms, parse_wrk_output, parse_wrk_outputs


def read(shared_dir, rel):
    return (shared_dir / rel).read_text()


def test_put_fixture(shared_dir):
    o = parse_wrk_output(read(shared_dir, "fixtures/wrk2/put-t1-c1-R2000-L.txt"))
    assert o.url == "http://127.0.0.1:8081" and o.threads == 1 and o.connections == 1
    assert o.calibration == [{"mean_ms": 1.001, "interval_ms": 10.0}]
    assert o.thread_stats["latency"] == {
        "avg": 0.94,
        "stdev": pytest.approx(0.51396),
        "max": 6.37,
        "within_stdev_pct": 65.81,
    }
    assert o.thread_stats["req_sec"]["avg"] == pytest.approx(2130.0)
    assert o.distribution[99.0] == 1.90 and o.distribution[100.0] == 6.38
    assert len(o.spectrum) == 62
    first, last = o.spectrum.iloc[0], o.spectrum.iloc[-1]
    assert (first.latency_ms, first.percentile, first.total_count) == (0.022, 0.0, 1)
    assert math.isinf(last.inverse) and last.total_count == 3989
    assert o.spectrum_summary == {
        "mean_ms": 0.938,
        "stdev_ms": 0.514,
        "max_ms": 6.372,
        "total_count": 3989,
        "buckets": 27,
        "sub_buckets": 2048,
    }
    assert o.requests == 23997 and o.measured_s == 12.0
    assert o.bytes_read == round(1.53 * 1024 * 1024)
    assert o.requests_per_sec == 1999.85 and o.transfer_per_sec == round(130.85 * 1024)
    assert o.non_2xx == 0 and o.errors_total == 0


def test_get_fixture_non2xx(shared_dir):
    o = parse_wrk_output(read(shared_dir, "fixtures/wrk2/get-t2-c64-R10000-L.txt"))
    assert o.connections == 64 and len(o.calibration) == 2
    assert o.non_2xx == 71223 and o.errors_total == 71223
    assert o.error_ratio == pytest.approx(71223 / 119217)
    assert o.percentile_ms(99.9) == 6.38
    # a percentile not in the distribution block is read from the spectrum
    assert o.percentile_ms(95) == 1.842


def test_stall_fixture_uncorrected_block(shared_dir):
    o = parse_wrk_output(read(shared_dir, "fixtures/wrk2/stall-t1-c1-R2000-L-U.txt"))
    assert o.distribution[50.0] == 1.01 and o.distribution_uncorrected[50.0] == 0.025
    assert o.distribution[99.99] == 1000.0  # "1.00s "
    assert len(o.spectrum) == 74 and len(o.spectrum_uncorrected) == 74
    assert o.spectrum_uncorrected_summary["max_ms"] == 1000.448
    assert o.spectrum_summary["mean_ms"] == 54.964
    assert o.percentile_ms(99, uncorrected=True) == pytest.approx(0.118)


def test_done_hook_output_keeps_extra_lines(shared_dir):
    o = parse_wrk_output(read(shared_dir, "fixtures/wrk2/status-done-hook.txt"))
    assert o.spectrum.empty and len(o.distribution) == 0
    assert o.requests == 11994 and o.requests_per_sec == 999.51
    assert o.extra_lines == ["requests=11994 duration_us=11999924 p50=739 p99=1683 max=2176 errors_status=0"]


def test_seed_with_socket_errors_and_minutes(shared_dir):
    outs = parse_wrk_outputs(read(shared_dir, "seeds/002_97eb8c9e6589fff4.txt"))
    assert len(outs) == 2
    put = outs[0]
    assert put.url == "http://localhost:8080" and put.measured_s == 300.0  # "5.00m"
    assert put.socket_errors == {"connect": 0, "read": 0, "write": 0, "timeout": 5}
    assert put.thread_stats["latency"]["max"] == 2870.0  # "2.87s"
    assert put.spectrum_summary["total_count"] == 1449969
    assert put.bytes_read == round(95.84 * 1024 * 1024)


def test_seed_with_blank_lines_between_every_line(shared_dir):
    outs = parse_wrk_outputs(read(shared_dir, "seeds/003_bbccdc060893f5e8.txt"))
    assert len(outs) == 4
    assert [o.distribution[99.0] for o in outs] == [952.83, 691.2, 613.89, 316.93]
    assert outs[2].non_2xx == 589 and outs[1].requests == 119988
    assert all(len(o.spectrum) == 86 for o in outs)


def test_seed_with_nan_and_indented_pastes(shared_dir):
    outs = parse_wrk_outputs(read(shared_dir, "seeds/004_a5d1b9c6e861abce.txt"))
    assert len(outs) == 9
    assert math.isnan(outs[0].thread_stats["req_sec"]["avg"])  # "Req/Sec nan nan 0.00 0.00%"
    assert outs[0].thread_stats["latency"]["avg"] == 127.88
    # the third paste is indented by 8 spaces inside the report
    assert outs[2].distribution[99.0] == 21.45 and outs[2].distribution[100.0] == 25.15
    assert outs[6].requests_per_sec == 107853.16


def test_seed_with_commands_and_two_outputs(shared_dir):
    outs = parse_wrk_outputs(read(shared_dir, "seeds/001_3f00c3ca1261206d.txt"))
    assert [(o.threads, o.connections, o.requests) for o in outs] == [(4, 16, 1199828), (4, 16, 1199798)]
    assert outs[1].transfer_per_sec == round(1.40 * 1024 * 1024)


def test_units_and_bad_input():
    assert parse_time_ms("606.04us") == pytest.approx(0.60604)
    assert parse_time_ms("1.00m") == 60000.0
    assert parse_metric("5.27k") == 5270.0 and math.isnan(parse_metric("nan"))
    assert parse_bytes("1.00", "KB") == 1024
    with pytest.raises(ValueError, match="no wrk/perflab-load output found"):
        parse_wrk_output("hello world")
    with pytest.raises(ValueError, match="text must be a str"):
        parse_wrk_output(b"bytes")
    assert parse_wrk_outputs(read_seed_without_output()) == []


def read_seed_without_output():
    return "Проведем нагрузочное тестирование\n$ wrk -t4 -c4 -d240s -R10000 -s ./wrk/put.lua --latency\n"
