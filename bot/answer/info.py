"""The article's questions (FAQ), scenario recommendations and help."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.answer.buttons import button
from bot.answer.common import answer_currency, call_macro, pack
from bot.answer.fit import fit_view
from bot.answer.model import FAQ_IDS, SCENARIO_IDS, Answer, Lang
from bot.answer.views import CardPair, DecodeExample, ExamplesView, FaqView, FitView, PricePair, ScenarioView
from core import advisor
from core.advisor.bigger_card import bigger_cards
from core.catalog import Card, load_catalog
from core.cost import CardPrice, price_book_in_force
from core.estimator import UnknownCardError, UnknownModelError, estimate
from core.query import Currency, Method, Query, Task
from core.vision import VisionJob

log = logging.getLogger(__name__)


def faq_answer(
    lang: Lang,
    faq_id: str,
    query: Query | None,
    card_ids: Sequence[str] = (),
    wanted_bytes: int | None = None,
) -> Answer:
    """One of the article's questions; about the cards the user named, when they named any."""
    if faq_id not in FAQ_IDS:
        return help_answer(lang)
    catalog = load_catalog()
    currency = Currency(answer_currency(query, lang))
    named_cards = [catalog.by_id[c] for c in card_ids if c in catalog.by_id]
    named = named_cards[0] if named_cards else None
    examples: list[FitView] = []
    decode: list[DecodeExample] = []
    prices = PricePair()
    bigger: list[tuple[Card, CardPrice]] = []
    pair: CardPair | None = None
    if faq_id == "folk_rule":
        examples = _folk_examples(query, lang)
    elif faq_id == "bandwidth":
        decode = _decode_examples(named)
    elif faq_id == "vram_price":
        # the cards the user named, smaller memory first, else one card's two memory variants
        # ('4090 48G魔改版和原版'): a modded board beside the stock card it is built from
        paired = named_cards[:2]
        if len(paired) == 1 and paired[0].base is not None and paired[0].base in catalog.by_id:
            paired.append(catalog.get(paired[0].base))
        by_memory = sorted(paired, key=lambda c: c.memory_bytes) if len(paired) >= 2 else []
        small, big = (
            (by_memory[0], by_memory[1])
            if by_memory
            else (catalog.get(VARIANT_PAIR[0]), catalog.get(VARIANT_PAIR[1]))
        )
        pair = CardPair(small=small, big=big)
        book = price_book_in_force()
        same = book.same_source_prices([small.id, big.id], currency) if book is not None else None
        if same:
            prices = PricePair(small=same[small.id], big=same[big.id])
    elif faq_id == "vram_upgrade" and named is not None:
        bigger = bigger_cards(named, currency, wanted_bytes)
    view = FaqView(
        faq=faq_id,
        card=named,
        consumer=catalog.get(CONSUMER_CARD),
        datacenter=catalog.get(DATACENTER_CARD),
        examples=examples,
        decode=decode,
        pair=pair,
        prices=prices,
        bigger=bigger,
    )
    facts: dict[str, object] = {"faq": faq_id, "card": named.id if named else None, "cards": list(card_ids)}
    return pack("faq", lang, f"faq_{faq_id}", view, query=query, facts=facts)


# The article's example of one card's memory variants, priced from one provider, billing kind and date.
VARIANT_PAIR = ("a100-40gb-sxm", "a100-80gb-sxm")


# The article's two cards (card vs memory) and the cards of the bandwidth example.
CONSUMER_CARD, DATACENTER_CARD = "rtx-4090", "a100-80gb-sxm"
BANDWIDTH_CARDS = ("rtx-4090", "a100-80gb-sxm", "h100-sxm")


def _folk_examples(query: Query | None, lang: Lang) -> list[FitView]:
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


def _decode_examples(named: Card | None) -> list[DecodeExample]:
    """Tokens/s one 8B bf16 model decodes at on the card the user named and the article's three cards: the
    bandwidth FAQ's worked example."""
    from core import speed

    catalog = load_catalog()
    shown = [(named, True)] if named is not None else []
    shown += [(catalog.get(c), False) for c in BANDWIDTH_CARDS if named is None or c != named.id]
    rows = []
    for card, is_named in shown:
        est = estimate(Query(model="llama-3.1-8b", card=card.id))
        rows.append(DecodeExample(card, speed.inference_speed(est, card, 1).decode_tokens_per_s, is_named))
    return rows


def scenario_answer(lang: Lang, name: str, query: Query | None, vision: VisionJob | None = None) -> Answer:
    """The article's advice for the scenario; a computer-vision question naming a job also gets that job's
    estimate on the article's 24 GB and 48 GB cards (issue 12)."""
    if name not in SCENARIO_IDS:
        return help_answer(lang)
    currency = answer_currency(query, lang)
    advice = advisor.scenario(name, currency=Currency(currency))
    view = ScenarioView(advice)
    facts: dict[str, object] = {"scenario": name, "advice": advice.model_dump(mode="json")}
    if vision is not None and name == "vision":
        from bot.answer.vision import facts_model_name, scenario_checks, vision_job_facts

        advice = advice.model_copy(update={"notes": [n for n in advice.notes if n != "vision_not_estimated"]})
        view = ScenarioView(advice, facts_model_name(vision), scenario_checks(vision, currency))
        facts["vision"] = vision_job_facts(vision)
    return pack("scenario", lang, f"scenario_{name}", view, query=query, facts=facts)


def help_answer(lang: Lang) -> Answer:
    text = call_macro(lang, "_buttons", "help_questions")
    examples = [line.strip() for line in text.splitlines() if line.strip()]
    return pack(
        "help",
        lang,
        "help",
        ExamplesView(examples=examples),
        buttons=[[button(lang, f"ask={q}")] for q in examples[:3]],
    )
