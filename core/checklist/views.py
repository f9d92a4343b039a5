"""Plain data for the checklist templates (every sentence lives in templates/<lang>/checklist_*.j2)."""

from __future__ import annotations

import re
from typing import Any

from core.catalog import Card, load_catalog
from core.checklist.choices import choice_data, choices
from core.checklist.machine import defaults, steps_for
from core.checklist.model import ChecklistAnswers, ChecklistState, Step, default_currency
from core.checklist.result import MIN_SHOWN_SHARE, ChecklistResult, to_query
from core.registry import load_registry


def short_card_name(card: Card) -> str:
    """'NVIDIA GeForce RTX 4090 24GB' → 'RTX 4090 24GB' (for buttons)."""
    return re.sub(r"^(NVIDIA\s+)?(GeForce\s+)?(AMD\s+)?(Instinct\s+)?", "", card.name).strip() or card.name


def answers_view(state: ChecklistState) -> dict[str, Any]:
    """The answers with names resolved and defaults filled, for prompts, the summary and the export."""
    answers = state.answers
    filled = to_query(state).with_defaults()
    model = load_registry().by_id.get(answers.model) if answers.model else None
    card = load_catalog().by_id.get(answers.card) if answers.card else None
    return {
        "answers": answers,
        "filled": filled,
        "model_name": model.name if model else None,
        "card_name": card.name if card else None,
        "serving": answers.serving,
        "training": not answers.serving,
        "currency": (answers.currency or default_currency(state.lang)).value,
        "steps": [step.value for step in steps_for(state)],
        "defaults": defaults(state),
    }


def step_view(state: ChecklistState) -> dict[str, Any]:
    """Data for the current step's prompt."""
    step = state.current
    assert step is not None
    view = answers_view(state)
    current = state.answers.has(step)
    return {
        "step": step.value,
        "index": state.step + 1,
        "total": len(steps_for(state)),
        "view": view,
        "serving": view["serving"],
        "training": view["training"],
        "current": current,
        "understood": [s.value for s in state.understood],
    }


def choice_views(step: Step, lang: str, answers: ChecklistAnswers) -> list[dict[str, Any]]:
    """Every button of a step with what its label needs."""
    views: list[dict[str, Any]] = []
    for choice in choices(step, lang, answers):
        data = choice_data(choice) | {"id": choice}
        if data["kind"] == "card":
            card = load_catalog().by_id.get(str(data["id"]).split(":")[1])
            data["short"] = short_card_name(card) if card else data["name"]
        views.append(data)
    return views


def result_view(found: ChecklistResult, state: ChecklistState) -> dict[str, Any]:
    """Data for the result sheet and the export."""
    est = found.estimate
    catalog = load_catalog()
    view = answers_view(state)
    view["model_name"] = found.model_name
    view["filled"] = found.query
    shown = est.breakdown.total * MIN_SHOWN_SHARE
    rows = [
        {"name": name, "bytes": value} for name, value in est.breakdown.as_dict().items() if value > shown
    ]
    fix_cards = {f.card: catalog.by_id[f.card].name for f in found.fixes if f.card in catalog.by_id}
    return view | {
        "result": found,
        "rows": rows,
        "count": found.check.count if found.check else (found.query.gpus or 1),
        "bytes_per_weight": est.folk.weights_bytes / max(est.params, 1),
        "fix_cards": fix_cards,
    }
