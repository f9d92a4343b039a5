"""The checklist as a state machine: start, answer a step, skip (take the stated default), back, restart."""

from __future__ import annotations

from dataclasses import dataclass

from core.checklist.model import (
    DEFAULT_PARAMS_B,
    DEFAULT_USERS,
    DONE,
    STEPS,
    ChecklistAnswers,
    ChecklistState,
    Job,
    Step,
    StepError,
    default_currency,
)
from core.checklist.reading import read_answer
from core.checklist.result import to_query
from core.estimator import Fit, UnknownModelError, estimate
from core.query import DEFAULT_BATCH, DEFAULT_SEQ, Query


def asks_host(state: ChecklistState) -> bool:
    """The RAM step is asked for an inference job on cards the user named that cannot hold it: llama.cpp
    and Ollama keep the rest in system RAM, and its size and channels decide whether and how fast it runs."""
    answers = state.answers
    if not answers.serving or answers.card is None:
        return False
    try:
        est = estimate(to_query(state).model_copy(update={"host_memory_bytes": None, "runtime": None}))
    except (UnknownModelError, ValueError):
        return False
    count = answers.gpus or 1
    verdict = next((v for v in est.verdicts if v.count == count), None)
    return verdict is not None and verdict.fits is Fit.NO


def steps_for(state: ChecklistState) -> list[Step]:
    """The steps this checklist asks (the RAM step only where it matters), for the progress shown."""
    return [step for step in STEPS if step is not Step.HOST or state.current is Step.HOST or asks_host(state)]


def _next(state: ChecklistState) -> ChecklistState:
    """Past a step that is not asked for this job (the RAM step when the cards hold the job)."""
    if state.current is Step.HOST and not asks_host(state):
        return state.model_copy(update={"step": DONE})
    return state


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
    return _next(state.model_copy(update=update)), None


def skip(state: ChecklistState) -> ChecklistState:
    """Move on: an answer the step already holds (given at an earlier step) is kept, else the default."""
    step = state.current
    if step is None:
        return state
    if state.answers.has(step):
        return _next(state.model_copy(update={"step": state.step + 1, "understood": [step]}))
    answers = _apply_default(state.answers, step, state.lang)
    skipped = [*[s for s in answers.skipped if s is not step], step]
    answers = answers.model_copy(update={"skipped": skipped})
    moved = state.model_copy(update={"answers": answers, "step": state.step + 1, "understood": []})
    return _next(moved)


def back(state: ChecklistState) -> ChecklistState:
    """One step back (past the RAM step when it is not asked); the earlier answer stays until the user
    answers again."""
    moved = state.model_copy(update={"step": max(0, state.step - 1), "understood": []})
    if moved.current is Step.HOST and not asks_host(moved):
        moved = moved.model_copy(update={"step": moved.step - 1})
    return moved


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
    elif step is Step.CARD:
        updates = {"card": None, "gpus": None}
    else:
        updates = {"host_memory_bytes": None, "host_memory_type": None, "host_memory_channels": None}
    return answers.model_copy(update=updates)


@dataclass(frozen=True, slots=True)
class SkipDefaults:
    """What /skip would take at the current step (None: not this step's), for the prompt to state."""

    job: str | None = None
    params_b: float | None = None
    precision: str | None = None
    seq: int | None = None
    batch: int | None = None
    currency: str | None = None


def defaults(state: ChecklistState) -> SkipDefaults:
    """What /skip would take at the current step, for the prompt to state."""
    answers = state.answers
    step = state.current
    if step is Step.JOB:
        return SkipDefaults(job=Job.INFERENCE.value)
    if step is Step.MODEL:
        return SkipDefaults(params_b=DEFAULT_PARAMS_B)
    if step is Step.PRECISION:
        filled = Query(task=answers.task, method=answers.method).with_defaults()
        return SkipDefaults(precision=filled.precision.value if filled.precision else None)
    if step is Step.SHAPE:
        return SkipDefaults(seq=DEFAULT_SEQ, batch=DEFAULT_USERS if answers.serving else DEFAULT_BATCH)
    if step is Step.BUDGET:
        return SkipDefaults(currency=default_currency(state.lang).value)
    return SkipDefaults()
