"""Answers that ask back or apologise: which model, unknown names, errors."""

from __future__ import annotations

import logging

from bot.answer.buttons import button
from bot.answer.common import pack, registry_label
from bot.answer.model import SUGGESTED_MODELS, SUGGESTED_SIZE_B, Answer, CompactForm, Lang
from bot.answer.views import ClarifyView, ErrorView, RejectedAnswerView, RejectedView, UnknownNameView
from bot.render import fmt_card_name
from core.answer_kind import AnswerKind
from core.catalog import load_catalog
from core.parser.result import Rejected
from core.query import Query
from core.registry import load_registry

log = logging.getLogger(__name__)


def clarify_answer(lang: Lang, missing: str, query: Query | None) -> Answer:
    """One short question with choices for buttons (what is missing: 'model', 'card', 'task')."""
    missing = missing if missing in ("model", "card", "task") else "model"
    registry = load_registry()
    if missing == "card":
        choices = [
            button(lang, f"card={c}", card=load_catalog().get(c).name)
            for c in ("rtx-4090", "a100-80gb-sxm", "h100-sxm")
        ]
    elif missing == "task":
        choices = [button(lang, a) for a in ("task=inference", "method=lora", "method=full")]
    else:
        choices = [button(lang, f"model={m}", card=registry.get(m).name) for m in SUGGESTED_MODELS]
        choices.append(button(lang, f"params_b={SUGGESTED_SIZE_B:g}"))
    return pack(
        "clarify",
        lang,
        "clarify",
        ClarifyView(missing=missing, choices=[b.label for b in choices]),
        query=query,
        buttons=[choices],
        facts={"missing": missing, "choices": [b.model_dump() for b in choices]},
    )


def unknown_model_answer(lang: Lang, name: str, suggestions: list[str], query: Query | None) -> Answer:
    names = [(s, registry_label(s)) for s in suggestions[:3]]
    buttons = [[button(lang, f"model={s}", card=label) for s, label in names]]
    if not names:
        buttons = [[button(lang, f"model={m}", card=registry_label(m)) for m in SUGGESTED_MODELS]]
    return pack(
        "clarify",
        lang,
        "unknown_model",
        UnknownNameView(name=name, suggestions=[label for _, label in names], what="model"),
        query=query,
        buttons=buttons,
        facts={"missing": "model", "unknown": name, "suggestions": suggestions},
    )


def unknown_card_answer(lang: Lang, name: str, suggestions: list[str], query: Query | None) -> Answer:
    catalog = load_catalog()
    cards = [catalog.get(s) for s in suggestions[:3] if s in catalog.by_id]
    return pack(
        "clarify",
        lang,
        "unknown_model",
        UnknownNameView(name=name, suggestions=[c.name for c in cards], what="card"),
        query=query,
        buttons=[[button(lang, f"card={c.id}", card=c.name) for c in cards]] if cards else [],
        facts={"missing": "card", "unknown": name, "suggestions": [c.id for c in cards]},
    )


_FIXABLE = ("batch", "gpus", "lora_rank", "seq")


def rejected_answer(lang: Lang, rejected: list[Rejected], query: Query | None) -> Answer:
    """'batch -4 is not a batch size', 'RTX 9999 is not a card in my catalogue; did you mean …?': what the
    question states that cannot be used, said instead of answering with a default in its place. Buttons
    offer the nearest usable value (the positive count, the catalogue's closest cards) for the same job."""
    catalog = load_catalog()
    items: list[RejectedView] = []
    row = []
    job = query is not None and bool(query.model or query.params_b)
    for item in rejected:
        cards = [catalog.get(s) for s in item.suggestions[:3] if s in catalog.by_id]
        names = [fmt_card_name(c.name) for c in cards]
        items.append(RejectedView(what=item.what, typed=item.typed, reason=item.reason, names=names))
        if job and item.what == "card":
            row += [button(lang, f"card={c.id}", card=c.name) for c in cards]
        elif job and item.what in _FIXABLE and item.fixed:
            row.append(button(lang, f"{item.what}={item.fixed}"))
    return pack(
        "clarify",
        lang,
        "rejected",
        RejectedAnswerView(rejected=items, buttons=bool(row)),
        query=query,
        buttons=[row] if row else [],
        facts={"missing": "valid_value", "rejected": [r.model_dump() for r in rejected]},
    )


def error_answer(lang: Lang, code: str, *, query: Query | None = None) -> Answer:
    """A friendly apology; never a traceback. Rendering itself failing falls back to fixed text."""
    try:
        return pack("error", lang, "error", ErrorView(code=code), query=query)
    except Exception:
        log.exception("rendering the error answer failed")
        text = (
            "Sorry, something went wrong. Please try again." if lang == "en" else "抱歉，出错了，请再试一次。"
        )
        return Answer(
            kind=AnswerKind.ERROR,
            lang=lang,
            query=query,
            filled_query=None,
            html=text,
            compact=CompactForm.of(text, title=text, summary=text),
        )
