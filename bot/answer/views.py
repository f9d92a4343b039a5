"""Typed views: what the templates show, built from core's typed results (core/advisor) and checked by mypy.

Each view is a frozen dataclass whose attribute names are the names the templates read (`v.verdict`,
`row.card_name`), so a template reads a view as it read the dicts these replace. Figures that are the JSON
contract's own objects (`speed`, `time`, `serving`: core/contract.py) are carried as those typed objects,
and the answer's JSON is dumped from them; everything else is a typed core object or a label worded here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from pydantic import BaseModel

from core.advisor.budget import BudgetAnswer, BudgetCheck
from core.advisor.card_advice import CardAdvice, Rating
from core.advisor.cards_needed import CardsNeeded
from core.advisor.cluster import Cluster
from core.advisor.compare import CompareRow, Comparison
from core.advisor.fit_advice import AssumedValue, ShownComponent
from core.advisor.largest_model import LargestModel
from core.advisor.leaders import SpecLeaders
from core.advisor.model import Fix, Plan, ScenarioAdvice
from core.advisor.needed import NeededOption
from core.advisor.traffic import Replicas, Traffic
from core.assessment import Assessment
from core.catalog import Card
from core.contract import JobSpeed, JobTime, ServingFigures
from core.cost import CardPrice, JobCost
from core.estimator import Estimate, FolkRule, Verdict
from core.jobs.apple import AppleFacts
from core.jobs.facts import JobFacts
from core.platforms import Platform
from core.query import Query
from core.vision.job import VisionJob
from core.vision.plans import VisionPlan
from core.vision.result import Fix as VisionFix
from core.vision.result import FolkVisionRule, VisionOffload, VisionSpeed

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# What an answer's template is given, as `v`: one of the frozen dataclasses below, or a core result that is
# its own view (a pydantic model: `KindSpec.advised`). Never a dict of loose names.
View: TypeAlias = "DataclassInstance | BaseModel"


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
    speed: JobSpeed | None
    time: JobTime | None
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
    speed: JobSpeed | None = None
    typical: Card | None = None  # the card whose speed stands in for a card given only by its size
    cost: JobCost | None = None
    time: JobTime | None = None
    serving: ServingFigures | None = None
    instead: InsteadView | None = None
    fixes: list[FixRow] = field(default_factory=list)
    plans: list[Plan] = field(default_factory=list)
    planned: Assessment | None = None  # no card named: the first plan's job (the JSON's speed, time, cost)
    cheaper: Plan | None = None
    needed: CardsNeeded | None = None
    jobs: JobFacts | None = None
    apple: AppleFacts | None = None  # an Apple silicon Mac (core/jobs/apple.py)
    traffic: Traffic | None = None
    cluster: Cluster | None = None
    budget: BudgetCheck | None = None


@dataclass(frozen=True, slots=True)
class CardView:
    """One card as the card sheet and comparisons show it: its specs, its price (the platform's when one
    was named), and whether that platform sells it."""

    card: Card
    price: CardPrice | None
    memory_bytes: int
    platform: Platform | None = None
    platform_sells: bool | None = None


@dataclass(frozen=True, slots=True)
class SheetRow:
    """One of the card sheet's typical jobs and the largest dense size that fits one card for it."""

    job: str
    params_b: float | None
    precision: str


@dataclass(frozen=True, slots=True)
class CompareRowView:
    """One card × count of a comparison with a job, and that card as users read it."""

    row: CompareRow
    card: Card | None
    verdict: Verdict | None


@dataclass(frozen=True, slots=True)
class CardSheetView:
    """What templates/card.j2 shows: one card's sheet (specs, price) and the largest size that fits it for
    four typical jobs."""

    sheet: CardView
    fits: list[SheetRow]


@dataclass(frozen=True, slots=True)
class CompareView:
    """What templates/compare.j2 shows: the cards side by side, the spec leaders among them, and for a named
    job each card × count's figures (`comparison`; None without a job)."""

    cards: list[CardView]
    leaders: SpecLeaders
    rows: list[CompareRowView]
    comparison: Comparison | None
    model_name: str | None  # the job's model as users read it, with a job
    q: Query | None  # the job as filled in, with a job


