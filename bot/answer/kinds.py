"""Answers about a setup rather than one job: the largest model it takes, whether a card suits a kind of
job, and the reply to messages outside gpufit's job."""

from __future__ import annotations

from bot.answer.buttons import button
from bot.answer.clarify import clarify_answer, unknown_card_answer
from bot.answer.common import call_macro, pack, registry_label
from bot.answer.model import Answer, Lang
from bot.answer.views import CardAdviceView, ExamplesView, LargestModelView
from bot.charts import adapter as charts
from core.advisor.card_advice import card_advice
from core.advisor.fit_advice import card_named
from core.advisor.largest_model import jobs_for, largest_models
from core.answer_kind import AnswerKind
from core.catalog import Card, load_catalog
from core.query import DEFAULT_BATCH, DEFAULT_SEQ, Query, Task


def _card_for(query: Query) -> Card | None:
    """The card the question names, or a card of the memory it names ('a 24GB card')."""
    card = card_named(query.card)
    if card is not None or query.card_memory_bytes is None:
        return card
    sold = load_catalog().with_memory(query.card_memory_bytes)
    return sold[0] if sold else None


def largest_model_answer(query: Query | None, lang: Lang) -> Answer:
    """'两张3090最大能LoRA多大的模型': per job, the largest size that runs, with real models of that size."""
    query = query or Query(kind=AnswerKind.LARGEST_MODEL)
    card = _card_for(query)
    if card is None:
        if query.card:
            return unknown_card_answer(lang, query.card, load_catalog().closest(query.card), query)
        return clarify_answer(lang, "card", query)
    gpus = query.gpus or 1
    rows = largest_models(card, gpus, jobs_for(query), query)
    names = {model_id: registry_label(model_id) for row in rows for model_id in row.examples}
    view = LargestModelView(
        card=card,
        gpus=gpus,
        rows=rows,
        names=names,
        seq=query.seq or DEFAULT_SEQ,
        batch=query.batch or DEFAULT_BATCH,
        memory_typed=query.card is None,
        pretrain=any(row.job.task is Task.PRETRAIN for row in rows),
    )
    buttons = [[button(lang, f"gpus={n}") for n in (1, 2, 4, 8) if n != gpus]]
    return pack(
        "largest_model",
        lang,
        "largest_model",
        view,
        query=query,
        buttons=buttons,
        facts={"largest_model": [row.as_json() for row in rows], "card": card.id, "gpus": gpus},
        chart=charts.largest_model_chart(rows, card_name=card.name, gpus=gpus, names=names) if rows else None,
    )


def card_advice_answer(lang: Lang, card_id: str, query: Query | None) -> Answer:
    """'H20适合训练吗': the card against the usual cards for the job, a rating, and what it suits."""
    card = card_named(card_id)
    if card is None:
        return unknown_card_answer(lang, card_id, load_catalog().closest(card_id), query)
    task = query.task if query is not None else Task.INFERENCE
    advice = card_advice(card, task)
    catalog = load_catalog()
    other = Task.INFERENCE if task is not Task.INFERENCE else Task.FINETUNE
    view = CardAdviceView(
        card=card,
        advice=advice,
        refs={ref: catalog.get(ref) for ref in advice.compared_with}
        | {advice.ratios.card: catalog.get(advice.ratios.card)},
        names={model_id: registry_label(model_id) for row in advice.suits for model_id in row.examples},
        size=query.params_b if query is not None else None,
        other_task=other.value,
        other_rating=card_advice(card, other).rating,
    )
    buttons = [[button(lang, f"ask={q}") for q in _advice_questions(lang, card, other)]]
    return pack(
        "card_advice",
        lang,
        "card_advice",
        view,
        query=query,
        buttons=buttons,
        facts={"card_advice": advice.as_json()},
    )


def _advice_questions(lang: Lang, card: Card, other: Task) -> list[str]:
    text = call_macro(lang, "_buttons", "advice_questions", card.name, other.value)
    return [line.strip() for line in text.splitlines() if line.strip()]


def out_of_scope_answer(lang: Lang, *, understood: bool = True) -> Answer:
    """A message outside gpufit's job (weather, poems, greetings): what gpufit does and three example
    questions. A message gpufit could not read at all ('asdf'): "I didn't understand that" and two."""
    text = call_macro(lang, "_buttons", "scope_questions")
    examples = [line.strip() for line in text.splitlines() if line.strip()][: 3 if understood else 2]
    return pack(
        "out_of_scope" if understood else "clarify",
        lang,
        "out_of_scope",
        ExamplesView(examples=examples, understood=understood),
        buttons=[[button(lang, f"ask={q}")] for q in examples],
        facts={} if understood else {"missing": "understanding"},
    )
