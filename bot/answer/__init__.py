"""Questions in, answers out: parse → compute → words, for the bot, the console chat and `gpufit ask`.

This module gathers numbers into plain data for the templates (templates/<lang>/*.j2 hold every sentence)
and packs the result as an `Answer`: full HTML, a compact form for groups and inline results, buttons that
change one thing of the query, and the JSON contract. It never raises: any failure becomes a friendly
error answer in the user's language, and the exception goes to the log.
"""

from __future__ import annotations

import logging
from functools import lru_cache

from pydantic import ValidationError

from bot.answer.cards import card_answer, compare_answer
from bot.answer.clarify import clarify_answer, error_answer, unknown_card_answer, unknown_model_answer
from bot.answer.common import to_lang
from bot.answer.estimate_view import estimate_view
from bot.answer.fit import fit_answer, methods_answer, plan_answer
from bot.answer.how_many import cards_needed_answer
from bot.answer.info import faq_answer, help_answer, scenario_answer
from bot.answer.kinds import card_advice_answer, largest_model_answer, out_of_scope_answer
from bot.answer.model import (
    CHART_ACTION,
    FAQ_IDS,
    NOTHING_READ_IN,
    SCENARIO_IDS,
    Answer,
    Button,
    Lang,
    TypedNames,
    query_json,
)
from bot.answer.vision import vision_fit_answer
from core.cost import price_book_in_force
from core.estimator import UnknownCardError, UnknownModelError
from core.parser import Parsed, detect_lang, parse
from core.query import Method, Precision, Query, Task
from core.registry import load_registry
from core.vision.job import VisionJob

__all__ = [
    "FAQ_IDS",
    "SCENARIO_IDS",
    "Answer",
    "Button",
    "Lang",
    "answer",
    "answer_query",
    "apply_action",
    "card_answer",
    "clarify_answer",
    "compare_answer",
    "error_answer",
    "estimate_view",
    "faq_answer",
    "help_answer",
    "query_json",
    "scenario_answer",
    "unknown_card_answer",
    "unknown_model_answer",
]

log = logging.getLogger(__name__)


def answer(
    text: str,
    *,
    previous: Query | None = None,
    lang: str | None = None,
    previous_vision: VisionJob | None = None,
) -> Answer:
    """Answer one message. Never raises.

    Pure for a given price file (the data files are read once), so answers are cached: a team chat asks
    the same few questions again and again.
    """
    return _answer(text, previous, lang, price_book_in_force(), previous_vision)


def answer_query(query: Query, *, lang: str) -> Answer:
    """Recompute for a stored or edited query (buttons edit the message in place). Never raises."""
    return _answer_query(query, lang, price_book_in_force())


@lru_cache(maxsize=4096)
def _answer(
    text: str,
    previous: Query | None,
    lang: str | None,
    _book: object,
    previous_vision: VisionJob | None = None,
) -> Answer:
    chosen: Lang = to_lang(lang) if lang else "en"
    try:
        if not lang:
            chosen = to_lang(detect_lang(text))
        parsed = parse(text, previous=previous, previous_vision=previous_vision)
        if not lang:
            chosen = to_lang(parsed.lang)
        return _dispatch(parsed, chosen)
    except Exception:
        log.exception("answer failed for %r", text[:200])
        return error_answer(chosen, "internal")


@lru_cache(maxsize=4096)
def _answer_query(query: Query, lang: str, _book: object) -> Answer:
    chosen = to_lang(lang)
    try:
        return _fit_or_plan(query, chosen)
    except Exception:
        log.exception("answer_query failed for %s", query.model_dump_json())
        return error_answer(chosen, "internal", query=query)


