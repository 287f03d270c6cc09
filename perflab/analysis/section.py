"""What a story function returns: one section of a notebook, its parts in the order it shows them.

A part is a plotly figure, a table (a DataFrame), Markdown (a string; empty ones are left out, adjacent
ones shown as one output) or a raw output (a dict: mimetype -> data, e.g. a folded console or a linked
flame graph). A notebook shows a section with ``section.show()``, or takes one part for another use
(``section.figure`` as a finding's preview, ``section.text`` in a list of findings).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import IPython.display as ipd
import pandas as pd
import plotly.graph_objects as go

from .frames import markdown_table


@dataclass
class Section:
    parts: list = field(default_factory=list)

    @property
    def figure(self) -> go.Figure | None:
        """The first figure, ``None`` when there is none."""
        return next((p for p in self.parts if isinstance(p, go.Figure)), None)

    @property
    def table(self) -> pd.DataFrame | None:
        """The first table, ``None`` when there is none."""
        return next((p for p in self.parts if isinstance(p, pd.DataFrame)), None)

    @property
    def text(self) -> str:
        """The Markdown parts as paragraphs."""
        return "\n\n".join(p for p in self.parts if isinstance(p, str) and p)

    def show(self) -> None:
        """Display every part in order; returns nothing, so a cell ending with it has no ``Out[...]``."""
        markdown: list[str] = []
        for part in self.parts + [None]:
            if isinstance(part, str):
                if part:
                    markdown.append(part)
                continue
            if markdown:
                ipd.display(ipd.Markdown("\n\n".join(markdown)))
                markdown = []
            if isinstance(part, go.Figure):
                part.show()
            elif isinstance(part, dict):
                ipd.display(part, raw=True)
            elif isinstance(part, pd.DataFrame):  # the page shows the HTML, a Markdown report the table
                ipd.display(
                    {"text/html": part._repr_html_(), "text/plain": repr(part), "text/markdown": markdown_table(part)},
                    raw=True,
                )
            elif part is not None:
                ipd.display(part)
