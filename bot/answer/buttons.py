"""Buttons under an answer: each changes one thing of the query (method, precision, context, card)."""

from __future__ import annotations

from typing import Any

from bot.answer.common import call_macro
from bot.answer.model import CONTEXT_CHOICES, PRECISION_CHOICES, TRAINING_METHODS, Button, Lang
from bot.answer.views import FitView
from bot.render import (
    fmt_card_name,
)
from core.advisor.bigger_card import bigger_card
from core.estimator import Estimate, Fit
from core.query import DEFAULT_SEQ, Currency, Query, Task


def button_label(lang: Lang, action: str, **extra: Any) -> str:
    """Button words live in templates/<lang>/_buttons.j2; labels are plain text."""
    name, _, value = action.partition("=")
    return call_macro(lang, "_buttons", "label", name, value, **extra).strip()


def button(lang: Lang, action: str, **extra: Any) -> Button:
    if "card" in extra:
        extra["card"] = fmt_card_name(str(extra["card"]))
    return Button(label=button_label(lang, action, **extra), action=action)


def fit_buttons(
    query: Query, est: Estimate, view: FitView, lang: Lang, *, all_methods: bool = False
) -> list[list[Button]]:
    filled = est.query
    rows: list[list[Button]] = []
    if filled.task is Task.INFERENCE:
        rows.append(
            [button(lang, f"precision={p.value}") for p in PRECISION_CHOICES if p is not filled.precision]
        )
    elif filled.task is Task.FINETUNE:
        current = None if all_methods else filled.method
        rows.append([button(lang, f"method={m.value}") for m in TRAINING_METHODS if m is not current])
    seq = filled.seq or DEFAULT_SEQ
    rows.append([button(lang, f"seq={s}") for s in CONTEXT_CHOICES if s != seq])
    extra: list[Button] = []
    verdict = view.verdict
    for row in view.fixes:
        action = row.action
        if action and len(extra) < 3 and not action.startswith(("seq=", "method=", "precision=")):
            extra.append(button(lang, action, card=row.card_name))
    if verdict is not None and verdict.fits is Fit.NO and not extra and view.card is not None:
        # the advisor's one "bigger card" search (core/advisor/bigger_card.py), for a job with no fix button
        bigger = bigger_card(filled, view.card, filled.gpus or 1, Currency(view.currency))
        if bigger is not None:
            extra.append(button(lang, f"card={bigger.id}", card=bigger.name))
    for plan in ([view.cheaper] if view.cheaper else []) + view.plans[:1]:
        extra.append(button(lang, f"card={plan.card}", card=plan.card_name))
    if extra:
        rows.append(extra)
    last = [button(lang, "details")]
    jobs = view.jobs
    if jobs is not None and jobs.launch is not None and not filled.launch:
        last.append(button(lang, "launch=true"))  # the ready-to-paste launch line (also /cmd)
    rows.append(last)
    return [row for row in rows if row]
