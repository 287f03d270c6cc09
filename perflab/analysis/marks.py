"""Marks every figure of the lab draws the same way."""

from __future__ import annotations

import math

import plotly.graph_objects as go


def sla_line(fig: go.Figure, sla_ms: float, text: str, log_y: bool, dash: str) -> None:
    """A horizontal SLA line with its label. On a log axis an annotation's y is the exponent (plotly's
    convention), and add_hline's own label would sit at 10^SLA and stretch the axis to it."""
    fig.add_hline(y=sla_ms, line_dash=dash, line_color="red")
    fig.add_annotation(
        text=text,
        xref="x domain",
        x=1,
        xanchor="right",
        yanchor="bottom",
        showarrow=False,
        y=math.log10(sla_ms) if log_y else sla_ms,
        font=dict(color="red"),
    )


def rate_line(fig: go.Figure, rate: float, text: str, log_x: bool, colour: str) -> None:
    """A vertical line at ``rate`` with its label above the plot; on a log axis the label's x is the exponent
    (at ``rate`` itself, a ramp's ~210 req/s stretched notebook 07's axis to 10^210)."""
    fig.add_vline(x=rate, line_dash="dash", line_color=colour)
    fig.add_annotation(
        x=math.log10(rate) if log_x else rate,
        y=1,
        yref="paper",
        text=text,
        showarrow=False,
        yanchor="bottom",
        font={"color": colour, "size": 10},
    )
