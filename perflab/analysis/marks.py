"""Marks every figure of the lab draws the same way."""

from __future__ import annotations

import math

import plotly.graph_objects as go


def sla_line(fig: go.Figure, sla_ms: float, text: str, log_y: bool, dash: str) -> None:
    """A horizontal SLA line with its label. On a log axis an annotation's y is the exponent (plotly's
    convention), and add_hline's own label would sit at 10^SLA and stretch the axis to it."""
    fig.add_hline(y=sla_ms, line_dash=dash, line_color="red")
    fig.add_annotation(text=text, xref="x domain", x=1, xanchor="right", yanchor="bottom", showarrow=False,
                       y=math.log10(sla_ms) if log_y else sla_ms, font=dict(color="red"))
