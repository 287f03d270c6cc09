"""Breakpoint searches: each one in words, breakpoints compared only by disjoint intervals (the method named),
the curve and the overview, the tables, and the stories a notebook shows."""

import copy
import math

import pandas as pd
import pytest
import synthetic as syn

from perflab import BreakpointCriteria, BreakpointParams
from perflab.analysis import breakpoints
from perflab.analysis.breakpoints import figures as bfig
from perflab.analysis.breakpoints import sentences as bsay
from perflab.analysis.breakpoints import tables as btab
from perflab.breakpoint import BreakpointResult, Outcome, Probe
from perflab.measure.judgement import Judgement


def _bp(rate, interval, judged=(), outcome="resolved"):
    from perflab import BreakpointCriteria, BreakpointParams
    from perflab.breakpoint import BreakpointResult, Outcome, Probe
    from perflab.measure.judgement import Judgement

    probes = [
        Probe(
            i,
            r,
            Judgement(
                ok,
                [why],
                {},
                {"verdict": "valid", "reasons": []},
                cause=None if ok is not None else "the generator was at its limit",
            ),
            "bisect",
        )
        for i, (r, ok, why) in enumerate(judged)
    ]
    rates = [r for r, ok, _ in judged if ok is not None]
    edges = (
        max((r for r, ok, _ in judged if ok), default=None),
        min((r for r, ok, _ in judged if ok is False), default=None),
    )
    return BreakpointResult(
        rate,
        interval,
        Outcome(outcome),
        probes,
        BreakpointParams(),
        BreakpointCriteria(),
        "converged",
        edges=edges if rates else (None, None),
    )


def test_breakpoint_sentence_gives_the_interval_and_the_first_failing_probe():
    r = _bp(
        2000,
        (1920, 2184),
        [
            (1000, True, "ok"),
            (2000, True, "ok"),
            (4000, False, "p99 40 ms > 10 ms"),
            (2100, False, "achieved 91% < 99%"),
            (3000, None, "inconclusive"),
        ],
    )
    text = bsay.describe_breakpoint("GET, 64 connections", r)
    assert text == (
        "**GET, 64 connections** keeps up to 2,000 req/s (interval [1,920, 2,184] req/s, resolved; "
        "probes valid); the lowest failing probe, 2,100 req/s, failed because achieved 91% < 99%; "
        "1 probe(s) were not counted (the generator was at its limit) (5 probes)."
    )
    # the machine's own speed: said when it changed beyond the threshold, not otherwise
    r.host_spread, r.host_limit = 2.31, 1.25
    assert bsay.describe_breakpoint("GET", r).endswith(
        "(5 probes). The machine's speed changed during the search: a fixed loop before each probe took up to "
        "2.31x its fastest time (warn above 1.25x), so a repeat moves with it."
    )
    r.host_spread = 1.1
    assert bsay.describe_breakpoint("GET", r).endswith("(5 probes).")
    none = bsay.describe_breakpoint("PUT", _bp(None, (None, 10), [(10, False, "p99")], "none-passed"))
    assert none.startswith("**PUT**: none passed (below 10 req/s)")


def test_breakpoints_differ_only_when_their_intervals_do_not_overlap():
    text = bsay.compare_breakpoints(
        {"sync": _bp(30000, (28800, 31200)), "async": _bp(45000, (43200, 46800)), "virtual": _bp(44000, (42000, 46000))}
    )
    assert text.startswith("Breakpoint (sequential intervals): async 45,000 req/s ([43,200, 46,800])")
    assert "virtual 44,000 req/s ([42,000, 46,000]), no difference detectable (intervals" in text
    assert "sync 30,000 req/s ([28,800, 31,200]), lower (intervals" in text and "do not overlap" in text


def _search(rate, iv, outcome="resolved"):
    return syn.search(rate, iv, [(rate or 100, rate is not None, 2.0)], outcome)


