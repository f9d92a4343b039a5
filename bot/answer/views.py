"""Typed views: what the templates show, built from core's typed results (core/advisor) and checked by mypy.

Each view is a frozen dataclass whose attribute names are the names the templates read (`v.verdict`,
`row.card_name`), so a template reads a view as it read the dicts these replace. Figures that are the JSON
contract's own objects (`speed`, `time`, `serving`: core/report.py) are carried as that contract gives them,
read-only; everything else is a typed core object or a label worded here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.advisor.budget import BudgetCheck
from core.advisor.cards_needed import CardsNeeded
from core.advisor.cluster import Cluster
from core.advisor.fit_advice import AssumedValue, ShownComponent
from core.advisor.model import Fix, Plan
from core.advisor.traffic import Traffic
from core.assessment import Assessment
from core.catalog import Card
from core.cost import JobCost
from core.estimator import Estimate, FolkRule, Verdict
from core.jobs.facts import JobFacts
from core.query import Query

# One object of the JSON contract (core/report.py: `speed`, `time`, `serving`), as the answers' JSON has it.
ContractObject = Mapping[str, object]


@dataclass(frozen=True, slots=True)
class UnknownTerm:
    """A memory term a looked-up model's config could not give ('kv_cache', 'unrecognised architecture')."""

    term: str
    reason: str


@dataclass(frozen=True, slots=True)
class ModelOrigin:
    """Where a looked-up model's figures came from, for the answer's provenance line."""

    name: str
    origin: str  # "hub" or "cache"
    source: str
    date: str
    unknown: list[UnknownTerm]
    from_count: bool  # the architecture was not recognised: estimated from its parameter count


@dataclass(frozen=True, slots=True)
class FixRow:
    """One fix the answer offers, with the card it names as users read it and the button that applies it."""

    fix: Fix
    card_name: str
    action: str | None


@dataclass(frozen=True, slots=True)
class InsteadView:
    """The smallest change that runs a job that does not run as asked: its speed, time and cost."""

    fix: Fix
    card_name: str
    count: int
    speed: ContractObject | None
    time: ContractObject | None
    cost: JobCost | None
    job: Assessment


@dataclass(frozen=True, slots=True)
class FitView:
    """Everything the fit templates show (fit, fit_compact, methods side by side, plan, estimate)."""

    est: Estimate
    q: Query  # the job as answered (filled in)
    model_name: str
    card_typed: str | None  # a family name the user typed, read as its most-rented variant
    model_typed: str | None  # a model name estimated as a typical dense model of its size
    model_origin: ModelOrigin | None
    image_tokens: int
    card: Card | None
    card_label: str | None
    capacity: int | None
    verdict: Verdict | None
    verdicts: list[Verdict]
    rows: list[ShownComponent]
    total: int
    folk: FolkRule
    folk_reason: str
    bytes_per_weight: float
    assumptions: list[tuple[str, AssumedValue]]
    warnings: list[str]
    notes: list[str]
    currency: str = "USD"
    single: Verdict | None = None
    speed: ContractObject | None = None
    cost: JobCost | None = None
    time: ContractObject | None = None
    serving: ContractObject | None = None
    instead: InsteadView | None = None
    fixes: list[FixRow] = field(default_factory=list)
    plans: list[Plan] = field(default_factory=list)
    cheaper: Plan | None = None
    needed: CardsNeeded | None = None
    jobs: JobFacts | None = None
    apple: ContractObject | None = None  # an Apple silicon Mac (core/jobs/apple.py)
    traffic: Traffic | None = None
    cluster: Cluster | None = None
    budget: BudgetCheck | None = None


__all__ = ["ContractObject", "FitView", "FixRow", "InsteadView", "ModelOrigin", "UnknownTerm"]
