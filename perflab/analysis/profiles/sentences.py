"""Profiles in words: where a run's samples go by category, its hottest frames, what changed from one
profile to another.

Two profiles here are runs one after the other: their shares are set side by side, never tested, so no
sentence claims that one run spent more than another (:mod:`perflab.measure.methods`: *single values*).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ... import fmt
from ...profiling import flame


def describe_categories(shares: Mapping[str, float] | pd.Series, event: str = "cpu", top: int = 4,
                        focus: tuple[str, ...] = ()) -> str:
    """'Of the cpu samples, 41% are network I/O, 18% HTTP parsing, 9% storage, 6% GC.' from a
    category -> share (0..1) mapping; ``focus`` categories are always named."""
    s = pd.Series(dict(shares), dtype=float) if not isinstance(shares, pd.Series) else shares.astype(float)
    s = s[s > 0].sort_values(ascending=False)
    if s.empty:
        return f"The {event} profile has no samples."
    total = float(s.sum())
    if total > 1.5:  # percentages or sample counts: normalise
        s = s / total
    names = list(s.index[:top]) + [f for f in focus if f in s.index and f not in s.index[:top]]
    parts = [f"{fmt.pct(float(s[n]))} {n}" for n in names]
    what = {"cpu": "CPU samples", "alloc": "allocated bytes", "lock": "lock wait time",
            "wall": "wall-clock samples"}.get(event, f"{event} samples")
    return f"Of the {what}, " + ", ".join(parts) + "."


def describe_top_frames(frames: pd.DataFrame, n: int = 3, name_col: str = "frame", share_col: str = "self_share") -> str:
    """'The hottest frames (self time): A 12%, B 8%, C 5%.'"""
    if frames is None or len(frames) == 0 or name_col not in frames or share_col not in frames:
        return ""
    top = frames.sort_values(share_col, ascending=False).head(n)
    parts = [f"`{_short(r[name_col])}` {fmt.pct(float(r[share_col]))}" for _, r in top.iterrows()]
    return "The hottest frames by self time: " + ", ".join(parts) + "."


def _short(frame: str, width: int = 70) -> str:
    frame = str(frame)
    return frame if len(frame) <= width else "..." + frame[-(width - 3):]


def describe_diff(diff: pd.DataFrame, a: str, b: str, n: int = 3, name_col: str = "category",
                  delta_col: str = "delta") -> str:
    """What grew and what shrank between profile ``a`` and ``b`` (``delta`` = share in b - share in a)."""
    if diff is None or len(diff) == 0 or delta_col not in diff:
        return ""
    d = diff.sort_values(delta_col)
    grew = d[d[delta_col] > 0.005].tail(n).iloc[::-1]
    shrank = d[d[delta_col] < -0.005].head(n)
    parts = []
    if len(grew):
        parts.append("grew: " + ", ".join(f"{r[name_col]} (+{fmt.pct(float(r[delta_col]))[:-1]} points)" for _, r in grew.iterrows()))
    if len(shrank):
        parts.append("shrank: " + ", ".join(f"{r[name_col]} ({fmt.pct(float(r[delta_col]))[:-1]} points)" for _, r in shrank.iterrows()))
    if not parts:
        return f"From {a} to {b} no category moved by more than half a point."
    return f"From {a} to {b}, " + "; ".join(parts) + "."


def describe_profile(label: str, profile, top: int = 4, focus: tuple[str, ...] = ()) -> str:
    """'**label** (cpu, 12,345 samples): Of the CPU samples, ... The hottest frames by self time: ...' for a
    :class:`~perflab.profiling.profile.Profile` (categories by :func:`describe_categories`)."""
    cats = profile.categories()
    shares = dict(zip(cats["category"], cats["share"])) if len(cats) else {}
    text = (f"**{label}** ({profile.event}, {profile.samples:,} samples): "
            + describe_categories(shares, profile.event, top=top, focus=focus))
    frames = describe_top_frames(profile.frames(), 3)
    return text + (" " + frames if frames else "")


#: the profile categories (:data:`perflab.profiling.flame.CATEGORY_ORDER`) grouped as the lab reports ask
CPU_GROUPS = {"network I/O": ("network read", "network write"), "HTTP parsing": ("HTTP parsing",),
              "storage": tuple(c for c in flame.CATEGORY_ORDER if c.startswith("storage")),
              "executor queue": ("executor queue",), "locks": ("locks",)}


#: the groups every CPU split names, even at 0% (the others only when present)
ALWAYS_NAMED = ("network I/O", "HTTP parsing", "storage")


def describe_cpu_split(runs: Mapping[str, object]) -> list[str]:
    """For each run with a CPU profile: 'label: of the CPU samples, 41% network I/O, 18% HTTP parsing, 9%
    storage, 3% executor queue.' (:data:`CPU_GROUPS`; :data:`ALWAYS_NAMED` always, the others when present)."""
    lines = []
    for label, r in runs.items():
        cpu = r.profiles.get("cpu") or r.profiles.get("itimer")
        if cpu is None or not cpu.samples:
            continue
        cats = cpu.categories()
        shares = {group: sum(float(cats.loc[cats["category"] == c, "share"].sum()) for c in members)
                  for group, members in CPU_GROUPS.items()}
        parts = [f"{fmt.pct(share)} {group}" for group, share in shares.items() if group in ALWAYS_NAMED or share > 0]
        lines.append(f"{label}: of the CPU samples, " + ", ".join(parts) + ".")
    return lines


def no_profile_note(runs: Mapping) -> str:
    """Why none of ``runs`` has a profile ('' when one has): each run's recorded reason."""
    if any(r.profiles for r in runs.values()):
        return ""
    return "No profile was recorded: " + "; ".join(
        str(r.run.meta.get("profile_unavailable", "not requested")) for r in runs.values()) + "."
