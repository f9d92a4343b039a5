"""The article's scenario recommendations (data/scenarios.toml), each claim checked by the estimator.

The data holds what the article says, line by line; this module only reads it, runs every claim through
the estimator and the speed model, and adds the notes the data attaches to claims that do not hold.
"""

from __future__ import annotations

import tomllib
from functools import cache

from pydantic import BaseModel, ConfigDict

from core.advisor.model import SCENARIOS, CardOption, ClaimCheck, Plan, ScenarioAdvice
from core.advisor.plan_search import plans
from core.advisor.shared import card_price
from core.assessment import verdict_for_count
from core.catalog import load_catalog
from core.estimator import Fit, estimate
from core.paths import DATA_DIR
from core.query import Currency, Query, Task
from core.speed import inference_speed, training_speed


class ArticleLine(BaseModel):
    """Where a figure or claim comes from: a line of the article and the words quoted from it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int
    quote: str


class ClaimSpec(ArticleLine):
    """A concrete job the article's recommendation implies, and whether the article says it fits."""

    label: str
    article_says_fits: bool
    query: Query
    note_if_wrong: str | None = None


class PlanSpec(ArticleLine):
    """The job the scenario's ranked plans are for, over cards with memory in [min, max] GiB."""

    query: Query
    min_memory_gib: float
    max_memory_gib: float | None = None
    limit: int


class CardShelf(ArticleLine):
    """The `per_memory` cheapest cards of each memory size (scenarios gpufit cannot estimate)."""

    memory_gib: list[float]
    per_memory: int


class ScenarioSpec(ArticleLine):
    """One row of the article's scenario table, as data/scenarios.toml states it."""

    name: str
    min_memory_gib: float
    safer_memory_gib: float | None = None
    example_card: str
    example_card_as_written: str
    needs_nvlink: bool = False
    notes: list[str] = []
    note_if_any_wrong: str | None = None
    claims: list[ClaimSpec] = []
    plans: PlanSpec | None = None
    cards: CardShelf | None = None


class ScenarioTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    scenario: list[ScenarioSpec]

    def get(self, name: str) -> ScenarioSpec:
        for spec in self.scenario:
            if spec.name == name:
                return spec
        raise ValueError(f"unknown scenario {name!r}; one of {', '.join(SCENARIOS)}")


@cache
def load_scenarios() -> ScenarioTable:
    with open(DATA_DIR / "scenarios.toml", "rb") as handle:
        return ScenarioTable.model_validate(tomllib.load(handle))


def _claim(spec: ClaimSpec) -> ClaimCheck:
    catalog = load_catalog()
    result = estimate(spec.query)
    count = result.query.gpus or 1
    verdict = verdict_for_count(result, count)
    assert verdict is not None and result.query.card
    card = catalog.get(result.query.card)
    decode = training = None
    if result.query.task is Task.INFERENCE:
        decode = inference_speed(result, card, count).decode_tokens_per_s
    else:
        training = training_speed(result, card, count, None).tokens_per_s
    fits = verdict.fits is not Fit.NO
    return ClaimCheck(
        label=spec.label,
        query=result.query,
        model_name=result.model_name,
        card=card.id,
        card_name=card.name,
        count=count,
        need_bytes=verdict.need_bytes,
        capacity_bytes=verdict.capacity_bytes,
        verdict=verdict.fits,
        article_says_fits=spec.article_says_fits,
        holds=fits == spec.article_says_fits,
        weights_bytes=result.breakdown.weights,
        decode_tokens_per_s=decode,
        max_sequences=result.vllm.max_sequences if result.vllm else None,
        training_tokens_per_s=training,
    )


def _cards_between(low_gib: float, high_gib: float | None = None) -> list[str]:
    return [
        c.id
        for c in load_catalog().cards
        if c.memory_gib >= low_gib and (high_gib is None or c.memory_gib <= high_gib)
    ]


def _cheapest_cards(memory_gib: float, currency: Currency, limit: int) -> list[CardOption]:
    options = [
        CardOption(card=c.id, card_name=c.name, memory_gib=c.memory_gib, price=card_price(c.id, currency))
        for c in load_catalog().cards
        if c.memory_gib == memory_gib
    ]
    options.sort(key=lambda o: (o.price is None, o.price.per_hour if o.price else 0.0))
    return options[:limit]


def scenario(name: str, *, currency: Currency = Currency.USD) -> ScenarioAdvice:
    """The article's scenario, each claim tried on its concrete job (where the rule is loose, the checks
    show it with numbers) and backed by ranked plans or, where gpufit cannot estimate, priced cards."""
    spec = load_scenarios().get(name)
    checks = [_claim(claim) for claim in spec.claims]
    notes = list(spec.notes)
    notes += [
        c.note_if_wrong
        for c, check in zip(spec.claims, checks, strict=True)
        if c.note_if_wrong and not check.holds
    ]
    if spec.note_if_any_wrong and not all(check.holds for check in checks):
        notes.append(spec.note_if_any_wrong)
    found: list[Plan] = []
    if spec.plans:
        cards = _cards_between(spec.plans.min_memory_gib, spec.plans.max_memory_gib)
        found = plans(spec.plans.query, limit=spec.plans.limit, currency=currency, cards=cards)
    options: list[CardOption] = []
    if spec.cards:
        for memory in spec.cards.memory_gib:
            options += _cheapest_cards(memory, currency, spec.cards.per_memory)
    return ScenarioAdvice(
        name=spec.name,
        min_memory_gib=spec.min_memory_gib,
        safer_memory_gib=spec.safer_memory_gib,
        example_card=spec.example_card,
        needs_nvlink=spec.needs_nvlink,
        checks=checks,
        plans=found,
        cards=options,
        notes=notes,
    )
