"""Card facts and comparisons of two or more cards."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, replace

from bot.answer.buttons import button
from bot.answer.clarify import unknown_card_answer
from bot.answer.common import answer_currency, call_macro, model_label, pack
from bot.answer.market import platform_facts
from bot.answer.model import Answer, Lang
from bot.answer.views import CardSheetView, CardView, CompareRowView, CompareView, SheetRow
from bot.charts import adapter as charts
from bot.render import (
    fmt_card_name,
)
from core.advisor import Comparison, card_price, compare_cards
from core.advisor.fit_advice import card_named
from core.advisor.largest_model import LargestJob, largest_sizes
from core.advisor.leaders import SpecLeaders, spec_leaders
from core.catalog import Card, load_catalog
from core.cost import price_book_in_force
from core.platforms import platform
from core.query import Currency, Method, Precision, Query, Task


def card_view(card: Card, currency: str) -> CardView:
    return CardView(card=card, price=card_price(card.id, Currency(currency)), memory_bytes=card.memory_bytes)


def card_answer(lang: Lang, card_id: str, query: Query | None) -> Answer:
    card = card_named(card_id)
    if card is None:
        return unknown_card_answer(lang, card_id, load_catalog().closest(card_id), query)
    currency = answer_currency(query, lang)
    view = card_view(card, currency)
    named = platform(query.platform if query is not None else None)
    book = price_book_in_force()
    if named is not None and book is not None:
        # 'autodl 5090 多少钱': that platform's price; said plainly when it does not sell the card
        sells = book.sells(named, card.id)
        own = book.price_for(card.id, Currency(currency), named) if sells else None
        view = replace(view, platform=named, platform_sells=sells, price=own or view.price)
    fits = what_fits(card)
    buttons = [[button(lang, f"ask={q}") for q in _card_questions(lang, card)]]
    return pack(
        "card",
        lang,
        "card",
        CardSheetView(sheet=view, fits=fits),
        query=query,
        buttons=buttons,
        facts={
            "card": card.id,
            "cards": [_card_facts(view)],
            "what_fits": [asdict(row) for row in fits],
            "platform": platform_facts(query, card.id),
        },
    )


def _card_questions(lang: Lang, card: Card) -> list[str]:
    text = call_macro(lang, "_buttons", "card_questions", fmt_card_name(card.name))
    return [line.strip() for line in text.splitlines() if line.strip()]


def _card_facts(view: CardView) -> dict[str, object]:
    card = view.card
    return card.model_dump(mode="json", exclude={"aliases", "notes", "source"}) | {
        "memory_bytes": card.memory_bytes,
        "price": view.price.model_dump(mode="json") if view.price else None,
    }


# The card sheet's four typical jobs (their largest sizes come from the largest-model search).
_SHEET_JOBS = {
    "inference": LargestJob(task=Task.INFERENCE, method=None, precision=Precision.BF16),
    "inference_int4": LargestJob(task=Task.INFERENCE, method=None, precision=Precision.INT4),
    "lora": LargestJob(task=Task.FINETUNE, method=Method.LORA, precision=Precision.BF16),
    "qlora": LargestJob(task=Task.FINETUNE, method=Method.QLORA, precision=Precision.NF4),
}


def what_fits(card: Card) -> list[SheetRow]:
    """The largest dense size that fits one card for four typical jobs: the same search (and so the same
    figures) as "what's the largest model I can run on it?" (core.advisor.largest_model)."""
    sizes = largest_sizes(card, 1, list(_SHEET_JOBS.values()))
    return [
        SheetRow(job=name, params_b=size, precision=job.precision.value)
        for name, (job, size) in zip(_SHEET_JOBS, sizes, strict=True)
    ]


def compare_answer(
    lang: Lang, card_ids: list[str], query: Query | None, counts: Mapping[str, int] | None = None
) -> Answer:
    cards: list[Card] = []
    for card_id in card_ids:
        card = card_named(card_id)
        if card is None:
            return unknown_card_answer(lang, card_id, load_catalog().closest(card_id), query)
        if card not in cards:
            cards.append(card)
    if len(cards) < 2:
        return card_answer(lang, cards[0].id, query)
    currency = answer_currency(query, lang)
    views = [card_view(c, currency) for c in cards[:6]]
    comparison = None
    if query is not None and (query.model or query.params_b):
        comparison = compare_cards(
            query, cards[:6], book=price_book_in_force(), currency=Currency(currency), counts=counts
        )
    rows = [
        CompareRowView(row=row, card=card_named(row.card), verdict=row.assessment.verdict)
        for row in (comparison.rows if comparison else [])
    ]
    first = comparison.rows[0].assessment.estimate if comparison and comparison.rows else None
    leaders = _leaders(views)
    return pack(
        "compare",
        lang,
        "compare",
        CompareView(
            cards=views,
            leaders=leaders,
            rows=rows,
            comparison=comparison,
            model_name=model_label(first, lang) if first else None,
            q=first.query if first else None,
        ),
        query=query,
        filled=first.query if first else None,
        facts={
            "cards": [_card_facts(v) for v in views],
            "verdicts": [r.verdict.model_dump(mode="json") for r in rows if r.verdict is not None],
            "compare": _compare_facts(comparison, views),
        },
        chart=(
            charts.compare_chart(comparison, model_name=model_label(first, lang), currency=currency)
            if comparison is not None and first is not None
            else None
        ),
    )


def _compare_facts(comparison: Comparison | None, views: list[CardView]) -> dict[str, object]:
    """`compare`: the cards, one row each (the job's figures when a job was named), the winners."""
    if comparison is None:
        return {
            "cards": [v.card.id for v in views],
            "rows": [],
            "winner": {"speed": None, "cost": None},
            "concurrency": None,
        }
    return {
        "cards": comparison.cards,
        "rows": [
            {
                "card": row.card,
                "count": row.count,
                "fits": row.fits,
                "verdict": row.assessment.verdict.fits.value if row.assessment.verdict else None,
                "tokens_per_s": row.tokens_per_s,
                "hours": row.hours,
                "cost": row.cost,
                "cost_basis": row.cost_basis,
                "holds": row.holds,
                "currency": row.assessment.cost.currency.value if row.assessment.cost else None,
            }
            for row in comparison.rows
        ],
        "winner": {"speed": comparison.speed_winner, "cost": comparison.cost_winner},
        "concurrency": comparison.concurrency,
    }


def _leaders(views: list[CardView]) -> SpecLeaders:
    """The card that leads on each spec (core/advisor/leaders.py), among the cards shown."""
    per_hour = {v.card.id: v.price.per_hour for v in views if v.price is not None}
    return spec_leaders([v.card for v in views], per_hour)
