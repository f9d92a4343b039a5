"""A kind whose view is its advisor's typed result (`KindSpec.advised`) declares its buttons and its chart in
its row: the buttons worded by its own template's `button` macro where it has words for them, else by
templates/_buttons.j2 (a card's button is its name), and the chart with its "📊 Chart" button last. So a
kind with buttons and a chart needs no view builder and no shared template of its own."""

from __future__ import annotations

import pytest
from jinja2 import ChoiceLoader, DictLoader, Environment

from bot.answer import advised
from bot.answer.buttons import button
from bot.answer.kinds_table import KindSpec
from bot.answer.model import CHART_ACTION, NOTHING_READ_IN, Lang
from bot.charts import caption, render_png
from bot.charts.spec import ChartJob, OptionPoint, OptionsChart
from bot.render import environment, fmt_card_name
from core.advisor.cards_with_memory import CardsWithMemory, cards_with_memory
from core.answer_kind import AnswerKind
from core.query import Currency, Query
from core.units import GIB

ASKED = Query(kind=AnswerKind.CARDS_WITH_MEMORY, card_memory_bytes=48 * GIB)


def _buttons(result: CardsWithMemory, query: Query) -> list[list[str]]:
    return [[f"card={row.card}" for row in result.cards[:2]], ["precision=int4"]]


def _chart(result: CardsWithMemory, query: Query, lang: str) -> OptionsChart | None:
    points = [
        OptionPoint(card_name=row.name, x=row.price.per_hour, y=row.bandwidth_gb_s)
        for row in result.cards
        if row.price is not None
    ]
    if not points:
        return None
    return OptionsChart(
        source="compare",
        model_name="48 GB",
        job=ChartJob(task="inference"),
        x_metric="cost_per_hour",
        y_metric="tokens_per_s",
        currency=result.currency.value,
        points=points,
    )


SPEC = KindSpec.advised(
    AnswerKind.CARDS_WITH_MEMORY,
    cards_with_memory,
    needs=lambda query: query.card_memory_bytes is not None,
    currency=True,
    buttons=_buttons,
    chart=_chart,
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_advised_kind_carries_its_buttons_and_chart(lang: Lang) -> None:
    assert SPEC.chart and SPEC.recomputable
    assert SPEC.rebuild is not None
    reply = SPEC.rebuild(ASKED, lang, NOTHING_READ_IN)
    plain = KindSpec.advised(
        AnswerKind.CARDS_WITH_MEMORY,
        cards_with_memory,
        needs=lambda query: query.card_memory_bytes is not None,
        currency=True,
    ).rebuild
    assert plain is not None
    bare = plain(ASKED, lang, NOTHING_READ_IN)
    # the same answer, plus its buttons and chart
    assert reply.html == bare.html and reply.facts == bare.facts
    assert bare.buttons == [] and bare.chart is None
    first, second, last = reply.buttons
    currency = Currency.CNY if lang == "zh" else Currency.USD
    result = cards_with_memory(ASKED.model_copy(update={"currency": currency}))
    assert [b.action for b in first] == [f"card={row.card}" for row in result.cards[:2]]
    # templates/_buttons.j2: a card's button is its name
    assert [b.label for b in first] == [fmt_card_name(row.name) for row in result.cards[:2]]
    assert [b.action for b in second] == ["precision=int4"] and second[0].label
    assert [b.action for b in last] == [CHART_ACTION]
    assert isinstance(reply.chart, OptionsChart)
    assert render_png(reply.chart, lang).startswith(b"\x89PNG")
    assert caption(reply.chart, lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_buttons_in_the_kinds_own_words(monkeypatch: pytest.MonkeyPatch, lang: Lang) -> None:
    """A `button(field, value)` macro in the kind's template words the buttons it has words for (it sees the
    result as `v`); an empty word leaves the button to templates/_buttons.j2."""
    own = (
        "{% macro button(field, value) %}"
        "{% if field == 'currency' %}{% trans %}Prices in {% endtrans %}"
        "{{ value | upper }} ({{ v.cards | length }})"
        "{% endif %}{% endmacro %}"
        "{{ v.asked_gib }}"
    )
    real = environment(lang)
    assert real.loader is not None
    own_loader = DictLoader({"own_kind.j2": own, f"{lang}/own_kind.j2": own})
    env: Environment = real.overlay(loader=ChoiceLoader([own_loader, real.loader]))
    monkeypatch.setattr(advised, "environment", lambda name: env)
    result = cards_with_memory(ASKED)
    rows = advised.worded(lang, "own_kind", result, [["currency=cny", "precision=int4"], []])
    assert len(rows) == 1
    currency, precision = rows[0]
    assert currency.label == f"Prices in CNY ({len(result.cards)})"
    assert precision.action == "precision=int4"
    assert precision.label == button(lang, "precision=int4").label
