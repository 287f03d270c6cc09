"""Interval logs: headers, tags, steps, per-interval percentiles and merged spectra."""

import pytest
from hdrh.histogram import HdrHistogram

from perflab.measure.hdrlog import parse_hdr_log, read_hdr_log, spectrum_from_histogram


def blob(values_us):
    h = HdrHistogram(1, 3_600_000_000, 3)
    for v in values_us:
        h.record_value(v)
    return h.encode().decode()


def make_log():
    fast, slow = blob(range(100, 1100)), blob(range(5000, 6000))
    return (
        "\n".join(
            [
                "#[Histogram log format version 1.3]",
                "#[StartTime: 1760000000.500 (seconds since epoch), Thu Oct  9 08:53:20 UTC 2025]",
                "#[BaseTime: 0.000 (seconds since epoch)]",
                '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
                "#[Step 0: rate=1000 start=0.000 end=2.000]",
                f"0.000,1.000,1.099,{fast}",
                f"Tag=uncorrected,0.000,1.000,1.099,{fast}",
                f"1.000,1.000,1.099,{fast}",
                "#[Step 1: rate=2000 start=2.000 end=3.000]",
                f"2.000,1.000,5.999,{slow}",
            ]
        )
        + "\n"
    )


def test_parse_intervals_tags_steps(tmp_path):
    p = tmp_path / "x.hlog"
    p.write_text(make_log())
    log = read_hdr_log(p)
    assert log.start_time == 1760000000.5
    iv = log.intervals
    assert list(iv["tag"]) == ["corrected", "uncorrected", "corrected", "corrected"]
    corr = iv[iv["tag"] == "corrected"]
    assert list(corr["step"]) == [0, 0, 1]
    assert list(corr["count"]) == [1000, 1000, 1000]
    assert corr["p50_ms"].iloc[0] == pytest.approx(0.6, rel=0.01)
    assert corr["p99_ms"].iloc[2] == pytest.approx(5.99, rel=0.01)
    assert list(log.steps["rate"]) == [1000.0, 2000.0]
    assert log.absolute_time().iloc[0].timestamp() == pytest.approx(1760000000.5)
    h = log.histogram("corrected")
    assert h.get_total_count() == 3000
    assert log.histogram("corrected", start_s=2.0).get_total_count() == 1000
    sp = log.spectrum()
    assert sp["percentile"].is_monotonic_increasing and sp["latency_ms"].is_monotonic_increasing
    assert sp["latency_ms"].iloc[-1] == pytest.approx(6.0, rel=0.01)


def test_bad_logs():
    with pytest.raises(ValueError, match="not an interval line"):
        parse_hdr_log("garbage line\n")
    with pytest.raises(ValueError, match="cannot decode histogram"):
        parse_hdr_log("0.000,1.000,1.0,notbase64!!\n")
    with pytest.raises(ValueError, match="no hdr log at"):
        read_hdr_log("/no/such/file.hlog")
    with pytest.raises(ValueError, match="tag must be"):
        parse_hdr_log(make_log()).histogram("other")


def test_spectrum_from_empty_histogram():
    assert spectrum_from_histogram(HdrHistogram(1, 10, 3)).empty
