"""The answer of a kind whose view is its advisor's typed result (`KindSpec.advised`): no view builder of its
own, and still its buttons and its chart, declared by its row in bot/answer/kinds_table.py.

Its template, templates/<kind>.j2, shows the result as `v`. Its buttons are rows of actions (what
`bot.answer.apply_action` applies: 'card=<id>', 'precision=int4', 'currency=cny', 'ask=<question>' …);
a button whose words are the kind's own is worded by a `button(field, value)` macro in that same template
(its Chinese in the catalog with the template's other sentences), any other by templates/_buttons.j2, so
a kind with buttons of its own words touches no shared template. Its chart is a spec of one of the shapes
bot/charts draws (bot/charts/spec.py), built from the result; the chart's words are those shapes' own.
"""

from __future__ import annotations

import html as html_lib
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from pydantic import BaseModel

from bot.answer.buttons import button
from bot.answer.common import answer_currency, pack, registry_label
from bot.answer.model import Answer, Button, Lang, TypedNames
from bot.charts.spec import ChartSpec
from bot.render import environment, template_name
from core.answer_kind import AnswerKind
from core.catalog import load_catalog
from core.query import Currency, Query

Result = TypeVar("Result", bound=BaseModel)
# A view builder for a kind a stored query rebuilds: (query, language, names read in) → the answer.
Rebuild = Callable[[Query, Lang, TypedNames], Answer]
# What a kind's row makes of its result for the JSON, the buttons and the chart.
Facts = Callable[[Result, Query], Mapping[str, object]]
ButtonRows = Callable[[Result, Query], Sequence[Sequence[str]]]
Chart = Callable[[Result, Query, Lang], ChartSpec | None]


def advised_view(
    kind: AnswerKind,
    advise: Callable[[Query], Result],
    *,
    currency: bool,
    facts: Facts[Result] | None = None,
    buttons: ButtonRows[Result] | None = None,
    chart: Chart[Result] | None = None,
) -> Rebuild:
    """The view builder `KindSpec.advised` gives its kind: advise (in the answer's currency when the currency
    changes the figures and none was said), render the result, add the row's buttons and chart."""

    def view(query: Query, lang: Lang, typed: TypedNames) -> Answer:
        asked = query
        # advised in the answer's currency: the language's, unless one was said
        if currency and query.currency is None:
            asked = query.model_copy(update={"currency": Currency(answer_currency(query, lang))})
        result = advise(asked)
        json = facts(result, query) if facts is not None else {kind.value: result.model_dump(mode="json")}
        rows = [list(row) for row in buttons(result, query)] if buttons is not None else []
        return pack(
            kind,
            lang,
            kind.value,
            result,
            query=query,
            facts=json,
            buttons=worded(lang, kind.value, result, rows) if rows else None,
            chart=chart(result, query, lang) if chart is not None else None,
        )

    return view


def worded(lang: Lang, template: str, result: BaseModel, rows: Sequence[Sequence[str]]) -> list[list[Button]]:
    """Each action as a button: in the kind's own words where its template's `button(field, value)` macro
    has some for it (the macro sees the result as `v`), else in templates/_buttons.j2's (a card's or a
    model's button is its name)."""
    own = _own_words(lang, template, result)
    return [[_button(lang, action, own) for action in row] for row in rows if row]


def _own_words(lang: Lang, template: str, result: BaseModel) -> Callable[[str, str], str] | None:
    """The template's `button` macro, or None when it has none. The template's module is made with the
    answer's context (its body needs `v`), once per answer that has buttons."""
    module = (
        environment(lang)
        .get_template(template_name(template, lang))
        .make_module({"lang": lang, "v": result, "compact": True, "short": True})
    )
    macro = getattr(module, "button", None)
    if macro is None:
        return None
    return lambda field, value: " ".join(html_lib.unescape(str(macro(field, value))).split())


def _button(lang: Lang, action: str, own: Callable[[str, str], str] | None) -> Button:
    field, _, value = action.partition("=")
    label = own(field, value) if own is not None else ""
    if label:
        return Button(label=label, action=action)
    if field == "card" and value in load_catalog().by_id:
        return button(lang, action, card=load_catalog().get(value).name)
    if field == "model":
        return button(lang, action, card=registry_label(value))
    return button(lang, action)