def test_breakpoint_lists_unresolved_searches_and_validity_pairs():
    ok, wide = _search(2000, (1950, 2050)), _search(1000, (600, 1400), "unresolved")
    assert bsay.describe_breakpoints({"a": ok, "b": wide}) == [
        bsay.describe_breakpoint("a", ok),
        bsay.describe_breakpoint("b", wide),
    ]
    assert bsay.describe_unresolved({"a": ok, "b": wide}) == (
        "Not resolved to within ±10%: b (see each one's outcome and interval)."
    )
    assert bsay.describe_unresolved({"a": ok}) == ""
    runs = {"a": syn.experiment(syn.load(), "suspect", ("trend",))}
    assert bsay.describe_search_validity({"a": ok, "b": wide}, runs) == [
        "a: validity of the breakpoint's edge probes: valid; of the profile run: suspect: trend."
    ]


ROWS = [
    {
        "workload": "status",
        "connections": 64,
        "rate": 10000.0,
        "interval": [9000.0, 11000.0],
        "placement": "shared",
        "verdict": "resolved",
    },
    {
        "workload": "GET",
        "connections": 1,
        "rate": 2000.0,
        "interval": [1800.0, 2200.0],
        "placement": "shared",
        "verdict": "resolved",
    },
    {
        "workload": "GET",
        "connections": 64,
        "rate": 5000.0,
        "interval": [4500.0, 5500.0],
        "placement": "shared",
        "verdict": "resolved",
    },
    {
        "workload": "PUT",
        "connections": 64,
        "rate": None,
        "interval": [None, 100.0],
        "placement": "shared",
        "verdict": "none-passed",
    },
]


def test_breakpoints_against_the_ceiling_and_across_connections():
    assert bsay.describe_ceiling_shares(ROWS) == [
        "GET, 1 connection reaches 20% of the request-handling ceiling (10,000 req/s) (from the intervals: 16%-24%).",
        "GET, 64 connections reaches 50% of the request-handling ceiling (10,000 req/s) (from the intervals: 41%-61%).",
    ]
    (line,) = bsay.compare_by_connections(ROWS)
    assert line.startswith(
        "GET breakpoint (sequential intervals): 64 connections 5,000 req/s ([4,500, 5,500]); 1 connection 2,000 req/s"
    )
    assert "lower" in line
    assert bsay.placement_table(ROWS) == ""  # one placement: nothing side by side


def test_placement_table_sets_the_placements_side_by_side():
    split = [dict(r, placement="split", rate=r["rate"] and r["rate"] * 1.01) for r in ROWS[1:3]]
    rows = ROWS[1:3] + split
    table = bsay.placement_table(rows).splitlines()
    assert table[0].startswith("**CPU placement.**") and table[2] == "| search | shared | split | comparison |"
    assert table[4].startswith(
        "| GET, 1 connection | 2,000 req/s (interval [1,800, 2,200]), resolved | "
        "2,020 req/s (interval [1,800, 2,200]), resolved | "
        "Breakpoint (sequential intervals): split 2,020 req/s"
    )
    assert "no difference detectable" in table[4] and len(table) == 6
    shares = bsay.describe_ceiling_shares(ROWS[:1] + rows)
    assert shares[0].startswith("GET, 1 connection [shared] reaches 20%") and len(shares) == 2  # no split ceiling


def test_answers_follow_the_rows():
    rows = [
        {"workload": "PUT", "connections": 1, "mode": "sync", "rate": 1000.0, "interval": [1000.0, 1100.0]},
        {"workload": "GET", "connections": 64, "mode": None, "rate": None, "interval": [None, 500.0]},
    ]
    assert bsay.answer_breakpoints(rows) == (
        "PUT, 1 connection (sync) keeps up to 1,000 req/s (interval [1,000, 1,100]); "
        "GET, 64 connections: none passed (below 500 req/s)."
    )
    a, b = {"rate": 1000.0, "interval": [1000.0, 2000.0]}, {"rate": 3000.0, "interval": [3000.0, None]}
    assert (
        bsay.compare_breakpoint_rows("sync", a, "async", b)
        == "async's breakpoint is higher than sync's (sequential intervals): intervals [1,000, 2,000] and [3,000, open) do "
        "not overlap."
    )
    c = {"rate": 1500.0, "interval": [1500.0, 1900.0]}
    assert bsay.compare_breakpoint_rows("sync", a, "async", c).startswith("No difference between the breakpoints")
    assert (
        bsay.compare_breakpoint_rows("sync", a, "async", {"rate": None, "interval": [None, 50.0]})
        == "async and sync cannot be compared: one of the searches found no breakpoint."
    )


