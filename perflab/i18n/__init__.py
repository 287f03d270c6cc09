"""The report's sentences in the reader's language: gettext message catalogs through Babel.

One catalog per language, a ``.po`` source in the repository (``locale/<lang>/LC_MESSAGES/perflab.po``),
compiled when first asked for (Babel's ``read_po`` and ``write_mo``, in memory): a fresh clone needs no build
step, and the source is the one thing edited. The message ids are the English sentences, with ``{name}``
placeholders, so English is complete by construction (its catalog carries the ids and no translations) and a
sentence missing from another catalog shows in English rather than not at all (the tests look for that).

Numbers, percentages and dates go through Babel's locale data (``5 126,4`` in Russian, ``5,126.4`` in
English), never through a format string of one language::

    t = i18n.language("ru")
    t("{n} of {total} runs", n=t.number(2), total=t.number(4))
    t.plural("{n} connection", "{n} connections", 4)      # "4 соединения"
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from babel import Locale
from babel.dates import format_datetime
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent
from babel.support import Translations

#: the languages a report is written in; English is the message ids themselves
LANGUAGES = ("en", "ru")
DEFAULT = "en"
#: the catalogs' gettext domain and their folder
DOMAIN = "perflab"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"


def check(code: str) -> str:
    """``code`` when a catalog exists for it; a ``ValueError`` naming the languages there are otherwise."""
    if code not in LANGUAGES:
        raise ValueError(f"language {code!r}: there are catalogs for {', '.join(LANGUAGES)}")
    return code


def catalog_path(code: str) -> Path:
    return LOCALE_DIR / check(code) / "LC_MESSAGES" / f"{DOMAIN}.po"


@dataclass(frozen=True)
class Language:
    """One language's sentences and number formats (see the module docstring)."""

    code: str
    translations: Translations

    def __call__(self, message: str, **values) -> str:
        """``message`` in this language, its ``{name}`` placeholders filled with ``values``."""
        if not message:  # gettext's "" is the catalog's header
            return message
        text = self.translations.gettext(message)
        return text.format(**values) if values else text

    def plural(self, singular: str, plural: str, n: int, **values) -> str:
        """The form of ``singular``/``plural`` for ``n`` (Russian has three); ``{n}`` is ``n`` formatted."""
        text = self.translations.ngettext(singular, plural, n)
        return text.format(n=self.number(n), **values)

    def number(self, value: float, digits: int = 0) -> str:
        """``value`` with the locale's grouping and decimal sign, ``digits`` decimals at most."""
        pattern = "#,##0" + ("." + "#" * digits if digits else "")
        return format_decimal(value, pattern, locale=self.code)

    def significant(self, value: float) -> str:
        """``value`` with 3 significant digits (as latencies are read: 0.327, 24.3, 5,126)."""
        a = abs(value)
        digits = 0 if a >= 100 else 1 if a >= 10 else 2 if a >= 1 else 3
        return self.number(value, digits)

    def percent(self, ratio: float) -> str:
        return format_percent(ratio, locale=self.code)

    def datetime(self, when: datetime) -> str:
        """``when`` in UTC, as the locale writes a date ("7 декабря 2026, 21:22"); a naive time is UTC."""
        when = when.replace(tzinfo=UTC) if when.tzinfo is None else when
        return format_datetime(when, "d MMMM y, HH:mm", tzinfo=UTC, locale=self.code)

    def timestamp(self, iso: str | None) -> str:
        """An ISO 8601 time (as the records keep it) as :meth:`datetime` writes it; one that does not parse as
        it is."""
        try:
            return self.datetime(datetime.fromisoformat(str(iso)))
        except ValueError:
            return str(iso)

    @property
    def name(self) -> str:
        """The language's own name ("русский")."""
        return Locale.parse(self.code).get_display_name(self.code)


class Sentence(str):
    """A sentence said in English (the string itself) that a report says in its own language (:meth:`say`): its
    message id and the values of its placeholders travel with it. Made where the words are (a server's fault, why
    a notebook does not apply), said where the reader's language is known."""

    msgid: str
    values: dict

    def __new__(cls, msgid: str, **values) -> Sentence:
        self = super().__new__(cls, msgid.format(**values))
        self.msgid, self.values = msgid, values
        return self

    def say(self, t: Language) -> str:
        """The sentence in ``t``'s language, a placeholder's value that is a sentence too said in it as well."""
        return t(self.msgid, **{k: say(t, v) for k, v in self.values.items()})

    def record(self) -> dict:
        """As a run's record keeps it (JSON): ``{"msgid", "values"}``, so a report reads it back in any language."""
        return {"msgid": self.msgid, "values": dict(self.values)}

    @classmethod
    def of_record(cls, rec: dict | None) -> Sentence | None:
        """The sentence :meth:`record` kept (``None`` for ``None``)."""
        return cls(rec["msgid"], **rec["values"]) if rec else None


def say(t: Language, text: str) -> str:
    """``text`` in the language ``t`` when it is a :class:`Sentence`, else as it is."""
    return text.say(t) if isinstance(text, Sentence) else text


@cache
def language(code: str | None = None) -> Language:
    """The catalog of ``code`` (default English), compiled from its ``.po`` source once per process."""
    code = check(code or DEFAULT)
    with catalog_path(code).open("rb") as f:
        catalog = read_po(f, locale=code, domain=DOMAIN)
    mo = io.BytesIO()
    write_mo(mo, catalog)
    mo.seek(0)
    return Language(code, Translations(mo, domain=DOMAIN))
