"""How many cards: the count as the headline, then why (memory per card, the parallelism, nodes), and the
verdict for the count the user asked about. Fit answers that do not fit carry the same search's result."""

from __future__ import annotations

from typing import Any

from bot.answer.buttons import button
from bot.answer.clarify import unknown_model_answer
from bot.answer.common import answer_currency, card_or_none, model_label, pack
from bot.answer.model import Answer, Lang
from core.advisor.card_advice import advice_rules
from core.advisor.cards_needed import (
    MAX_NODES,
    NODE_SIZE,
    CardsNeeded,
    as_served,
    cards_needed,
    fits_as_asked,
)
from core.assessment import Assessment, assess
from core.catalog import Card, load_catalog
from core.cost import price_book_in_force
from core.estimator import Estimate, UnknownModelError, estimate, resolve_model
from core.query import Currency, Query, Task
from core.registry import load_registry


def usual_cards(task: Task) -> list[Card]:
    """Cards to size a job on when the question names none: the usual cards for that kind of job
    (data/card_advice.toml), the job's own kind first."""
    rules = advice_rules()
    inference, training = rules["inference"].reference, rules["training"].reference
    ordered = [*inference, *training] if task is Task.INFERENCE else [*training, *inference]
    ids = dict.fromkeys(ordered)
    catalog = load_catalog()
    return [catalog.get(i) for i in ids if i in catalog.by_id]


def needed_for(query: Query, card: Card, currency: str) -> CardsNeeded | None:
    """The smallest count of `card` for the job, priced in the answer's currency."""
    stripped = query.model_copy(update={"question": None})
    return cards_needed(stripped, card, book=price_book_in_force(), currency=Currency(currency))


def needed_facts(stated: Query, est: Estimate, currency: str) -> dict[str, Any] | None:
    """`cards_needed` for a fit answer whose card count does not run the job (None when it does, or when
    there is no card). Sized from what the user stated, so unsaid details get this search's defaults
    (inference over several cards under a tensor-parallel engine)."""
    card = card_or_none(est.query.card)
    if card is None:
        return None
    asked = _asked(stated, card, currency)
    if fits_as_asked(asked):
        return None
    on_card = stated.model_copy(update={"card": card.id, "card_memory_bytes": None})
    needed = needed_for(on_card, card, currency)
    return needed.as_json() if needed is not None else None


def _asked(query: Query, card: Card, currency: str) -> Assessment:
    stripped = as_served(
        query.model_copy(update={"question": None, "card": card.id, "card_memory_bytes": None})
    )
    count = stripped.gpus or 1
    return assess(stripped, card, count, book=None, currency=Currency(currency), speed=False)


def _heads(query: Query) -> dict[str, int]:
    model = resolve_model(query, load_registry())
    return {"heads": model.heads, "kv_heads": model.n_kv_heads, "mla": int(model.is_mla)}


def _row(needed: CardsNeeded | None, card: Card) -> dict[str, Any]:
    return {"card": card, "needed": needed, "job": needed.job if needed else None}


def _variants(filled: Query) -> list[str]:
    """Buttons that ask the same question for a lighter job: another precision, another method."""
    if filled.task is Task.INFERENCE:
        return [f"precision={p}" for p in ("bf16", "int8", "int4") if p != filled.precision]
    if filled.task is Task.FINETUNE:
        return [f"method={m}" for m in ("full", "lora", "qlora") if m != filled.method]
    return []


def cards_needed_answer(query: Query, lang: Lang) -> Answer:
    """'要几张 L20' / 'how many H100s': the smallest count that runs the job, on the card named or, with
    none named, on each of the usual cards for the job."""
    currency = answer_currency(query, lang)
    try:
        est = estimate(query.model_copy(update={"question": None}))
    except UnknownModelError as err:
        return unknown_model_answer(lang, err.name, err.suggestions, query)
    named = card_or_none(query.card)
    cards = [named] if named is not None else usual_cards(est.query.task)
    rows = [_row(needed_for(query, card, currency), card) for card in cards]
    main = rows[0]
    asked = _asked(query, main["card"], currency)
    needed: CardsNeeded | None = main["needed"]
    job = needed.job if needed else None
    view = {
        "model_name": model_label(est, lang),
        "q": job.query if job else est.query,
        "card": main["card"],
        "named": named is not None,
        "needed": needed,
        "rows": rows,
        "asked": asked,
        "asked_stated": "gpus" in query.said(),
        "heads": _heads(est.query),
        "speed": job.speed_json() if job else None,
        "cost": job.cost if job else None,
        "currency": currency,
        "max_count": MAX_NODES * NODE_SIZE,
    }
    facts: dict[str, Any] = {
        "model_name": est.model_name,
        "cards_needed": needed.as_json() if needed else None,
        "verdict": asked.verdict.fits.value if asked is not None and asked.verdict else None,
        "options": [
            r["needed"].as_json() if r["needed"] else {"card": r["card"].id, "count": None} for r in rows
        ],
        "speed": view["speed"],
        "cost": job.cost.model_dump(mode="json") if job and job.cost else None,
    }
    buttons = [[button(lang, action) for action in _variants(est.query)]]
    return pack(
        "cards_needed",
        lang,
        "cards_needed",
        {"v": view},
        query=query,
        filled=job.query if job else est.query,
        buttons=buttons,
        facts=facts,
    )