def search(points, rate, hi, stop="max_probes reached while bisecting"):
    """A search from ``(rate, passed, p99)`` points (passed None: an inconclusive probe)."""
    probes = [
        Probe(
            i,
            r,
            Judgement(
                ok,
                ["ok" if ok else "p99 42 ms > SLA 10 ms"],
                {"achieved_rate": r, "p50_ms": p / 5, "p99_ms": p, "p999_ms": p * 2},
            ),
            "bracket",
        )
        for i, (r, ok, p) in enumerate(points)
    ]
    outcome = Outcome.RESOLVED if hi is not None else Outcome.ABOVE_RANGE
    return BreakpointResult(rate, (rate, hi), outcome, probes, BreakpointParams(), BreakpointCriteria(), stop)


SEARCH = search([(1000, True, 2.0), (2000, True, 3.0), (4000, False, 80.0), (3000, False, 30.0)], 2000, 3000)


def test_breakpoint_curve_shows_percentiles_probes_sla_and_interval():
    fig = bfig.breakpoint_curve(SEARCH)
    names = [t.name for t in fig.data]
    assert names == ["p99 of each probe", "p50", "p99", "p99.9", "breakpoint"]
    probes = fig.data[0]
    assert list(probes.x) == [1000, 2000, 3000, 4000] and probes.mode == "markers"
    assert list(probes.marker.symbol) == ["circle", "circle", "x", "x"]  # passing / failing probes
    assert list(fig.data[3].y) == [4.0, 6.0, 60.0, 160.0]
    bp = fig.data[4]
    assert list(bp.x) == [2000] and list(bp.error_x.arrayminus) == [0] and list(bp.error_x.array) == [1000]
    assert "[2,000, 3,000]" in bp.hovertext[0]
    assert fig.layout.yaxis.type == "log" and "ms" in fig.layout.yaxis.title.text
    assert "requests/s" in fig.layout.xaxis.title.text and fig.layout.title.text
    sla = [a for a in fig.layout.annotations if a.text.startswith("SLA")]
    assert len(sla) == 1 and sla[0].y == pytest.approx(math.log10(10)), "log axis: the label's y is the exponent"
    assert [s.type for s in fig.layout.shapes].count("rect") == 1  # the interval, shaded


def test_breakpoint_curve_lines_go_through_each_rate_once():
    """Repeated probes at one rate (the search's edges) do not make the lines zigzag: one point per rate,
    in rate order, at the median of that rate's probes; every probe keeps its own marker."""
    res = search(
        [
            (1000, True, 2.0),
            (3000, False, 30.0),
            (2000, True, 3.0),
            (2000, False, 11.0),
            (3000, False, 50.0),
            (2000, True, 5.0),
            (2500, None, 9.0),
        ],
        2000,
        3000,
    )
    fig = bfig.breakpoint_curve(res)
    probes = fig.data[0]
    assert len(probes.x) == 7 and list(probes.x) == sorted(probes.x)
    assert list(probes.marker.symbol).count("diamond-open") == 1  # the inconclusive probe
    p99 = next(t for t in fig.data if t.name == "p99")
    assert list(p99.x) == [1000, 2000, 2500, 3000] and list(p99.y) == [2.0, 5.0, 9.0, 40.0]


def test_breakpoint_curve_marks_probes_the_lab_doubts():
    """Probes carrying a ``validity`` record: suspect ones get a ring and their reason in the hover."""
    res = search([(1000, True, 2.0), (2000, True, 3.0), (3000, False, 30.0)], 2000, 3000)
    res.probes[1].judgement.validity = {"verdict": "suspect", "reasons": ["generator 5% late"], "checks": {}}
    probes = bfig.breakpoint_curve(res).data[0]
    assert list(probes.marker.line.width) == [1, 3, 1] and probes.marker.line.color[1] == "#e6a700"
    assert "validity: suspect (generator 5% late)" in probes.hovertext[1] and "validity" not in probes.hovertext[0]


