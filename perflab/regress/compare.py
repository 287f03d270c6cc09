"""One regression check: B against A by one interleaved comparison (:func:`perflab.compare_ab`), its verdict on
the deciding metric read as a :class:`~perflab.regress.verdict.Check`; and what a check needs before it
runs (:class:`Setup`: the commits' builds, the load, the comparison's parameters)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from .. import paths
from ..ab import compare_ab
from ..ab.result import ABResult, verdict_rows
from ..commits.builds import Builds
from ..config import BreakpointCriteria, BreakpointParams, LoadParams, PrefillParams, ServerConfig
from ..config.ab import ABParams
from ..config.regress import AtRate, RepoParams
from ..core.session import SessionOptions
from .verdict import Check, decisive_row, judge


@dataclass
class Setup:
    """What every comparison of a gate or a bisection shares: the commits' ``builds``, the ``load`` (at
    ``rate``, or compared by breakpoint with ``search``), the comparison's ``params`` and ``criteria``, the
    data (``prefill`` or ``fill``) and the ``session`` (:class:`~perflab.core.session.SessionOptions`:
    ``data_root``, ``placement``...)."""

    builds: Builds
    load: LoadParams
    params: ABParams
    rate: float | None = None
    criteria: BreakpointCriteria = field(default_factory=BreakpointCriteria)
    search: BreakpointParams | None = None
    prefill: PrefillParams | None = None
    fill: int | None = None
    progress: bool = True
    session: SessionOptions = field(default_factory=SessionOptions)

    @classmethod
    def of(
        cls,
        load,
        params,
        params_cls,
        repo=None,
        server=None,
        rate=None,
        criteria=None,
        search=None,
        prefill=None,
        fill=None,
        progress=True,
        session: SessionOptions | None = None,
    ) -> Setup:
        """Checked before anything is built or started (a ``ValueError`` naming what is wrong)."""
        params = params if params is not None else params_cls()
        for name, v, t in (
            ("load", load, LoadParams),
            ("params", params, params_cls),
            ("criteria", criteria or BreakpointCriteria(), BreakpointCriteria),
        ):
            if not isinstance(v, t):
                raise ValueError(f"{name} must be a {t.__name__}, got {type(v).__name__}")
        if search is not None and rate is not None:
            raise ValueError("rate and search are exclusive: check at a fixed rate, or by breakpoints")
        if search is not None and not isinstance(search, BreakpointParams):
            raise ValueError(f"search must be a BreakpointParams, got {type(search).__name__}")
        rate = AtRate(rate=rate).rate  # typed here, so that every record and page holds a number
        session = session or SessionOptions()
        cache = paths.data_root(session.data_root) / "builds"
        builds = Builds(
            repo if repo is not None else RepoParams(), server if server is not None else ServerConfig(), cache
        )
        if builds.yours and server is not None and server != ServerConfig():
            raise ValueError(
                "server: the built-in server's options do not apply to your server (its project file says how it runs)"
            )
        return cls(
            builds, load, params, rate, criteria or BreakpointCriteria(), search, prefill, fill, progress, session
        )

    @property
    def metric(self) -> str:
        """The deciding metric: the stop rule's, or the breakpoint."""
        return "breakpoint" if self.search is not None else self.params.metric


def check(
    setup: Setup, a, b, name: str, params: ABParams | None = None, search: BreakpointParams | None = None
) -> tuple[ABResult, Check]:
    """Compare side ``b`` with side ``a`` (what :meth:`Builds.side` gives) as ``setup`` says (``params`` and
    ``search`` replace its own: a retry's), recorded as an ``ab`` run named ``name``; the comparison and its
    check."""
    params = params or setup.params
    search = search or setup.search
    with warnings.catch_warnings():
        # the comparison warns when A and B are the same configuration: two commits whose server did not change
        warnings.filterwarnings("ignore", message="A and B are the same")
        res = compare_ab(
            a,
            b,
            setup.load,
            rates=[setup.rate] if setup.rate is not None else None,
            params=params,
            criteria=setup.criteria,
            search=search,
            prefill=setup.prefill,
            fill=setup.fill,
            name=name,
            progress=setup.progress,
            session=setup.session,
        )
    row = decisive_row(verdict_rows(res), setup.metric)
    return res, judge(row, res.validity, res.run_id)
