"""The range read's chunk check (perflab.server.range) on hand-made answers: a good one, and each fault a student's
stage-6 server can make, named in words; and the fill's values checked without writing them out in Python."""

from __future__ import annotations

import zlib

import pytest

from perflab.server.fill import value_of
from perflab.server.heap import summary
from perflab.server.range import Expected, check_answer

EXPECTED = Expected(keys=12, value_size=5, seed=3)
HEAD = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunk(payload: bytes) -> bytes:
    return b"%x\r\n" % len(payload) + payload + b"\r\n"


def entry(i: int, value: bytes | None = None) -> bytes:
    return chunk(b"key%d\n" % i + (value if value is not None else value_of(i, 5, 3)))


def ascending() -> list[int]:
    return sorted(range(12), key=lambda i: b"key%d" % i)


def body(order: list[int], last: bool = True) -> bytes:
    return HEAD + b"".join(entry(i) for i in order) + (b"0\r\n\r\n" if last else b"")


def faults(raw: bytes, block: int = 7) -> list[str]:
    return [str(f) for f in check_answer(raw, EXPECTED, block).faults]


def test_a_good_answer_passes_read_in_any_blocks_with_its_bytes_and_entries_counted():
    raw = body(ascending())
    for block in (1, 3, 4096):
        r = check_answer(raw, EXPECTED, block)
        assert r.ok and r.complete and r.faults == [] and r.entries == 12, (block, r)
    assert r.payload_bytes == EXPECTED.payload_bytes == sum(len(b"key%d" % i) + 1 + 5 for i in range(12))
    assert r.wire_bytes == len(raw) - len(HEAD)


def test_the_fills_values_are_checked_by_crc_in_closed_form():
    e = Expected(keys=600, value_size=4096, seed=7)
    crcs = e.crcs()
    assert [int(crcs[i]) for i in (0, 1, 255, 256, 599)] == [
        zlib.crc32(value_of(i, 4096, 7)) for i in (0, 1, 255, 256, 599)
    ]


def test_a_body_that_is_not_chunked_is_named_with_its_length():
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 123\r\n\r\n" + b"x" * 123
    r = check_answer(raw, EXPECTED)
    assert not r.ok and [str(f) for f in r.faults] == ["the body is not chunked (`Content-Length 123`)"]


def test_missing_keys_are_named():
    order = [i for i in ascending() if i not in (5, 7)]
    assert faults(body(order)) == ["`key5` missing", "`key7` missing"]


def test_keys_out_of_order_and_twice_are_named():
    order = ascending()
    swapped = order[:2] + [order[3], order[2]] + order[4:]
    assert faults(body(swapped)) == [f"`key{order[2]}` after `key{order[3]}` (chunk 4): keys not ascending"]
    assert faults(body(order[:3] + [order[2]] + order[3:])) == [f"`key{order[2]}` twice (chunk 4)"]


def test_a_bad_chunk_a_wrong_value_and_a_truncated_body_are_named():
    no_newline = (
        HEAD + entry(0) + chunk(b"key1-no-newline") + b"".join(entry(i) for i in ascending()[2:]) + b"0\r\n\r\n"
    )
    assert "chunk 2 has no '\\n' between key and value" in faults(no_newline)
    bad_size = HEAD + entry(0) + b"zz\r\nkey1\nvalue\r\n"
    assert faults(bad_size) == ["chunk 2's size line `b'zz'` is not hexadecimal"]
    order = ascending()
    wrong = HEAD + b"".join(entry(i, b"WRONG" if i == 4 else None) for i in order) + b"0\r\n\r\n"
    assert faults(wrong) == ["`key4`: the value is not the one written"]
    cut = body(order[:6], last=False)
    r = check_answer(cut, EXPECTED)
    assert not r.complete and str(r.faults[0]) == (
        "the body ends after 6 chunks without the last (zero-length) chunk: truncated"
    )


@pytest.mark.parametrize("status", [400, 404, 405])
def test_no_range_endpoint_is_its_status_and_its_words(status):
    raw = b"HTTP/1.1 %d Nope\r\nContent-Length: 18\r\n\r\nunknown /v0/entit" % status + b"y"
    r = check_answer(raw, EXPECTED)
    assert r.status == status and not r.ok and r.quote == "unknown /v0/entity" and r.faults == []


def test_the_heap_is_flat_when_the_old_generation_keeps_less_than_a_quarter_of_the_range_to_the_end():
    def row(t, used, old):
        return {"t": t, "used_bytes": used, "old_bytes": old, "committed_bytes": 64, "young_gcs": 0, "full_gcs": 0}

    churn = [row(0.0, 10, 5), row(0.5, 40, 5), row(1.0, 12, 6)]
    # a busy collector promotes churn early, and a mixed collection takes it back before the read ends
    promoted = [row(0.0, 10, 5), row(0.4, 60, 50), row(0.7, 30, 20), row(1.0, 40, 20)]
    held = [row(0.0, 10, 5), row(0.5, 60, 55), row(1.0, 60, 55)]
    assert summary(churn, 0.1, 1.0, 100)["flat"] is True
    s = summary(promoted, 0.1, 1.0, 100)
    assert s["flat"] is True and (s["old_growth_bytes"], s["old_kept_bytes"]) == (45, 15)
    s = summary(held, 0.1, 1.0, 100)
    assert s["flat"] is False and s["old_kept_bytes"] == s["old_growth_bytes"] == 50 and s["used_growth_bytes"] == 50
    assert summary(held, 0.1, 0.2, 100)["flat"] is None  # no sample inside the read