@dataclass(frozen=True, slots=True)
class MethodsView:
    """What templates/methods_side_by_side.j2 shows: 'fine-tune' asked without a method, each training
    method's total and verdict, the recommended one in detail."""

    recommended: FitView  # the recommended method's whole fit answer
    methods: list[tuple[str, FitView]]  # (method, its view), in TRAINING_METHODS order
    best: str  # the recommended method


@dataclass(frozen=True, slots=True)
class ClarifyView:
    """What templates/clarify.j2 asks back: which model, card or task, with the buttons' words as examples."""

    missing: str  # model, card or task
    choices: list[str]


@dataclass(frozen=True, slots=True)
class UnknownNameView:
    """What templates/unknown_model.j2 says of a model or card name gpufit does not know, and the nearest."""

    name: str  # as the user wrote it
    suggestions: list[str]  # the nearest names as users read them
    what: str  # model or card


@dataclass(frozen=True, slots=True)
class RejectedAnswerView:
    """What templates/rejected.j2 says: every value the question states that cannot be used as written."""

    rejected: list[RejectedView]
    buttons: bool  # the answer has buttons offering the nearest usable values


@dataclass(frozen=True, slots=True)
class ErrorView:
    """What templates/error.j2 apologises for."""

    code: str


@dataclass(frozen=True, slots=True)
class ExamplesView:
    """What templates/help.j2 and templates/out_of_scope.j2 show: what gpufit answers and example questions
    (out of scope: `understood` False when the message could not be read at all)."""

    examples: list[str]
    understood: bool = True


@dataclass(frozen=True, slots=True)
class Heads:
    """The attention heads tensor parallelism must split evenly (an MLA model keeps one latent KV head)."""

    heads: int
    kv_heads: int
    mla: bool


@dataclass(frozen=True, slots=True)
class CardsNeededView:
    """What templates/<lang>/cards_needed.j2 shows: the count first, then why, and the count asked."""

    model_name: str
    q: Query  # the job as sized on the count that runs it
    card: Card
    named: bool  # the question named the card (else the usual cards for the job)
    needed: CardsNeeded | None
    rows: list[NeededOption]
    asked: Assessment
    asked_stated: bool  # the question said how many cards
    heads: Heads
    speed: JobSpeed | None
    time: JobTime | None
    cost: JobCost | None
    currency: str
    max_count: int
    traffic: Traffic | None
    replicas: Replicas | None
    cluster: Cluster | None
    jobs: JobFacts | None
    better: NeededOption | None = None  # a usual card that suits the job, when the first is a poor choice


@dataclass(frozen=True, slots=True)
class BudgetView:
    """What templates/<lang>/budget.j2 shows: the setups a budget rents and the largest model on each."""

    b: BudgetAnswer
    cards: dict[str, Card]  # the cards of the options, by id
    names: dict[str, str]  # the registry's example models, by id, as users read them
    platform: Platform | None
    currency: str


@dataclass(frozen=True, slots=True)
class CardPair:
    """Two memory variants of one card (or the two cards the user named), smaller memory first."""

    small: Card
    big: Card


@dataclass(frozen=True, slots=True)
class PricePair:
    """Their prices from one provider, billing kind and date (None: no such pair in the price list)."""

    small: CardPrice | None = None
    big: CardPrice | None = None


@dataclass(frozen=True, slots=True)
class LargestModelView:
    """What templates/<lang>/largest_model.j2 shows: per job, the largest size that runs on the setup."""

    card: Card
    gpus: int
    rows: list[LargestModel]
    names: dict[str, str]  # the registry's example models, by id, as users read them
    seq: int
    batch: int
    memory_typed: bool  # the question named a memory size ('a 24GB card'), not a card
    pretrain: bool


@dataclass(frozen=True, slots=True)
class CardAdviceView:
    """What templates/<lang>/card_advice.j2 shows: the card against the usual cards for the job."""

    card: Card
    advice: CardAdvice
    refs: dict[str, Card]  # the cards compared with, by id
    names: dict[str, str]
    size: float | None  # the model size the question named
    other_task: str  # the other kind of job, for the closing line
    other_rating: Rating


