"""The article's questions (FAQ), scenario recommendations and help."""

from __future__ import annotations

import logging
from typing import Any

from bot.answer.buttons import button
from bot.answer.common import answer_currency, call_macro, pack
from bot.answer.fit import fit_view
from bot.answer.model import FAQ_IDS, SCENARIO_IDS, Answer, Lang
from core import advisor
from core.advisor import card_price
from core.catalog import Card, load_catalog
from core.estimator import UnknownCardError, UnknownModelError, estimate
from core.query import Currency, Method, Query, Task

log = logging.getLogger(__name__)


def faq_answer(lang: Lang, faq_id: str, query: Query | None) -> Answer:
    if faq_id not in FAQ_IDS:
        return help_answer(lang)
    catalog = load_catalog()
    currency = answer_currency(query, lang)
    cards = {cid: catalog.get(cid) for cid in FAQ_CARDS}
    data: dict[str, Any] = {"cards": cards, "faq": faq_id, "examples": [], "decode": {}, "prices": {}}
    if faq_id == "folk_rule":
        data["examples"] = _folk_examples(query, lang)
    elif faq_id == "bandwidth":
        data["decode"] = _decode_examples(cards)
    elif faq_id == "vram_price":
        data["prices"] = {
            "small": card_price("a100-40gb-sxm", Currency(currency)),
            "big": card_price("a100-80gb-sxm", Currency(currency)),
        }
    return pack("faq", lang, f"faq_{faq_id}", data, query=query, facts={"faq": faq_id})


FAQ_CARDS = ("rtx-4090", "a100-80gb-sxm", "h100-sxm", "a100-40gb-sxm")


def _folk_examples(query: Query | None, lang: Lang) -> list[dict[str, Any]]:
    """The user's own job when they named one, else the article's 7B example as full fine-tune and LoRA."""
    if query is not None and (query.model or query.params_b):
        samples = [query.model_copy(update={"card": None, "card_memory_bytes": None})]
    else:
        samples = [
            Query(task=Task.FINETUNE, method=Method.FULL, params_b=7.0),
            Query(task=Task.FINETUNE, method=Method.LORA, params_b=7.0),
        ]
    views = []
    for sample in samples:
        try:
            views.append(fit_view(sample, lang, light=True)[1])
        except (UnknownModelError, UnknownCardError):
            continue
    return views


def _decode_examples(cards: dict[str, Card]) -> dict[str, float]:
    """Tokens/s one 8B bf16 model decodes at on each card: the bandwidth FAQ's worked example."""
    from core import speed

    result: dict[str, float] = {}
    for card_id, card in cards.items():
        est = estimate(Query(model="llama-3.1-8b", card=card_id))
        result[card_id] = speed.inference_speed(est, card, 1).decode_tokens_per_s
    return result


def scenario_answer(lang: Lang, name: str, query: Query | None) -> Answer:
    if name not in SCENARIO_IDS:
        return help_answer(lang)
    currency = answer_currency(query, lang)
    advice = advisor.scenario(name, currency=Currency(currency))
    catalog = load_catalog()
    names = {c.id: c.name for c in catalog.cards}
    return pack(
        "scenario",
        lang,
        f"scenario_{name}",
        {"a": advice, "names": names, "scenario": name, "currency": currency},
        query=query,
        facts={"scenario": name, "advice": advice.model_dump(mode="json")},
    )


def help_answer(lang: Lang) -> Answer:
    text = call_macro(lang, "_buttons", "help_questions")
    examples = [line.strip() for line in text.splitlines() if line.strip()]
    return pack(
        "help",
        lang,
        "help",
        {"examples": examples},
        buttons=[[button(lang, f"ask={q}")] for q in examples[:3]],
    )
