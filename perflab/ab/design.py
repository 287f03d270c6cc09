"""The interleaved design: in which order A and B are probed, and which probes pair up.

Blocks alternate ``A B B A`` and ``B A A B``. Within a block the two sides' mean positions are equal, so
a machine that drifts linearly during the block weighs on both alike; alternating the blocks balances
which side goes first too. A block gives two pairs, each an A probe and the B probe next to it (``A B``
and ``B A``), so the order within a pair is balanced as well. Every probe of a block runs at the same
offered rate; a comparison at several rates takes one block per rate in turn (the rates see the same
phases of the machine).
"""

from __future__ import annotations

from dataclasses import dataclass

ORDERS = ("ABBA", "BAAB")
SIDES = ("A", "B")


def block_order(block: int) -> str:
    """``"ABBA"`` for even blocks, ``"BAAB"`` for odd ones."""
    if not (isinstance(block, int) and block >= 0):
        raise ValueError(f"block must be an integer >= 0, got {block!r}")
    return ORDERS[block % 2]


@dataclass(frozen=True)
class PairSlot:
    """A pair of a block: the positions of its A and B probes in the block (0..3) and which came first."""

    index: int
    a_pos: int
    b_pos: int

    @property
    def first(self) -> str:
        return "A" if self.a_pos < self.b_pos else "B"


def pairs_of(order: str) -> tuple[PairSlot, PairSlot]:
    """The two pairs of a block: positions 0-1 and 2-3."""
    if sorted(order) != ["A", "A", "B", "B"]:
        raise ValueError(f"order must hold two A and two B, got {order!r}")
    out = []
    for i, (x, y) in enumerate(((0, 1), (2, 3))):
        if order[x] == order[y]:
            raise ValueError(f"order {order!r}: positions {x} and {y} are both {order[x]}: not a pair")
        out.append(PairSlot(i, x if order[x] == "A" else y, y if order[y] == "B" else x))
    return out[0], out[1]


def side_sequence():
    """Endless A/B sequence in the blocks' order (``A B B A B A A B ...``): the turns of two interleaved
    searches."""
    block = 0
    while True:
        yield from block_order(block)
        block += 1
