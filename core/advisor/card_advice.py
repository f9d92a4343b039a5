"""Is card X good for job Y: the card against the cards people usually use for that job, on the figure
that limits the job (compute for training, bandwidth for inference) and on memory, with a rating and the
largest models it takes for that job.

The reference cards and thresholds live in data/card_advice.toml with their rationale; this module only
compares and rates.
"""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.advisor.largest_model import (
    FINETUNE_JOBS,
    PRETRAIN_JOB,
    LargestJob,
    LargestModel,
    largest_models,
)
from core.catalog import Card, load_catalog
from core.paths import DATA_DIR
from core.query import Precision, Task

Rating = Literal["good", "fine", "fine_small", "poor"]
Reason = Literal["compute", "bandwidth", "memory", "no_bf16", "small_memory", "slower", "strong"]
JobKind = Literal["training", "inference"]
GIB = 2**30


class AdviceRules(BaseModel):
    """One job's reference cards and verdict thresholds (data/card_advice.toml)."""

    model_config = ConfigDict(frozen=True)

    reference: list[str]
    metric: Literal["compute", "bandwidth"]
    good_ratio: float
    usable_ratio: float
    small_memory_gib: float
    small_usable_ratio: float
    min_memory_gib: float
    needs_bf16: bool


class Ratios(BaseModel):
    """The asked card's figures over one reference card's."""

    model_config = ConfigDict(frozen=True)

    card: str
    compute: float
    bandwidth: float
    memory: float


class CardAdvice(BaseModel):
    """The assessment of one card for one job."""

    model_config = ConfigDict(frozen=True)

    card: str
    task: Task
    job: JobKind
    rating: Rating
    reasons: list[Reason]
    compared_with: list[str]
    ratios: Ratios  # against the first reference card
    rows: list[Ratios]  # against every reference card
    suits: list[LargestModel]
    nvlink: bool

    def as_json(self) -> dict[str, object]:
        """The answers' `card_advice` (issue 10's contract, plus the reasons and what the card suits)."""
        return {
            "card": self.card,
            "task": self.task.value,
            "rating": self.rating,
            "reasons": self.reasons,
            "compared_with": self.compared_with,
            "ratios": self.ratios.model_dump(exclude={"card"}) | {"against": self.ratios.card},
            "rows": [row.model_dump() for row in self.rows],
            "suits": [row.as_json() for row in self.suits],
            "nvlink": self.nvlink,
        }


@cache
def advice_rules() -> dict[JobKind, AdviceRules]:
    with open(DATA_DIR / "card_advice.toml", "rb") as handle:
        raw = tomllib.load(handle)
    return {
        "training": AdviceRules.model_validate(raw["training"]),
        "inference": AdviceRules.model_validate(raw["inference"]),
    }


def _ratios(card: Card, reference: Card) -> Ratios:
    return Ratios(
        card=reference.id,
        compute=round(card.tensor_tflops / reference.tensor_tflops, 2),
        bandwidth=round(card.bandwidth_gb_s / reference.bandwidth_gb_s, 2),
        memory=round(card.memory_bytes / reference.memory_bytes, 2),
    )


def _rate(card: Card, rules: AdviceRules, ratio: float) -> tuple[Rating, list[Reason]]:
    """The verdict and why, most decisive reason first."""
    memory_gib = card.memory_bytes / GIB
    poor: list[Reason] = []
    if rules.needs_bf16 and card.bf16_tflops == 0:
        poor.append("no_bf16")
    small = memory_gib < rules.small_memory_gib
    if ratio < (rules.small_usable_ratio if small else rules.usable_ratio):
        poor.append(rules.metric)
    if memory_gib < rules.min_memory_gib:
        poor.append("memory")
    if poor:
        return "poor", poor
    if small:
        return "fine_small", ["small_memory"]
    if ratio >= rules.good_ratio:
        return "good", ["strong"]
    return "fine", ["slower"]


def _suits_jobs(task: Task) -> tuple[LargestJob, ...]:
    if task is Task.INFERENCE:
        return (
            LargestJob(task=Task.INFERENCE, method=None, precision=Precision.BF16),
            LargestJob(task=Task.INFERENCE, method=None, precision=Precision.INT4),
        )
    if task is Task.PRETRAIN:
        return (PRETRAIN_JOB,)
    return FINETUNE_JOBS


def card_advice(card: Card, task: Task) -> CardAdvice:
    """How `card` compares with the usual cards for `task`, its rating, and what one card of it takes."""
    job: JobKind = "inference" if task is Task.INFERENCE else "training"
    rules = advice_rules()[job]
    catalog = load_catalog()
    references = [catalog.get(r) for r in rules.reference if r in catalog.by_id and r != card.id]
    if not references:  # the asked card is the only reference: compare with the next usual card
        references = [catalog.get(r) for r in rules.reference if r in catalog.by_id]
    rows = [_ratios(card, ref) for ref in references]
    first = _ratios(card, catalog.get(rules.reference[0]))
    ratio = first.compute if rules.metric == "compute" else first.bandwidth
    rating, reasons = _rate(card, rules, ratio)
    return CardAdvice(
        card=card.id,
        task=task,
        job=job,
        rating=rating,
        reasons=reasons,
        compared_with=[ref.id for ref in references],
        ratios=first,
        rows=rows,
        suits=largest_models(card, 1, _suits_jobs(task)),
        nvlink=card.has_nvlink,
    )


def usual_cards(task: Task) -> list[Card]:
    """Cards to size a job on when the question names none: the usual cards for that kind of job
    (data/card_advice.toml), the job's own kind first."""
    rules = advice_rules()
    inference, training = rules["inference"].reference, rules["training"].reference
    ordered = [*inference, *training] if task is Task.INFERENCE else [*training, *inference]
    ids = dict.fromkeys(ordered)
    catalog = load_catalog()
    return [catalog.get(i) for i in ids if i in catalog.by_id]
