"""The checklist as a state machine: start, answer a step, skip (take the stated default), back, restart."""

from __future__ import annotations

from core.checklist.model import (
    DEFAULT_PARAMS_B,
    DEFAULT_USERS,
    ChecklistAnswers,
    ChecklistState,
    Job,
    Step,
    StepError,
    default_currency,
)
from core.checklist.reading import read_answer
from core.query import DEFAULT_BATCH, DEFAULT_SEQ, Query


def start(lang: str = "en") -> ChecklistState:
    return ChecklistState(lang=lang)


def answer_step(state: ChecklistState, text: str) -> tuple[ChecklistState, StepError | None]:
    """Take a button choice id or free text for the current step; on an error the state is unchanged."""
    step = state.current
    if step is None:
        return state, StepError(code="finished")
    text = text.strip()
    if not text:
        return state, StepError(code="empty")
    outcome = read_answer(step, state.answers, text, state.lang)
    if isinstance(outcome, StepError):
        return state, outcome
    answered, noted = outcome
    skipped = [s for s in answered.skipped if s is not step and s not in noted]
    answers = answered.model_copy(update={"skipped": skipped})
    update = {"answers": answers, "step": state.step + 1, "understood": [step, *noted]}
    return state.model_copy(update=update), None


def skip(state: ChecklistState) -> ChecklistState:
    """Move on: an answer the step already holds (given at an earlier step) is kept, else the default."""
    step = state.current
    if step is None:
        return state
    if state.answers.has(step):
        return state.model_copy(update={"step": state.step + 1, "understood": [step]})
    answers = _apply_default(state.answers, step, state.lang)
    skipped = [*[s for s in answers.skipped if s is not step], step]
    answers = answers.model_copy(update={"skipped": skipped})
    return state.model_copy(update={"answers": answers, "step": state.step + 1, "understood": []})


def back(state: ChecklistState) -> ChecklistState:
    """One step back; the earlier answer stays until the user answers again."""
    return state.model_copy(update={"step": max(0, state.step - 1), "understood": []})


def restart(state: ChecklistState) -> ChecklistState:
    return start(state.lang)


def _apply_default(answers: ChecklistAnswers, step: Step, lang: str) -> ChecklistAnswers:
    updates: dict[str, object]
    if step is Step.JOB:
        updates = {"job": Job.INFERENCE}
    elif step is Step.MODEL:
        updates = {"model": None, "params_b": DEFAULT_PARAMS_B}
    elif step is Step.PRECISION:
        updates = {"precision": None}
    elif step is Step.SHAPE:
        updates = {"seq": None, "batch": None}
    elif step is Step.WORKLOAD:
        updates = {
            "tokens": None,
            "requests_per_day": None,
            "samples": None,
            "sample_tokens": None,
            "epochs": None,
            "text_bytes": None,
        }
    elif step is Step.BUDGET:
        updates = {
            "budget": None,
            "budget_period": None,
            "currency": answers.currency or default_currency(lang),
        }
    else:
        updates = {"card": None, "gpus": None}
    return answers.model_copy(update=updates)


def defaults(state: ChecklistState) -> dict[str, object]:
    """What /skip would take at the current step, for the prompt to state."""
    answers = state.answers
    step = state.current
    if step is Step.JOB:
        return {"job": Job.INFERENCE.value}
    if step is Step.MODEL:
        return {"params_b": DEFAULT_PARAMS_B}
    if step is Step.PRECISION:
        filled = Query(task=answers.task, method=answers.method).with_defaults()
        return {"precision": filled.precision.value if filled.precision else None}
    if step is Step.SHAPE:
        return {"seq": DEFAULT_SEQ, "batch": DEFAULT_USERS if answers.serving else DEFAULT_BATCH}
    if step is Step.BUDGET:
        return {"currency": default_currency(state.lang).value}
    return {}
