"""perflab.i18n: one gettext catalog per language, compiled from its .po source; numbers by locale."""

import re

import pytest
from babel.messages.pofile import read_po

from perflab import i18n

PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _catalog(code: str):
    with i18n.catalog_path(code).open("rb") as f:
        return read_po(f, locale=code)


def test_every_catalog_has_the_same_sentences_and_russian_translates_each_with_its_placeholders():
    en, ru = _catalog("en"), _catalog("ru")
    ids = lambda c: {m.id if isinstance(m.id, str) else tuple(m.id) for m in c if m.id}  # noqa: E731
    assert ids(en) == ids(ru)
    for m in ru:
        if not m.id:
            continue
        sources = [m.id] if isinstance(m.id, str) else list(m.id)
        targets = [m.string] if isinstance(m.string, str) else list(m.string)
        assert all(t.strip() for t in targets), f"no translation for {m.id!r}"
        want = {p for s in sources for p in PLACEHOLDER.findall(s)}
        for t in targets:
            assert set(PLACEHOLDER.findall(t)) == want, (m.id, t)
        assert not m.fuzzy, m.id


def test_sentences_numbers_and_plurals_follow_the_language():
    ru, en = i18n.language("ru"), i18n.language("en")
    assert ru("## Findings") == "## Результаты" and en("## Findings") == "## Findings"
    assert ru("a sentence no catalog holds") == "a sentence no catalog holds"  # shows, in English, rather than not
    assert ru.number(5126) == "5\xa0126" and en.number(5126) == "5,126"
    assert ru.number(0.125, 3) == "0,125" and ru.significant(24.303) == "24,3"
    assert [ru.plural("{n} connection", "{n} connections", n) for n in (1, 4, 64, 11)] == [
        "1 соединение",
        "4 соединения",
        "64 соединения",
        "11 соединений",
    ]
    assert en.plural("{n} connection", "{n} connections", 1) == "1 connection"
    assert ru.percent(0.5).replace("\xa0", " ") == "50 %"
    with pytest.raises(ValueError, match="language 'fr': there are catalogs for en, ru"):
        i18n.language("fr")


def test_a_sentence_is_english_until_a_report_says_it_in_its_language():
    inner = i18n.Sentence("its build output holds no earlier stage's factory")
    s = i18n.Sentence("not applicable: {name} has no previous stage to compare with ({what}); {how}", name="bob",
                      what=inner, how="x")  # fmt: skip
    assert (
        s
        == "not applicable: bob has no previous stage to compare with (its build output holds no earlier stage's factory); x"
    )
    said = s.say(i18n.language("ru"))
    assert (
        said
        == "не применим: у bob нет предыдущего этапа для сравнения (в результатах его сборки нет фабрики более раннего этапа); x"
    )
    assert i18n.say(i18n.language("ru"), "plain") == "plain"


def test_every_sentence_the_package_asks_for_is_in_the_catalogs():
    """Each ``t("...")`` and ``t.plural("...", ...)`` with a literal message in perflab's code names an id the
    catalogs hold: a sentence added to the code but not to the catalogs would reach a Russian report in English."""
    import ast
    from pathlib import Path

    ids = {m.id if isinstance(m.id, str) else m.id[0] for m in _catalog("ru") if m.id}
    asked = []
    for path in sorted((Path(i18n.__file__).resolve().parents[1]).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            f = node.func
            called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            on_t = isinstance(f, ast.Name) or (isinstance(f.value, ast.Name) and f.value.id == "t")
            if called in ("t", "plural") and on_t and isinstance(node.args[0].value, str):
                asked.append((path.name, node.lineno, node.args[0].value))
    assert len(asked) > 50, len(asked)  # the report's sentences were found at all
    assert [a for a in asked if a[2] not in ids] == []
