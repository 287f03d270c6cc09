"""``Version``: which version of the *server under test* a run measured, the key of the run index across
commits (``version_commit``, ``version_label``) and of a history (:mod:`perflab.regress.history`).

Not perflab's own checkout: that is the environment record's ``git`` (the index's ``perflab_commit``). Each
run that measures one server records ``{"commit": sha or None, "label": text or None}``: the commit is found
(the built-in server: this checkout's commit, or the commit a build was made from; your server: its working
directory's commit when that is in a git repository of its own, never perflab's checkout) unless given; the
label is yours (``--version-label``: "stage 6", "v2.1-rc1", "with the new cache").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .fields import Params, option

_SHA = re.compile(r"[0-9a-f]{7,40}")


@dataclass(frozen=True)
class Version(Params):
    """The version of the server under test: ``commit`` (default: found, see the module docstring) and your
    ``label``."""

    commit: str | None = option(
        None,
        "text",
        "the commit of the server under test, a hex hash (default: found: "
        "this checkout's, a build's, or your server's directory's when it is in git)",
        optional=True,
    )
    label: str | None = option(
        None,
        "text",
        'your name for the version of the server measured ("stage 6", '
        '"v2.1-rc1"); the run index is keyed by it and by the commit',
        optional=True,
    )

    def _check(self):
        if self.commit is not None:
            if not _SHA.fullmatch(self.commit.strip().lower()):
                raise ValueError(f"commit: a hex commit hash of 7 to 40 digits, got {self.commit!r}")
            self._set("commit", self.commit.strip().lower())
        if self.label is not None:
            label = " ".join(self.label.split())
            if not label or len(label) > 80:
                raise ValueError(f"label: a short text of 1 to 80 characters, got {self.label!r}")
            self._set("label", label)

    @classmethod
    def of(cls, given) -> Version:
        """``given`` as a Version: one, a label (text), a dict of its fields, or ``None`` (nothing given)."""
        if given is None:
            return cls()
        if isinstance(given, cls):
            return given
        if isinstance(given, str):
            return cls(label=given)
        if isinstance(given, dict):
            return cls(**given)
        raise ValueError(f"version: a Version, a label or a dict with commit and label, got {type(given).__name__}")
