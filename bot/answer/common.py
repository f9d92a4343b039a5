"""Small pieces every kind of answer uses: packing rendered HTML into an `Answer`, labels from templates."""

from __future__ import annotations

import html as html_lib
import logging
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, cast

from bot.answer.model import CHART_ACTION, Answer, Button, CompactForm, Facts, Kind, Lang
from bot.answer.views import View
from bot.charts.spec import ChartSpec
from bot.render import (
    TELEGRAM_LIMIT,
    environment,
    plain_text,
    render,
    split_message,
    template_name,
    utf16_len,
)
from core.answer_kind import AnswerKind
from core.estimator import Estimate
from core.query import Currency, Query
from core.registry import load_registry

log = logging.getLogger(__name__)


def to_lang(value: object) -> Lang:
    return "zh" if str(value).lower().startswith("zh") else "en"


def pack(
    kind: Kind | str,
    lang: Lang,
    template: str,
    view: View,
    *,
    query: Query | None = None,
    filled: Query | None = None,
    compact_template: str | None = None,
    buttons: list[list[Button]] | None = None,
    facts: Mapping[str, object] | Callable[[], Mapping[str, object]] | None = None,
    chart: ChartSpec | None = None,
) -> Answer:
    """Render the typed view (the template reads it as `v`) in full and compact forms, keep both inside
    Telegram's limit, derive title and summary; an answer with a chart gets the "📊 Chart" button as its
    last row. `facts` may be given as how to work them out: only `gpufit ask --json` reads them (Facts)."""
    html = render(template, lang, compact=False, short=False, v=view)
    if utf16_len(html) > TELEGRAM_LIMIT:
        html = render(template, lang, compact=False, short=True, v=view)
    if utf16_len(html) > TELEGRAM_LIMIT:
        html = split_message(html, TELEGRAM_LIMIT)[0]
    compact_name = compact_template or template
    return Answer(
        kind=AnswerKind(kind),
        lang=lang,
        query=query,
        filled_query=filled,
        html=html,
        compact=CompactForm(
            lambda: _compact_form(kind, lang, compact_name, view), lambda: _with_heading(kind, html)
        ),
        buttons=[*(buttons or []), *([[chart_button(lang)]] if chart is not None else [])],
        lazy_facts=Facts.later(facts) if callable(facts) else Facts.of(facts or {}),
        chart=chart,
    )


def _compact_form(kind: Kind | str, lang: Lang, template: str, view: View) -> tuple[str, str, str]:
    """The compact form kept inside Telegram's limit, with its title and summary (see CompactForm)."""
    compact = render(template, lang, compact=True, short=True, v=view)
    if utf16_len(compact) > TELEGRAM_LIMIT:
        compact = split_message(compact, TELEGRAM_LIMIT)[0]
    return _with_heading(kind, compact)


def _with_heading(kind: Kind | str, compact: str) -> tuple[str, str, str]:
    """(HTML, title, summary): the title is the first line, the summary the other lines in one."""
    lines = [line.strip() for line in plain_text(compact).splitlines() if line.strip()]
    title = lines[0] if lines else str(kind)
    summary = " ".join(lines[1:]) if len(lines) > 1 else title
    return compact, title[:256], summary[:512]


def chart_button(lang: Lang) -> Button:
    """The button under answers that have a chart; its words live in templates/<lang>/_buttons.j2."""
    return Button(label=call_macro(lang, "_buttons", "label", "chart", "").strip(), action=CHART_ACTION)


def answer_currency(query: Query | None, lang: Lang) -> str:
    if query is not None and query.currency is not None:
        return query.currency.value
    return Currency.CNY.value if lang == "zh" else Currency.USD.value


@lru_cache(maxsize=32)
def _macro_module(lang: Lang, module: str) -> Any:
    """templates/<lang>/<module>.j2 instantiated once per language (its macros are pure)."""
    return environment(lang).get_template(template_name(module, lang)).make_module({"lang": lang})


def call_macro(lang: Lang, module: str, name: str, *args: Any, **kwargs: Any) -> str:
    """A macro of templates/<lang>/<module>.j2 as plain text: labels and example questions live in templates
    like every other sentence, but buttons want text, not HTML.

    The macros are pure (their module is instantiated once per language, _macro_module), so a call whose
    arguments are all plain values (str, int, float, bool, None: compared by type too, so 13 and 13.0 stay
    apart) is answered from a cache: an answer's eight-odd button labels are the same few words again and
    again, and each macro call cost as much as a small template."""
    if all(type(value) in _PLAIN for value in (*args, *kwargs.values())):
        return _called_macro(lang, module, name, args, tuple(kwargs.items()))
    return _call_macro(lang, module, name, args, kwargs)


_PLAIN = frozenset({str, int, float, bool, type(None)})


@lru_cache(maxsize=8192, typed=True)
def _called_macro(
    lang: Lang, module: str, name: str, args: tuple[Any, ...], kwargs: tuple[tuple[str, Any], ...]
) -> str:
    return _call_macro(lang, module, name, args, dict(kwargs))


def _call_macro(lang: Lang, module: str, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    macro = cast(Callable[..., str], getattr(_macro_module(lang, module), name))
    return html_lib.unescape(str(macro(*args, **kwargs)))


def model_label(est: Estimate, lang: str) -> str:
    """The model's name; a bare size is called by its size ('13B model'), worded by the templates."""
    if not est.representative_shape:
        return est.model_name
    size = est.query.params_b or round(est.params / 1e9, 1)
    return call_macro(to_lang(lang), "_words", "size_model", size).strip()


def registry_label(model_id: str) -> str:
    registry = load_registry()
    return registry.get(model_id).name if model_id in registry.by_id else model_id
