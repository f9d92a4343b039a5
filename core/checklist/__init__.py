"""The guided pre-rental checklist as a pure state machine (no telegram, no sqlite).

The bot stores `ChecklistState` as JSON after every answer and feeds the user's next answer back in here, so a
restart resumes at the same step, and the same code drives the Telegram flow, the tests and any other
front end.
Each step takes a button's choice id or free text in either language ("70亿", "about 32k", "2 x 4090"), read
by core/parser's readers; `skip` keeps an answer given earlier or takes the default the prompt states, `back`
returns to the previous step with its answer kept.
"""

from __future__ import annotations

from core.checklist.choices import Choice, choice_data, choices, control
from core.checklist.machine import answer_step, asks_host, back, defaults, restart, skip, start, steps_for
from core.checklist.model import (
    BATCH_RANGE,
    DEFAULT_PARAMS_B,
    DEFAULT_USERS,
    DONE,
    PARAMS_B_RANGE,
    SEQ_RANGE,
    STEPS,
    ChecklistAnswers,
    ChecklistState,
    Job,
    Step,
    StepError,
    default_currency,
)
from core.checklist.reading import read_answer
from core.checklist.result import (
    CARD_PLAN_LIMIT,
    DAYS_PER_MONTH,
    HOURS_PER_DAY,
    MIN_SHOWN_SHARE,
    PLAN_LIMIT,
    SAFETY_MARGIN,
    CardCheck,
    ChecklistResult,
    ProviderQuestion,
    provider_questions,
    result,
    to_query,
)
from core.checklist.views import answers_view, choice_views, result_view, short_card_name, step_view

__all__ = [
    "BATCH_RANGE",
    "CARD_PLAN_LIMIT",
    "DAYS_PER_MONTH",
    "DEFAULT_PARAMS_B",
    "DEFAULT_USERS",
    "DONE",
    "HOURS_PER_DAY",
    "MIN_SHOWN_SHARE",
    "PARAMS_B_RANGE",
    "PLAN_LIMIT",
    "SAFETY_MARGIN",
    "SEQ_RANGE",
    "STEPS",
    "CardCheck",
    "ChecklistAnswers",
    "ChecklistResult",
    "ChecklistState",
    "Choice",
    "Job",
    "ProviderQuestion",
    "Step",
    "StepError",
    "answer_step",
    "answers_view",
    "asks_host",
    "back",
    "choice_data",
    "choice_views",
    "choices",
    "control",
    "default_currency",
    "defaults",
    "provider_questions",
    "read_answer",
    "restart",
    "result",
    "result_view",
    "short_card_name",
    "skip",
    "start",
    "step_view",
    "steps_for",
    "to_query",
]
