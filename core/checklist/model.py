"""What the checklist remembers: its steps, the job choices, the answers so far, the state kept per user."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.query import BudgetPeriod, Currency, Method, Precision, Task


class Step(StrEnum):
    JOB = "job"
    MODEL = "model"
    PRECISION = "precision"
    SHAPE = "shape"
    WORKLOAD = "workload"
    BUDGET = "budget"
    CARD = "card"
    # issue 18: system RAM and its channels, asked only when the cards named cannot hold an inference job
    # (llama.cpp / Ollama then keep the rest in RAM: core/checklist/machine.py asks_host)
    HOST = "host"


STEPS: tuple[Step, ...] = tuple(Step)
DONE = len(STEPS)

# What /skip takes at each step (the prompts state these).
DEFAULT_PARAMS_B = 7.0
DEFAULT_USERS = 1

PARAMS_B_RANGE = (0.01, 5000.0)
SEQ_RANGE = (16, 10_000_000)
BATCH_RANGE = (1, 100_000)


class Job(StrEnum):
    """The job choices of step 1 (button ids, also stored)."""

    INFERENCE = "infer"
    FULL = "ft_full"
    LORA = "ft_lora"
    QLORA = "ft_qlora"
    UNSURE = "ft_unsure"
    PRETRAIN = "pretrain"


_JOB_TASK: dict[Job, tuple[Task, Method | None]] = {
    Job.INFERENCE: (Task.INFERENCE, None),
    Job.FULL: (Task.FINETUNE, Method.FULL),
    Job.LORA: (Task.FINETUNE, Method.LORA),
    Job.QLORA: (Task.FINETUNE, Method.QLORA),
    Job.UNSURE: (Task.FINETUNE, None),
    Job.PRETRAIN: (Task.PRETRAIN, Method.FULL),
}


# The answer fields each step fills (a step "has an answer" when one of them is set).
STEP_FIELDS: dict[Step, tuple[str, ...]] = {
    Step.JOB: ("job",),
    Step.MODEL: ("model", "params_b"),
    Step.PRECISION: ("precision",),
    Step.SHAPE: ("seq", "batch"),
    Step.WORKLOAD: ("tokens", "requests_per_day"),
    Step.BUDGET: ("budget", "currency"),
    Step.CARD: ("card",),
    Step.HOST: ("host_memory_bytes",),
}


class ChecklistAnswers(BaseModel):
    """What the user answered so far; `None` means not asked yet, skipped, or "no preference"."""

    model_config = ConfigDict(extra="forbid")

    job: Job | None = None
    model: str | None = None
    params_b: float | None = Field(default=None, gt=0)
    precision: Precision | None = None
    seq: int | None = Field(default=None, ge=1)
    batch: int | None = Field(default=None, ge=1)
    tokens: float | None = Field(default=None, gt=0)
    # How the tokens were counted (core/data_amount.py), for the confirmation: "20k samples × 3 epochs × …"
    samples: float | None = Field(default=None, gt=0)
    sample_tokens: int | None = Field(default=None, gt=0)
    epochs: float | None = Field(default=None, gt=0)
    text_bytes: int | None = Field(default=None, gt=0)
    requests_per_day: float | None = Field(default=None, gt=0)
    budget: float | None = Field(default=None, gt=0)
    budget_period: BudgetPeriod | None = None  # the Query's own field: what the budget is per
    currency: Currency | None = None
    card: str | None = None
    gpus: int | None = Field(default=None, ge=1, le=4096)
    # the machine's system RAM, for a job llama.cpp / Ollama split between the cards and RAM
    host_memory_bytes: int | None = Field(default=None, gt=0)
    host_memory_type: Literal["ddr4", "ddr5"] | None = None
    host_memory_channels: int | None = Field(default=None, ge=1, le=24)
    skipped: list[Step] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _period_from_flags(cls, data: object) -> object:
        """Sessions stored before issue 19 held two flags (budget_per_hour, budget_per_month): one period."""
        if not isinstance(data, dict) or ("budget_per_hour" not in data and "budget_per_month" not in data):
            return data
        moved = dict(data)
        per_hour, per_month = moved.pop("budget_per_hour", None), moved.pop("budget_per_month", None)
        if moved.get("budget_period") is None and (per_hour is not None or per_month is not None):
            moved["budget_period"] = "hour" if per_hour else "month" if per_month else "total"
        return moved

    @property
    def budget_per_hour(self) -> bool | None:
        return None if self.budget_period is None else self.budget_period == "hour"

    @property
    def budget_per_month(self) -> bool | None:
        return None if self.budget_period is None else self.budget_period == "month"

    def has(self, step: Step) -> bool:
        """Whether the step holds an answer the user gave (at that step or earlier), not a default."""
        if step in self.skipped:
            return False
        return any(getattr(self, name) is not None for name in STEP_FIELDS[step])

    @property
    def task(self) -> Task:
        return _JOB_TASK[self.job or Job.INFERENCE][0]

    @property
    def method(self) -> Method | None:
        return _JOB_TASK[self.job or Job.INFERENCE][1]

    @property
    def serving(self) -> bool:
        return self.task is Task.INFERENCE


class ChecklistState(BaseModel):
    """One user's place in the checklist: the step index (``DONE`` once finished) and the answers."""

    model_config = ConfigDict(extra="forbid")

    version: int = 2
    step: int = Field(default=0, ge=0, le=DONE)
    lang: str = "en"
    answers: ChecklistAnswers = Field(default_factory=ChecklistAnswers)
    prompt_message_id: int | None = None
    # What the last answer gave, for the next message to confirm: the step answered and later steps it
    # also filled ("serve llama 3.1 70b" at the job step fills the model step too).
    understood: list[Step] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _done_before_the_host_step(cls, data: object) -> object:
        """A state stored as version 1 (before the RAM step) was done at step 7: a finished checklist stays
        finished (stored states always carry their version; one built without it is current)."""
        if not isinstance(data, dict) or data.get("version", 2) >= 2:
            return data
        moved = dict(data)
        if int(moved.get("step", 0)) >= STEPS.index(Step.HOST):
            moved["step"] = DONE
        moved["version"] = 2
        return moved

    @property
    def done(self) -> bool:
        return self.step >= DONE

    @property
    def current(self) -> Step | None:
        return None if self.done else STEPS[self.step]


class StepError(BaseModel):
    """Why an answer was not taken: a code the templates word, and names the user may have meant."""

    model_config = ConfigDict(frozen=True)

    code: str
    suggestions: list[str] = Field(default_factory=list)


def default_currency(lang: str) -> Currency:
    return Currency.CNY if lang == "zh" else Currency.USD
