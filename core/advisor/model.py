"""What the advisor returns: plans, fixes and scenario advice, and the quality codes templates word."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.advisor.fix_kinds import FIX_SPECS, FixKind
from core.cost import (
    CardPrice,
)
from core.estimator import (
    Fit,
)
from core.query import Currency, Method, Precision, Query, Task

INFERENCE_PRECISIONS = (Precision.BF16, Precision.FP8, Precision.INT8, Precision.INT4)
COUNTS = (1, 2, 4, 8)
PRETRAIN_COUNTS = (1, 2, 4, 8, 16, 32, 64)

# What a precision or method costs in output quality, as a code the templates word.
QUALITY = {
    Precision.FP32: "none",
    Precision.BF16: "none",
    Precision.FP16: "none",
    Precision.FP8: "slight",
    Precision.INT8: "slight",
    Precision.Q8_0: "slight",
    Precision.Q6_K: "slight",
    Precision.Q5_K_M: "slight",
    Precision.INT4: "noticeable",
    Precision.NF4: "noticeable",
    Precision.Q4_K_M: "noticeable",
    Precision.Q3_K: "large",
    Precision.Q2_K: "large",
}
METHOD_QUALITY = {
    Method.FULL: "none",
    Method.LORA: "task_dependent",
    Method.QLORA: "task_dependent",
    Method.FREEZE: "task_dependent",
}
QUALITY_RANK = {"none": 0, "slight": 1, "task_dependent": 1, "noticeable": 2, "large": 3}


class PlanFigures(BaseModel):
    """What every plan says, language or vision job (`gpufit plan --json` gives these keys for both): the
    card and count, the memory it needs against what the card holds, the verdict, and the dated price."""

    model_config = ConfigDict(frozen=True)

    card: str
    card_name: str
    memory_gib: float
    count: int
    need_bytes: int
    capacity_bytes: int
    verdict: Fit
    margin: float
    cost_per_hour: float | None = None
    total_cost: float | None = None
    currency: Currency
    price: CardPrice | None = None
    notes: list[str] = []


class Plan(PlanFigures):
    """One way to run a language-model job: which card, how many, how, and what it costs in time and money."""

    task: Task
    method: Method | None
    precision: Precision
    runtime: str  # a data/runtimes.toml id
    nvlink: bool
    quality: str
    decode_tokens_per_s: float | None = None
    aggregate_tokens_per_s: float | None = None
    ttft_s: float | None = None
    training_tokens_per_s: float | None = None
    training_hours: float | None = None
    mfu: float | None = None
    cost_per_million_tokens: float | None = None
    query: Query

    @property
    def speed(self) -> float:
        """The figure 'fastest' ranks by: training tokens/s, else one sequence's decode tokens/s."""
        return self.training_tokens_per_s or self.decode_tokens_per_s or 0.0


class Fix(BaseModel):
    """One change that makes the job fit the named card, with the new per-card memory and its price."""

    model_config = ConfigDict(frozen=True)

    kind: FixKind
    changes: list[FixKind]
    query: Query
    card: str
    count: int
    need_bytes: int
    capacity_bytes: int
    saved_bytes: int
    verdict: Fit
    speed_ratio: float | None
    speed_cost: str
    quality_cost: str
    nvlink: bool
    cost_per_hour: float | None = None
    currency: Currency | None = None

    @property
    def action(self) -> str | None:
        """The button that applies this fix, when one field says it (core/advisor/fix_kinds.py)."""
        return FIX_SPECS[self.kind].action(self.query, self.card, self.count)


class ClaimCheck(BaseModel):
    """One of the article's claims tried on a concrete job: does it hold, with the numbers."""

    model_config = ConfigDict(frozen=True)

    label: str
    query: Query
    model_name: str
    card: str
    card_name: str = Field(exclude=True)  # as the answer names it (the JSON names the card by its id)
    count: int
    need_bytes: int
    capacity_bytes: int
    verdict: Fit
    article_says_fits: bool
    holds: bool
    weights_bytes: int
    decode_tokens_per_s: float | None = None
    max_sequences: int | None = None
    training_tokens_per_s: float | None = None


class CardOption(BaseModel):
    model_config = ConfigDict(frozen=True)

    card: str
    card_name: str
    memory_gib: float
    price: CardPrice | None


class ScenarioAdvice(BaseModel):
    """The article's recommendation for a use, checked: its rule, the claims tried, and concrete plans."""

    model_config = ConfigDict(frozen=True)

    name: str
    min_memory_gib: float
    safer_memory_gib: float | None = None
    example_card: str
    needs_nvlink: bool = False
    checks: list[ClaimCheck] = []
    plans: list[Plan] = []
    cards: list[CardOption] = []
    notes: list[str] = []


SCENARIOS = ("learning", "production_inference", "pretraining", "vision")
