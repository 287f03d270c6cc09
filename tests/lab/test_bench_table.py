"""`perflab bench`'s table: each breakpoint against the ceiling of its own round and placement."""

from perflab.bench import Row, table


def test_each_row_is_compared_with_the_ceiling_of_its_round_and_placement():
    rows = [
        Row("ceiling", "shared", 1, 60_000, (52_000, 64_000), "resolved", "valid"),
        Row("lsm-get", "shared", 1, 54_000, (44_000, 57_000), "resolved", "valid", seconds=70, host=2.04),
        Row("ceiling", "shared", 2, 90_000, (80_000, 95_000), "resolved", "valid"),
        Row("lsm-get", "shared", 2, 54_000, (44_000, None), "unresolved", "suspect"),
        Row("lsm-put", "split", 2, 40_000, (30_000, 45_000), "resolved", "valid"),
    ]
    lines = table(rows).splitlines()
    assert lines[0].startswith("| round | target | placement |")
    assert "| 1 | lsm-get | shared | 54,000 | [44,000, 57,000] | resolved | valid | 0.90 |" in lines[3]
    assert lines[0].endswith("| search s | host speed spread |") and lines[3].endswith("| 70 | 2.04x |")
    assert "| 2 | lsm-get | shared | 54,000 | [44,000, open) | unresolved | suspect | 0.60 |" in lines[5]
    assert "| 2 | lsm-put | split | 40,000 | [30,000, 45,000] | resolved | valid |  |" in lines[6]  # no split ceiling


def test_every_target_builds_its_server_and_its_load():
    from perflab.bench import TARGETS, _setup
    from perflab.cli import build_parser

    args = build_parser().parse_args(["bench", "--keys", "1000"])
    for name in TARGETS:
        server, load, prefill = _setup(name, args)
        assert (prefill is not None) == TARGETS[name].prefilled and load.script.endswith(TARGETS[name].script)
    server, load, _ = _setup("known-capacity", args)
    assert (server.mode, server.workers, server.debug_delay) == ("async", 4, 0.002)
    assert (load.connections, load.threads) == (16, 1)


def test_bench_at_a_fixed_rate_end_to_end(server_build, loadgen_binary, data_root, capsys):
    from perflab.cli import main

    assert (
        main(
            [
                "bench",
                "--only",
                "known-capacity",
                "--rates",
                "300",
                "--duration",
                "1s",
                "--warmup",
                "0s",
                "--placement",
                "shared",
                "--quiet",
            ]
        )
        == 0
    )
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| 300 | known-capacity | shared |")]
    assert len(rows) == 2  # printed as it ran, and in the final table
