"""Profiles in words: where a run's samples go by category, its hottest frames, what changed from one
profile to another.

Two profiles here are runs one after the other: their shares are set side by side, never tested, so no
sentence claims that one run spent more than another (:mod:`perflab.stats.methods`: *single values*).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ... import fmt
from ...profiling import flame

#: a profile with fewer samples than this is not split by category: a share of 150 samples moves by several points
#: from one run to the next (a binomial share of 2% rests on 3 samples), so its split says nothing
MIN_SAMPLES = 1000
#: a CPU profile with at least this share in the JIT compiler is cold: it shows the server being compiled, not serving
COLD_JIT = 0.25
#: the events whose samples are CPU time (where a cold JVM shows its compiler)
CPU_EVENTS = ("cpu", "itimer", "wall")


def unsplit(profile) -> str | None:
    """Why a profile's shares are not worth stating (``None``: they are): too few samples (:data:`MIN_SAMPLES`),
    or a CPU profile mostly of the JIT compiler (:data:`COLD_JIT`: a cold server)."""
    n = profile.samples
    if n < MIN_SAMPLES:
        return (
            f"{n:,} {profile.event} samples, too few to split by category (at least {MIN_SAMPLES:,}: a share of "
            f"a smaller profile moves by several points from one run to the next); a longer window gives more"
        )
    if profile.event in CPU_EVENTS:
        cats = profile.categories()
        jit = float(cats.loc[cats["category"] == "JIT", "share"].sum())
        if jit >= COLD_JIT:
            return (
                f"cold: {fmt.pct(jit)} of its {n:,} samples are the JIT compiler compiling the server, not the "
                f"server serving requests; warm the server up longer before profiling"
            )
    return None


def describe_categories(
    shares: Mapping[str, float] | pd.Series,
    event: str = "cpu",
    top: int = 4,
    focus: tuple[str, ...] = (),
    samples: int | None = None,
) -> str:
    """'Of the 12,345 CPU samples, 41% (5,061) network I/O, 18% (2,222) HTTP parsing, 9% (1,111) storage.' from a
    category -> share (0..1) mapping and the profile's ``samples`` (every share with the samples behind it); ``focus``
    categories are always named."""
    s = pd.Series(dict(shares), dtype=float) if not isinstance(shares, pd.Series) else shares.astype(float)
    s = s[s > 0].sort_values(ascending=False)
    if s.empty:
        return f"The {event} profile has no samples."
    total = float(s.sum())
    if total > 1.5:  # percentages or sample counts: normalise
        s = s / total
    names = list(s.index[:top]) + [f for f in focus if f in s.index and f not in s.index[:top]]
    parts = [
        f"{fmt.pct(float(s[n]))}" + (f" ({round(float(s[n]) * samples):,})" if samples else "") + f" {n}" for n in names
    ]
    what = {
        "cpu": "CPU samples",
        "alloc": "allocation samples",
        "lock": "lock samples",
        "wall": "wall-clock samples",
    }.get(event, f"{event} samples")
    head = f"Of the {samples:,} {what}, " if samples else f"Of the {what}, "
    return head + ", ".join(parts) + "."


def describe_top_frames(
    frames: pd.DataFrame, n: int = 3, name_col: str = "frame", share_col: str = "self_share"
) -> str:
    """'The hottest frames (self time): A 12%, B 8%, C 5%.'"""
    if frames is None or len(frames) == 0 or name_col not in frames or share_col not in frames:
        return ""
    top = frames.sort_values(share_col, ascending=False).head(n)
    parts = [f"`{_short(r[name_col])}` {fmt.pct(float(r[share_col]))}" for _, r in top.iterrows()]
    return "The hottest frames by self time: " + ", ".join(parts) + "."


def _short(frame: str, width: int = 70) -> str:
    frame = str(frame)
    return frame if len(frame) <= width else "..." + frame[-(width - 3) :]


#: a category's share moved when it changed by more than this (a fraction: 0.005 is half a percentage point)
MOVED = 0.005


def describe_diff(
    diff: pd.DataFrame,
    a: str,
    b: str,
    n: int = 3,
    name_col: str = "category",
    delta_col: str = "delta",
    moved: float = MOVED,
) -> str:
    """What grew and what shrank (by more than ``moved``) between profile ``a`` and ``b`` (``delta`` = share in
    b - share in a)."""
    if diff is None or len(diff) == 0 or delta_col not in diff:
        return ""
    d = diff.sort_values(delta_col)
    grew = d[d[delta_col] > moved].tail(n).iloc[::-1]
    shrank = d[d[delta_col] < -moved].head(n)
    parts = []
    if len(grew):
        parts.append(
            "grew: "
            + ", ".join(f"{r[name_col]} (+{fmt.pct(float(r[delta_col]))[:-1]} points)" for _, r in grew.iterrows())
        )
    if len(shrank):
        parts.append(
            "shrank: "
            + ", ".join(f"{r[name_col]} ({fmt.pct(float(r[delta_col]))[:-1]} points)" for _, r in shrank.iterrows())
        )
    if not parts:
        return f"From {a} to {b} no category moved by more than {100 * moved:g} percentage points."
    return f"From {a} to {b}, " + "; ".join(parts) + "."


def describe_profile(label: str, profile, top: int = 4, focus: tuple[str, ...] = ()) -> str:
    """'**label** (cpu, 12,345 samples): Of the CPU samples, ... The hottest frames by self time: ...' for a
    :class:`~perflab.profiling.profile.Profile` (categories by :func:`describe_categories`)."""
    why = unsplit(profile)
    if why is not None:
        return f"**{label}** ({profile.event}): {why}."
    cats = profile.categories()
    shares = dict(zip(cats["category"], cats["share"])) if len(cats) else {}
    text = f"**{label}** ({profile.event}): " + describe_categories(
        shares, profile.event, top=top, focus=focus, samples=profile.samples
    )
    frames = describe_top_frames(profile.frames(), 3)
    return text + (" " + frames if frames else "")


#: the profile categories (:data:`perflab.profiling.flame.CATEGORY_ORDER`) grouped as the lab reports ask
CPU_GROUPS = {
    "network I/O": ("network read", "network write"),
    "HTTP parsing": ("HTTP parsing",),
    "storage": tuple(c for c in flame.CATEGORY_ORDER if c.startswith("storage")),
    "executor queue": ("executor queue",),
    "locks": ("locks",),
}


#: the groups every CPU split names, even at 0% (the others only when present)
ALWAYS_NAMED = ("network I/O", "HTTP parsing", "storage")


def describe_cpu_split(runs: Mapping[str, object]) -> list[str]:
    """For each run with a CPU profile: 'label: of the 12,345 CPU samples, 41% (5,061) network I/O, 18% (2,222)
    HTTP parsing, 9% (1,111) storage, 3% (370) executor queue.' (:data:`CPU_GROUPS`; :data:`ALWAYS_NAMED` always, the
    others when present), or why its profile is not split (:func:`unsplit`)."""
    lines = []
    for label, r in runs.items():
        cpu = r.profiles.get("cpu") or r.profiles.get("itimer")
        if cpu is None or not cpu.samples:
            continue
        why = unsplit(cpu)
        if why is not None:
            lines.append(f"{label}: the CPU profile is not split: {why}.")
            continue
        cats = cpu.categories()
        shares = {
            group: sum(float(cats.loc[cats["category"] == c, "share"].sum()) for c in members)
            for group, members in CPU_GROUPS.items()
        }
        parts = [
            f"{fmt.pct(share)} ({round(share * cpu.samples):,}) {group}"
            for group, share in shares.items()
            if group in ALWAYS_NAMED or share > 0
        ]
        lines.append(f"{label}: of the {cpu.samples:,} CPU samples, " + ", ".join(parts) + ".")
    return lines


def no_profile_note(runs: Mapping) -> str:
    """Why none of ``runs`` has a profile ('' when one has): each run's recorded reason."""
    if any(r.profiles for r in runs.values()):
        return ""
    return (
        "No profile was recorded: "
        + "; ".join(str(r.run.meta.get("profile_unavailable", "not requested")) for r in runs.values())
        + "."
    )
