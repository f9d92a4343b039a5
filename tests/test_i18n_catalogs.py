"""Both languages, always, and in step with the templates (issue 17).

Templates hold the layout once, with the English sentences in `{% trans %}` / `_()`: English is the source
language, a message's English is its msgid, so English needs no catalog. The sentences of every other
language live in templates/locale/<lang>/LC_MESSAGES/gpufit.po. These tests hold that every message the
templates can print has both languages (English: the msgid itself; every other language: a non-empty,
non-fuzzy translation), that the catalogs hold exactly the templates' messages (extracted with Babel's
jinja2 extractor and babel.cfg's options, as `pybabel extract` does: none missing, none stale), that a
translation keeps its message's placeholders, and that a template kept per language exists in every
language.
"""

from __future__ import annotations

import configparser
import re
from functools import cache
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from bot.render import (
    LANGS,
    SOURCE_LANG,
    TEMPLATE_OPTIONS,
    catalog_path,
    environment,
    render,
    template_name,
    translations,
)
from core.paths import TEMPLATES_DIR

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = re.compile(r"%\((\w+)\)s")

MessageKey = tuple[str, str | None]  # (msgid, msgctxt)
TRANSLATED = tuple(lang for lang in LANGS if lang != SOURCE_LANG)  # the languages with a catalog


@cache
def catalog(lang: str) -> Catalog:
    with catalog_path(lang).open("rb") as source:
        return read_po(source, locale=lang)


def strings_of(value: object) -> tuple[str, ...]:
    """A message's id or string as a tuple of texts (plural messages have several)."""
    if isinstance(value, (tuple, list)):
        return tuple(str(item) for item in value)
    return (str(value),) if value is not None else ("",)


def babel_options() -> dict[str, str]:
    """babel.cfg's jinja2 section: what `pybabel extract -F babel.cfg` parses the templates with."""
    config = configparser.ConfigParser()
    config.read(ROOT / "babel.cfg", encoding="utf-8")
    (section,) = (name for name in config.sections() if name.startswith("jinja2:"))
    return dict(config[section])


@cache
def extracted() -> dict[MessageKey, str | tuple[str, ...]]:
    options = babel_options()
    found: dict[MessageKey, str | tuple[str, ...]] = {}
    for _file, _line, message, _comments, context in extract_from_dir(
        str(TEMPLATES_DIR), method_map=[("**.j2", "jinja2")], options_map={"**.j2": options}
    ):
        msgid = message[0] if isinstance(message, tuple) else message
        found[(msgid, context)] = message
    return found


def test_babel_cfg_parses_templates_as_bot_render_compiles_them() -> None:
    """Extraction must lex the templates as rendering does, or a trans block's msgid (its whitespace)
    would differ from the one looked up."""
    options = babel_options()
    for name, value in TEMPLATE_OPTIONS.items():
        assert options.get(name, "false") == str(value).lower(), name
    assert options.get("silent") == "false"  # a template Babel cannot parse fails here, not silently


def test_english_is_the_source_language_and_has_no_catalog() -> None:
    """A message's English is its msgid: adding a sentence edits its template and the other languages'
    catalogs only. English plurals are gettext's fallback, the msgid's two forms by n != 1."""
    assert SOURCE_LANG == "en"
    assert not catalog_path("en").exists(), "English is the msgids; a catalog would be a second copy"
    english = translations("en")
    some_plural = next(message for message in extracted().values() if isinstance(message, tuple))
    assert english.ngettext(some_plural[0], some_plural[1], 1) == some_plural[0]
    assert english.ngettext(some_plural[0], some_plural[1], 2) == some_plural[1]
    fits = "✅ <b>%(job)s fits on %(cards)s</b>"
    assert english.gettext(fits) == fits
    assert english.pgettext("any", fits) == fits
    assert TRANSLATED == ("zh",)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_message_has_a_translation(lang: str) -> None:
    empty = []
    for message in catalog(lang):
        if not message.id:
            continue  # the header
        strings = strings_of(message.string)
        if not all(s.strip() for s in strings) or message.fuzzy:
            empty.append(message.id)
    assert empty == [], f"{lang}: {len(empty)} messages without a (non-fuzzy) translation: {empty[:10]}"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_catalog_holds_exactly_the_templates_messages(lang: str) -> None:
    in_templates = set(extracted())
    in_catalog = {
        (message.id[0] if isinstance(message.id, tuple) else message.id, message.context)
        for message in catalog(lang)
        if message.id
    }
    missing = sorted(in_templates - in_catalog, key=str)
    stale = sorted(in_catalog - in_templates, key=str)
    assert missing == [], f"{lang}: messages the templates print but the catalog lacks: {missing[:10]}"
    assert stale == [], f"{lang}: catalog messages no template prints any more: {stale[:10]}"
    assert len(in_templates) > 200


def test_plural_messages_are_plural_in_every_catalog() -> None:
    plural_ids = {key for key, message in extracted().items() if isinstance(message, tuple)}
    for lang in TRANSLATED:
        forms = catalog(lang).num_plurals
        for message in catalog(lang):
            key = (message.id[0] if isinstance(message.id, tuple) else message.id, message.context)
            if key in plural_ids:
                assert isinstance(message.string, tuple), (lang, key)
                assert len(message.string) == forms, (lang, key)
    assert catalog("zh").num_plurals == 1  # Chinese has one form


@pytest.mark.parametrize("lang", TRANSLATED)
def test_translations_keep_the_messages_placeholders(lang: str) -> None:
    """A translation may reorder `%(name)s`, not lose one or invent one (a lost number is a wrong answer)."""
    wrong = []
    for message in catalog(lang):
        if not message.id:
            continue
        expected: set[str] = set().union(*(PLACEHOLDER.findall(i) for i in strings_of(message.id)))
        for string in strings_of(message.string):
            found = set(PLACEHOLDER.findall(string))
            plural_count_dropped = isinstance(message.id, tuple) and found == expected - {"num", "count"}
            if found != expected and not plural_count_dropped:
                wrong.append((message.id, string))
    assert wrong == [], wrong[:5]


def test_a_template_is_shared_or_exists_in_every_language() -> None:
    shared = {path.stem for path in TEMPLATES_DIR.glob("*.j2")}
    per_lang = {lang: {path.stem for path in (TEMPLATES_DIR / lang).glob("*.j2")} for lang in LANGS}
    assert per_lang["en"] == per_lang["zh"], per_lang["en"] ^ per_lang["zh"]
    assert not shared & per_lang["en"], shared & per_lang["en"]
    assert len(shared) > len(per_lang["en"])  # most kinds share one template
    for name in shared:
        assert template_name(name, "zh") == f"{name}.j2"


def test_each_language_environment_prints_its_own_words() -> None:
    """The same shared template, two environments: each says its own language's sentence."""
    assert "gpufit" in render("bot_start", "en", user_name="Ann", examples=["x"])
    assert render("bot_start", "en", user_name="Ann", examples=["x"]).startswith("<b>Hi Ann!")
    assert render("bot_start", "zh", user_name="安", examples=["x"]).startswith("<b>你好，安！")
    assert environment("en") is not environment("zh")
    assert environment("fr") is environment("en")  # unknown languages fall back to English