def test_breakpoint_curve_open_interval_and_several_searches():
    above = search([(1000, True, 1.0), (2000, True, 1.5)], 2000, None, "passed at max_rate 2000: above")
    fig = bfig.breakpoint_curve({"sync": SEARCH, "async": above}, sla_ms=10)
    names = [t.name for t in fig.data]
    assert {"sync: p99", "async: p99", "sync: breakpoint", "async: breakpoint"} <= set(names)
    open_bp = fig.data[names.index("async: breakpoint")]
    assert open_bp.error_x.array[0] > 0 and "open)" in open_bp.hovertext[0]


def test_breakpoint_overview_rows():
    rows = [
        {"workload": "GET", "connections": 64, "mode": "sync", "rate": 2000.0, "interval": [2000.0, 2400.0]},
        {"workload": "GET", "connections": 64, "mode": "async", "rate": 3000.0, "interval": [3000.0, None]},
        {"workload": "PUT", "connections": 1, "mode": "sync", "rate": None, "interval": [None, 250.0]},
    ]
    fig = bfig.breakpoint_overview(rows)
    ys = [y for t in fig.data for y in t.y]
    assert set(ys) == {"GET, 64 conn, sync", "GET, 64 conn, async", "PUT, 1 conn, sync"}
    none = [t for t in fig.data if t.text and "none passed" in t.text]
    assert len(none) == 1 and list(none[0].x) == [250.0]
    assert fig.layout.xaxis.title.text.startswith("breakpoint, requests/s")
    with pytest.raises(ValueError, match="non-empty list"):
        bfig.breakpoint_overview([])


def test_breakpoint_table_and_the_loads_at_each_breakpoint():
    found = syn.search(2000, (2000, 2400), [(1000, True, 2.0), (2000, True, 3.0), (2400, False, 40.0)])
    none = syn.search(None, (None, 500), [(500, False, 30.0)], outcome="none-passed")
    t = btab.breakpoint_table({"GET, 64 connections": found, "PUT, 64 connections": none})
    assert t.index.name == "search"
    row = t.loc["GET, 64 connections"]
    assert row["breakpoint, req/s"] == 2000 and row["interval, req/s"] == "[2,000, 2,400]"
    assert (row["outcome"], row["probes' validity"], row["probes"], row["search, s"]) == ("resolved", "valid", 3, 30.0)
    assert pd.isna(t.loc["PUT, 64 connections", "breakpoint, req/s"])
    # whole requests per second: the notebooks' 3-decimal float format once showed "2,000.000"
    assert str(t["breakpoint, req/s"].dtype) == "Int64" and "2000.000" not in t.to_string()
    assert t.loc["PUT, 64 connections", "interval, req/s"] == "< 500"
    at = btab.at_breakpoints({"GET, 64 connections": found, "PUT, 64 connections": none})
    assert list(at) == ["GET, 64 connections @ 2,000/s"] and at["GET, 64 connections @ 2,000/s"].p99_ms == 3.0


# --- the stories a notebook shows ------------------------------------------------------------------------

RESULTS = {
    "GET, 64 connections": syn.search(2000, (2000, 2400), [(1000, True, 2.0), (2000, True, 3.0), (2400, False, 40.0)]),
    "PUT, 64 connections": syn.search(None, (None, 500), [(500, False, 30.0)], outcome="none-passed"),
}
RESULT_ROWS = [
    {
        "workload": "GET",
        "connections": 64,
        "rate": 2000.0,
        "interval": [2000.0, 2400.0],
        "placement": "shared",
        "verdict": "resolved",
        "validity": "valid",
    },
    {
        "workload": "PUT",
        "connections": 64,
        "rate": None,
        "interval": [None, 500.0],
        "placement": "shared",
        "verdict": "none-passed",
        "validity": "valid",
    },
]


def test_the_searches_their_spectrum_at_the_limit_findings_and_answer():
    s = breakpoints.searches(RESULTS, RESULT_ROWS)
    assert s.table.equals(btab.breakpoint_table(RESULTS))
    assert s.text == "\n\n".join(bsay.describe_breakpoints(RESULTS))  # one placement: no side by side
    at = breakpoints.at_limit(RESULTS)
    assert at.figure.layout.title.text == "Latency by percentile at each breakpoint"
    assert at.figure.layout.annotations[0].text == "SLA 10 ms"  # the searches' own SLA
    assert at.text.startswith("**GET, 64 connections @ 2,000/s**: p50")
    none = breakpoints.at_limit({"PUT": RESULTS["PUT, 64 connections"]})
    assert none.figure is None and none.text.startswith("No search found a passing rate")
    lines = breakpoints.findings(RESULTS, RESULT_ROWS)
    assert lines[:2] == bsay.describe_breakpoints(RESULTS) and lines[-1].startswith("Not resolved to within ±10%: PUT")
    f = breakpoints.answer(RESULTS, RESULT_ROWS)
    assert f.answer == bsay.answer_breakpoints(RESULT_ROWS) and f.breakpoints == RESULT_ROWS
    assert f.key_number["label"] == "PUT breakpoint, 64 connections" and f.key_number["value"] is None
    assert f.preview.layout.title.text == "Breakpoint searches" and f.validity == "valid"