@dataclass(frozen=True, slots=True)
class RejectedView:
    """One value a question states that cannot be used as written (templates/rejected.j2), with the names of
    the catalogue's nearest cards for an unknown one."""

    what: str  # size, batch, gpus, card …
    typed: str  # as the user wrote it
    reason: str  # not_positive, too_large, too_small, unknown
    names: list[str]  # the suggested cards as users read them


@dataclass(frozen=True, slots=True)
class VisionView:
    """What templates/<lang>/vision_fit.j2 shows: an image, video, vision, speech or embedding job's
    verdict, bars, the article's rule, what was assumed, speed, cost, fixes and, without a card, plans."""

    model_name: str
    job: VisionJob
    family: str
    verdict: Verdict | None
    card_name: str
    rows: list[ShownComponent]
    total: int
    capacity: int | None
    peak_phase: str
    folk: FolkVisionRule
    uncertainty: float
    assumptions: list[tuple[str, AssumedValue]]
    speed: VisionSpeed | None
    cost: JobCost | None
    fixes: list[VisionFix]  # shown when the job does not fit comfortably, or when no card was named
    max_batch: int | None
    warnings: list[str]
    offload: VisionOffload | None
    runs_with_offload: bool
    runtime_name: str | None
    pcie_gen: int
    plans: list[VisionPlan]  # the cards that hold the job, when none was named
    sized_card: bool = False  # the card was given only by its size ("a 16gb card"): named by that size


@dataclass(frozen=True, slots=True)
class PlanView:
    """What templates/plan.j2 shows: the plans that fit, ranked (cheapest or fastest first), and in a chat's
    answer the job they were searched for (its estimate, budget and traffic lines); `gpufit plan` shows the
    plans alone."""

    plans: list[Plan]
    currency: str
    sort: str  # "cost" | "speed"
    fit: FitView | None = None
    estimate: Estimate | None = None


@dataclass(frozen=True, slots=True)
class DecodeExample:
    """One card's decode speed in the bandwidth FAQ's worked example (Llama 3.1 8B in bf16)."""

    card: Card
    tokens_per_s: float
    named: bool = False  # the card the user named (shown first, in bold)


@dataclass(frozen=True, slots=True)
class FaqView:
    """What templates/faq_<id>.j2 shows: one of the article's questions, about the card the user named."""

    faq: str
    card: Card | None  # the card the user named, if any
    consumer: Card  # the article's two cards: a 24 GB consumer card and an 80 GB data-center one
    datacenter: Card
    examples: list[FitView] = field(default_factory=list)  # folk_rule: the user's job, or the article's 7B
    decode: list[DecodeExample] = field(default_factory=list)  # bandwidth: the named card first
    pair: CardPair | None = None  # vram_price: one card's memory variants (or the two cards named)
    prices: PricePair = field(default_factory=PricePair)
    bigger: list[tuple[Card, CardPrice]] = field(default_factory=list)  # vram_upgrade: cards with more memory


@dataclass(frozen=True, slots=True)
class ScenarioView:
    """What templates/scenario_<name>.j2 shows: the article's advice for a use, checked with numbers, and for
    a computer-vision question that names a job, that job on the article's two card sizes."""

    advice: ScenarioAdvice
    vision_name: str | None = None
    vision_checks: list[VisionCheck] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class VisionCheck:
    """A computer-vision scenario's job on one of the article's two card sizes (24 GB, 48 GB)."""

    card_name: str
    verdict: Verdict
    speed: VisionSpeed | None
    fixes: list[VisionFix]  # the first fix that fits, if any


__all__ = [
    "BudgetView",
    "CardAdviceView",
    "CardPair",
    "CardSheetView",
    "CardView",
    "CardsNeededView",
    "ClarifyView",
    "CompareRowView",
    "CompareView",
    "DecodeExample",
    "ErrorView",
    "ExamplesView",
    "FaqView",
    "FitView",
    "FixRow",
    "Heads",
    "InsteadView",
    "LargestModelView",
    "MethodsView",
    "ModelOrigin",
    "PlanView",
    "PricePair",
    "RejectedAnswerView",
    "RejectedView",
    "ScenarioView",
    "SheetRow",
    "UnknownNameView",
    "UnknownTerm",
    "View",
    "VisionCheck",
    "VisionView",
]
