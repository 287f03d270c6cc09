"""A notebook aimed at what it measures: the built-in server, or yours (a command or a ``perflab.toml``).

A page says only what holds for the server it measured. The notebooks mark what is one target's alone, and the
batch keeps only what applies before papermill runs them (an interactive notebook shows both):

* a Markdown cell with ``metadata.perflab.target`` ``"builtin"`` or ``"yours"`` is kept only for that target
  (the built-in server's memtables, flushes and SSTables never reach a page about your server);
* a parameter whose comment in the ``parameters`` cell starts with ``(built-in)`` or ``(your server)`` is one
  target's: the other target's plan leaves it out and its page and index do not list it;
* the notebook's question and title may differ by target (``metadata.perflab.question`` and ``title``: a
  text, or ``{"builtin": ..., "yours": ...}``); ``{name}`` in them is the parameter the notebook ran with, so a
  question states what was actually run ("with 32 connections"), and the first Markdown cell's
  ``**Question:**`` line is rewritten with it.
"""

from __future__ import annotations

import ast
import copy

from .. import i18n

#: the two targets a page can be about
BUILTIN, YOURS = "builtin", "yours"
#: how a parameter's comment says whose it is
_MARKS = {"(built-in)": BUILTIN, "(your server)": YOURS}
#: where the question stands in a notebook's first Markdown cell
QUESTION = "**Question:**"


def scope(help_text: str | None) -> str | None:
    """Whose parameter a comment says it is (:data:`BUILTIN`, :data:`YOURS`), ``None``: every target's."""
    text = (help_text or "").strip()
    return next((who for mark, who in _MARKS.items() if text.startswith(mark)), None)


def parameters(path) -> dict[str, dict]:
    """The notebook's parameters as papermill reads them (name -> its default and comment)."""
    import papermill  # in here: ~0.3 s to import, and only running notebooks needs it

    return dict(papermill.inspect_notebook(str(path)))


def foreign(params: dict[str, dict], target: str) -> set[str]:
    """The parameters of ``params`` that belong to the other target than ``target``."""
    return {name for name, info in params.items() if scope(info.get("help")) not in (None, target)}


def _meta(nb) -> dict:
    return nb.metadata.get("perflab") or {}


def _for(value, target: str):
    """A metadata text for ``target``: the text itself, or its entry of a per-target dict."""
    return value.get(target) if isinstance(value, dict) else value


def _words(value, t: i18n.Language | None = None) -> str:
    """A parameter's value in a sentence: ``[1, 64]`` is "1 and 64", a number with thousands separators (in
    ``t``'s language when given: "1 и 64", "5 126")."""
    if isinstance(value, (list, tuple)):
        items = [_words(v, t) for v in value]
        pair = t("{first} and {last}") if t else "{first} and {last}"  # unfilled: filled just below
        joined = pair.format(first=", ".join(items[:-1]), last=items[-1]) if len(items) > 1 else ""
        return items[0] if len(items) == 1 else joined if items else (t("none") if t else "none")
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return t.number(value) if t else f"{value:,}"
    if isinstance(value, float):
        return t.number(value, 3) if t else f"{value:,g}"
    return str(value)


def values(effective: dict[str, str]) -> dict:
    """The effective parameters (Python source text, as the report records them) as values."""
    out = {}
    for name, text in effective.items():
        try:
            out[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            out[name] = text
    return out


def fill(template: str, effective: dict[str, str], t: i18n.Language | None = None) -> str:
    """``template`` with each ``{name}`` replaced by that parameter's value in words (in ``t``'s language)."""
    vals = values(effective)

    class Words(dict):
        def __missing__(self, key):
            raise ValueError(f"the question names {{{key}}}, which is no parameter of the notebook")

    return template.format_map(Words({k: _words(v, t) for k, v in vals.items()}))


def template(nb, target: str) -> str | None:
    """The notebook's question for ``target`` as its metadata writes it, with its ``{parameter}`` placeholders."""
    return _for(_meta(nb).get("question"), target)


def question(nb, target: str, effective: dict[str, str]) -> str | None:
    """The notebook's question for ``target`` with the parameters it ran with; ``None`` when its metadata has
    none (the first Markdown cell's question line is then read as written)."""
    q = template(nb, target)
    return fill(q, effective) if q else None


def title(nb, target: str) -> str | None:
    """The notebook's title for ``target`` when its metadata gives one."""
    return _for(_meta(nb).get("title"), target)


def aimed(nb, target: str, effective: dict[str, str]):
    """A copy of ``nb`` for ``target``: the other target's Markdown cells left out, the title and the question
    line rewritten (see the module docstring)."""
    out = copy.deepcopy(nb)
    out.cells = [c for c in out.cells if (c.metadata.get("perflab") or {}).get("target") in (None, target)]
    q, t = question(out, target, effective), title(out, target)
    first = next((c for c in out.cells if c.cell_type == "markdown"), None)
    if first is not None and (q or t):
        lines = first.source.splitlines()
        for i, line in enumerate(lines):
            if q and line.strip().startswith(QUESTION):
                lines[i] = f"{QUESTION} {q}"
            elif t and line.startswith("# "):
                lines[i] = f"# {t}"
        first.source = "\n".join(lines)
    return out