def test_a_search_in_one_line_and_the_machines_speed():
    r = RESULTS["GET, 64 connections"]
    assert bsay.estimate(r) == "2,000 req/s (interval [2,000, 2,400], resolved)"
    assert bsay.estimate(RESULTS["PUT, 64 connections"]) == "none passed (below 500 req/s)"
    assert bsay.host_note(r) is None
    r.host_spread, r.host_limit = 1.1, 1.25
    assert bsay.host_note(r) == (
        "the machine's speed held during the search: a fixed loop before each probe took up to "
        "1.10x its fastest time (warn above 1.25x)"
    )
    r.host_spread = None


def test_a_breakpoint_says_whether_it_held_and_what_it_says_without_a_number():
    from perflab.analysis.findings import headline, key_breakpoint, key_number_text

    held = {
        "rate": 2000.0,
        "interval": [1920.0, 2080.0],
        "verdict": "resolved",
        "held": True,
        "sustain_s": 20.0,
        "search_rate": 2000.0,
        "overestimate": None,
    }
    assert headline(held) == "2,000 req/s (interval [1,920, 2,080], resolved; held for 20 s)"
    stepped = {**held, "rate": 1700.0, "interval": [1632.0, 2000.0], "overestimate": 2000 / 1700 - 1}
    assert headline(stepped) == (
        "1,700 req/s (interval [1,632, 2,000], resolved; held for 20 s, where the search's "
        "2,000 req/s did not: its short probes overestimated the breakpoint by 18%)"
    )
    unheld = {
        "rate": None,
        "interval": [None, 1445.0],
        "verdict": "unresolved",
        "held": False,
        "sustain_s": 20.0,
        "search_rate": 2000.0,
    }
    assert headline(unheld) == (
        "no rate held for 20 s: the breakpoint is below 1,445 req/s (the search's short probes said 2,000 req/s)"
    )
    busy = {
        "rate": None,
        "interval": [None, None],
        "verdict": "cannot-tell",
        "at_least": 1544.0,
        "why": "9 of 14 probes could not be judged (the machine was busy)",
    }
    assert headline(busy) == (
        "cannot tell (9 of 14 probes could not be judged (the machine was busy)); kept up at 1,544 req/s at least"
    )
    # the key number of a search that could not tell is its words, never a number
    key = key_breakpoint({**busy, "workload": "PUT", "connections": 16}, "{workload} breakpoint")
    assert key["value"] is None and key_number_text(key) == headline(busy)
    assert key_number_text(key_breakpoint({**held, "workload": "GET", "connections": 1}, "x")) == (
        "2,000 req/s (interval [1,920, 2,080]); held for 20 s"
    )


def test_a_breakpoint_held_from_fresh_starts_says_how_and_names_other_programs():
    from perflab.analysis.findings import headline

    row = {
        "rate": 2600.0,
        "interval": [2600.0, 2990.0],
        "verdict": "resolved",
        "held": True,
        "sustain_s": 20.0,
        "search_rate": 2000.0,
        "overestimate": None,
        "held_windows": "kept up in 2 of 3 windows",
        "fresh_start": True,
        "others_max_cores": 0.93,
        "others_median_cores": 0.88,
    }
    assert headline(row) == (
        "2,600 req/s (interval [2,600, 2,990], resolved; kept up in 2 of 3 windows of 20 s, each "
        "from a fresh start, above the search's 2,000 req/s: its short probes underestimated the "
        "breakpoint by 30%; beside other programs using up to 0.93 of a core (0.88 at the "
        "median))"
    )
    # a machine kept quiet is not remarked on
    assert "other programs" not in headline({**row, "others_max_cores": 0.04})