def apply_action(query: Query, action: str) -> Query:
    """A button's action applied: 'method=qlora', 'precision=int4', 'seq=8192', 'card=<id>', 'gpus=2',
    'model=<id>', 'params_b=13', 'task=inference'. The changed field counts as stated. 'details', 'chart'
    and 'ask=…' leave the query as it is (the bot shows the full answer / sends its chart / asks the
    question)."""
    if action in ("details", CHART_ACTION) or action.startswith("ask="):
        return query
    name, sep, value = action.partition("=")
    if not sep or name not in Query.model_fields or name == "defaulted":
        raise ValueError(f"unknown action: {action!r}")
    said = query.said()
    said["task"] = query.task
    said[name] = value
    if name == "method":
        if query.task is Task.INFERENCE:
            said["task"] = Task.FINETUNE
        if value == Method.QLORA.value and said.get("precision") not in (None, Precision.NF4, Precision.INT4):
            said.pop("precision")
    elif name == "model":
        said.pop("params_b", None)
    elif name == "params_b":
        said.pop("model", None)
    elif name == "card":
        said.pop("card_memory_bytes", None)
    elif name == "task" and value == Task.INFERENCE.value:
        said.pop("method", None)
    try:
        return Query.model_validate(said)
    except ValidationError as err:
        raise ValueError(f"bad value in action {action!r}") from err


def _dispatch(parsed: Parsed, lang: Lang) -> Answer:
    intent = parsed.intent.value
    query = parsed.query
    cards = parsed.cards
    if intent == "help":
        return help_answer(lang)
    if intent == "out_of_scope":
        return out_of_scope_answer(lang)
    if parsed.vision is not None and intent == "fit":
        return vision_fit_answer(parsed.vision, lang)
    unknown = parsed.unknown_model
    if unknown and not (query is not None and query.params_b and intent in ("fit", "plan", "cards_needed")):
        return unknown_model_answer(lang, unknown, load_registry().closest(unknown), query)
    if intent == "clarify" and parsed.clarify == "nonsense":
        return out_of_scope_answer(lang, understood=False)
    if intent == "clarify" or parsed.clarify:
        return clarify_answer(lang, parsed.clarify or "model", query)
    if intent == "largest_model":
        return largest_model_answer(query, lang)
    if intent == "card_advice" and cards:
        return card_advice_answer(lang, cards[0], query)
    if intent == "faq" and parsed.faq:
        return faq_answer(lang, parsed.faq, query, parsed.cards, parsed.wanted_memory_bytes)
    if intent == "scenario" and parsed.scenario:
        return scenario_answer(lang, parsed.scenario, query, parsed.vision)
    if intent == "card" and cards:
        return card_answer(lang, cards[0], query)
    if intent == "compare" and len(cards) >= 2:
        return compare_answer(lang, cards, query, parsed.card_counts)
    if intent in ("card", "compare"):
        return card_answer(lang, cards[0], query) if cards else clarify_answer(lang, "card", query)
    if query is None:
        return clarify_answer(lang, "model", None)
    if parsed.compare_methods and query.method is None and query.task is Task.INFERENCE:
        query = query.model_copy(update={"task": Task.FINETUNE})
    if intent == "plan":
        return plan_answer(query, lang, parsed.sort)
    # a model not in the registry but with its size ("vicuna 13b") is estimated as a typical dense model
    typed = TypedNames(card=parsed.ambiguous_card, model=unknown)
    return _fit_or_plan(query, lang, typed)


def _fit_or_plan(query: Query, lang: Lang, typed: TypedNames = NOTHING_READ_IN) -> Answer:
    if query.question == "largest_model":
        return largest_model_answer(query, lang)
    if query.question == "card_advice" and query.card:
        return card_advice_answer(lang, query.card, query)
    if not query.model and not query.params_b:
        return clarify_answer(lang, "model", query)
    try:
        if query.question == "cards_needed":
            return cards_needed_answer(query, lang)
        if query.task is Task.FINETUNE and query.method is None:
            return methods_answer(query, lang, typed)
        return fit_answer(query, lang, typed)
    except UnknownModelError as err:
        return unknown_model_answer(lang, err.name, err.suggestions, query)
    except UnknownCardError as err:
        return unknown_card_answer(lang, err.name, err.suggestions, query)
