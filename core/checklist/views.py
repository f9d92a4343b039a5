"""Typed views for the checklist templates (every sentence lives in templates/<lang>/checklist_*.j2): frozen
dataclasses whose attribute names are the names the templates read (`v.model_name`, `c.kind`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from core.catalog import Card, load_catalog
from core.checklist.choices import Choice, choice_data, choices
from core.checklist.machine import SkipDefaults, defaults, steps_for
from core.checklist.model import ChecklistAnswers, ChecklistState, Step, default_currency
from core.checklist.result import MIN_SHOWN_SHARE, ChecklistResult, to_query
from core.query import Query
from core.registry import load_registry


def short_card_name(card: Card) -> str:
    """'NVIDIA GeForce RTX 4090 24GB' → 'RTX 4090 24GB' (for buttons)."""
    return re.sub(r"^(NVIDIA\s+)?(GeForce\s+)?(AMD\s+)?(Instinct\s+)?", "", card.name).strip() or card.name


@dataclass(frozen=True, slots=True)
class AnswersView:
    """The answers with names resolved and defaults filled, for prompts, the summary and the export."""

    answers: ChecklistAnswers
    filled: Query
    model_name: str | None
    card_name: str | None
    serving: bool
    training: bool
    currency: str
    steps: list[str]
    defaults: SkipDefaults


@dataclass(frozen=True, slots=True)
class StepView:
    """What templates/checklist_step.j2 reads for the current step's prompt (its top-level names)."""

    step: str
    index: int
    total: int
    view: AnswersView
    serving: bool
    training: bool
    current: bool
    understood: list[str]

    def context(self) -> dict[str, object]:
        """The template's names, one per field (no copies: the objects themselves)."""
        return {
            "step": self.step,
            "index": self.index,
            "total": self.total,
            "view": self.view,
            "serving": self.serving,
            "training": self.training,
            "current": self.current,
            "understood": self.understood,
        }


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One bar of the result sheet's memory breakdown."""

    name: str
    bytes: int


@dataclass(frozen=True, slots=True)
class ResultView(AnswersView):
    """What the result sheet and the export show: the answers (the model and the job as the result found
    them) and the result itself, with its bars and the cards its fixes name."""

    result: ChecklistResult
    rows: list[ResultRow]
    count: int
    bytes_per_weight: float
    fix_cards: dict[str, str]  # card id → name, for the fixes that name a card


def answers_view(state: ChecklistState) -> AnswersView:
    """The answers with names resolved and defaults filled, for prompts, the summary and the export."""
    answers = state.answers
    filled = to_query(state).with_defaults()
    model = load_registry().by_id.get(answers.model) if answers.model else None
    card = load_catalog().by_id.get(answers.card) if answers.card else None
    return AnswersView(
        answers=answers,
        filled=filled,
        model_name=model.name if model else None,
        card_name=card.name if card else None,
        serving=answers.serving,
        training=not answers.serving,
        currency=(answers.currency or default_currency(state.lang)).value,
        steps=[step.value for step in steps_for(state)],
        defaults=defaults(state),
    )


def step_view(state: ChecklistState) -> StepView:
    """Data for the current step's prompt."""
    step = state.current
    assert step is not None
    view = answers_view(state)
    return StepView(
        step=step.value,
        index=state.step + 1,
        total=len(steps_for(state)),
        view=view,
        serving=view.serving,
        training=view.training,
        current=state.answers.has(step),
        understood=[s.value for s in state.understood],
    )


def choice_views(step: Step, lang: str, answers: ChecklistAnswers) -> list[Choice]:
    """Every button of a step with what its label needs."""
    views: list[Choice] = []
    for choice in choices(step, lang, answers):
        data = choice_data(choice)
        if data.kind == "card":
            card = load_catalog().by_id.get(choice.split(":")[1])
            data = replace(data, short=short_card_name(card) if card else data.name)
        views.append(data)
    return views


def result_view(found: ChecklistResult, state: ChecklistState) -> ResultView:
    """Data for the result sheet and the export."""
    est = found.estimate
    catalog = load_catalog()
    view = answers_view(state)
    shown = est.breakdown.total * MIN_SHOWN_SHARE
    rows = [ResultRow(name, value) for name, value in est.breakdown.as_dict().items() if value > shown]
    fix_cards = {f.card: catalog.by_id[f.card].name for f in found.fixes if f.card in catalog.by_id}
    return ResultView(
        answers=view.answers,
        filled=found.query,
        model_name=found.model_name,
        card_name=view.card_name,
        serving=view.serving,
        training=view.training,
        currency=view.currency,
        steps=view.steps,
        defaults=view.defaults,
        result=found,
        rows=rows,
        count=found.check.count if found.check else (found.query.gpus or 1),
        bytes_per_weight=est.folk.weights_bytes / max(est.params, 1),
        fix_cards=fix_cards,
    )