def test_the_holds_in_words_state_how_to_reproduce_them():
    from perflab.breakpoint.hold import Hold, RateHeld

    r = copy.copy(RESULTS["GET, 64 connections"])
    ok = dict(passed=True, reason="ok", p99_ms=3.2, achieved_ratio=1.0, fresh=True)
    r.holds = [
        Hold(2000.0, 20.0, **ok),
        Hold(2000.0, 20.0, **{**ok, "p99_ms": 4.1}),
        Hold(2600.0, 20.0, False, "p99 40.00 ms over the SLA", 40.0, 0.97, fresh=True),
        Hold(2600.0, 20.0, False, "p99 50.00 ms over the SLA", 50.0, 0.95, fresh=True),
    ]
    r.rates_held = [RateHeld(2000.0, 2, 0, True), RateHeld(2600.0, 0, 2, False)]
    r.conditions = {
        "fresh_start": True,
        "storage": "fresh",
        "fill": 10000,
        "prefill": None,
        "warmup_s": 5.0,
        "warmup_rate": 1000.0,
    }
    assert bsay.describe_hold("GET", r) == (
        "**GET**: held in 20 s windows, each from a fresh start (a new server process on fresh storage, 10,000 keys "
        "filled through its API, 5 s of warm-up at 1,000 req/s): 2,600 req/s fell behind in 2 of 2 windows (p99 "
        "40.00 ms over the SLA); 2,000 req/s kept up in 2 of 2 windows (p99 up to 4.10 ms, 100% of the rate at the "
        "least)."
    )
    r.conditions = {
        "fresh_start": False,
        "not_fresh": "a server that is already running (url, a started cluster) cannot be restarted",
    }
    assert "on the server as the search left it (a server that is already running" in bsay.describe_hold("GET", r)


def test_real_wrk2s_second_opinion_is_said_and_its_consoles_shown(tmp_path, shared_dir):
    import types

    from perflab.analysis.consoles import CONSOLE_MIME
    from perflab.breakpoint.hold import Hold, RateHeld
    from perflab.lab.second_opinion import SecondOpinion

    r = copy.copy(RESULTS["GET, 64 connections"])
    r.holds = [Hold(2000.0, 20.0, True, "ok", 3.2, 1.0, fresh=True)] * 2
    r.rates_held = [RateHeld(2000.0, 2, 0, True)]
    r.conditions = {"fresh_start": True, "storage": "fresh", "warmup_s": 5.0, "warmup_rate": 1000.0}
    r.run = types.SimpleNamespace(dir=tmp_path)
    (tmp_path / "second-opinion").mkdir()
    text = (shared_dir / "fixtures/wrk2/put-t1-c1-R2000-L.txt").read_text()
    runs = []
    for i, (ok, p99) in enumerate(((True, 1.2), (False, 15.0), (True, 2.0))):
        (tmp_path / f"second-opinion/{i:02d}-console.txt").write_text(text)
        runs.append(
            {
                "rate": 2000.0,
                "run_id": f"r{i}",
                "passed": ok,
                "reason": "ok" if ok else "p99 15.00 ms > SLA 10 ms",
                "p99_ms": p99,
                "achieved_ratio": 1.0,
                "console": f"second-opinion/{i:02d}-console.txt",
            }
        )
    verdict = {"rate": 2000.0, "kept_up": 2, "fell_behind": 1, "held": True, "words": "kept up in 2 of 3 windows"}
    r.second_opinion = SecondOpinion("wrk2", 2000.0, runs, 2000.0, (2000.0, None), [verdict])
    said = bsay.describe_hold("GET", r)
    assert said.endswith(
        ". Real wrk2 agrees: it kept up in 2 of 3 runs at 2,000 req/s (p99 1.20 ms to 15.0 ms), each on a freshly "
        "started server."
    ), said
    parts = breakpoints.holds({"GET": r}).parts
    consoles = [p for p in parts if isinstance(p, dict) and CONSOLE_MIME in p]
    assert len(consoles) == 3 and "run 2 of 3 on a freshly started server" in consoles[1][CONSOLE_MIME]["title"]
    assert "Requests/sec" in consoles[0][CONSOLE_MIME]["text"]
