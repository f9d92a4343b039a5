"""The advice of a fit answer ("can I fine-tune a 13B on a 4090?"), decided in one place: which searches run
for the job as asked (speed and price on the card named, the fixes when it does not fit comfortably, the
ranked plans when no card is named, a clearly cheaper card when it fits, the smallest change that runs, the
cards needed, the cluster, the budget) and what the memory part shows. bot/answer only words the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.advisor.budget import BudgetCheck, check_budget, plan_costs
from core.advisor.cards_needed import CardsNeeded
from core.advisor.cheaper import cheaper_plan
from core.advisor.cluster import Cluster, cluster_for
from core.advisor.fit_fixes import fixes as fit_fixes
from core.advisor.model import Fix, Plan
from core.advisor.needed import needed_when_short
from core.advisor.plan_search import plans as search_plans
from core.advisor.traffic import Traffic, apply_traffic
from core.assessment import Assessment, assess
from core.catalog import Card, load_catalog
from core.contract import JobSpeed, OffloadSpeed, speed_json
from core.cost import price_book_in_force
from core.estimator import COMPONENTS, Estimate, Fit, Verdict, estimate
from core.jobs.apple import AppleFacts, apple_facts
from core.jobs.cpu import CpuRun
from core.jobs.facts import JobFacts, job_facts
from core.jobs.offload import InferenceOffload
from core.query import Currency, Method, Precision, Query, SortKey, Task
from core.report import folk_reason

# Components under 5 MiB would print as 0.00 GiB: the breakdown leaves them out.
MIN_SHOWN_BYTES = 5 * 2**20
# Fields worth stating when assumed, in the order a reader checks them.
ASSUMPTION_ORDER = (
    "method",
    "precision",
    "batch",
    "seq",
    "gpus",
    "lora_rank",
    "grad_checkpointing",
    "optimizer",
    "zero_stage",
    "tensor_parallel",
    "pipeline_parallel",
    "data_parallel",
    "runtime",
)
# Plans a fit answer lists when no card is named.
PLANS_SHOWN = 5
# The band of a decode split between the card and system RAM: bandwidth arithmetic (core/jobs/offload.py),
# checked against community reports in tests, not calibrated on the speed issue's published runs.
OFFLOAD_SPEED_BAND = 0.5

AssumedValue = str | int | float | bool


@dataclass(frozen=True, slots=True)
class ShownComponent:
    """One bar of the memory breakdown: a component's bytes on one card and its share of the bar's scale
    (the card's usable memory, else the total)."""

    name: str
    bytes: int
    fraction: float


@dataclass(frozen=True, slots=True)
class MemoryShown:
    """What the memory part of a fit answer shows, whatever else the answer adds (`gpufit estimate` too)."""

    verdict: Verdict | None  # the verdict for the count asked (else the largest count estimated)
    capacity: int | None  # that verdict's usable bytes per card
    rows: list[ShownComponent]
    folk_reason: str  # why the exact figure differs from the rule of thumb (a code the templates word)
    bytes_per_weight: float  # the rule of thumb's bytes per parameter
    assumptions: list[tuple[str, AssumedValue]]  # what was assumed and worth a reader's check
    notes: list[str]  # the verdict's notes


@dataclass(frozen=True, slots=True)
class Instead:
    """The smallest change that makes a job that does not run as asked run: the fix and the job on it."""

    fix: Fix
    card: Card
    job: Assessment

    @property
    def count(self) -> int:
        return self.job.count


@dataclass(frozen=True, slots=True)
class FitAdvice:
    """Everything a fit answer says beyond the memory: one job, its searches decided here."""

    stated: Query  # the question as asked, sized for its traffic (what fixes and searches start from)
    estimate: Estimate
    card: Card | None
    currency: Currency
    sort: SortKey
    memory: MemoryShown
    single: Verdict | None = None  # the one-card verdict, when the answer is for another count
    job: Assessment | None = None  # the job on the card and count asked, with speed and price
    fixes: list[Fix] = field(default_factory=list)
    plans: list[Plan] = field(default_factory=list)
    planned: Assessment | None = None  # no card named: the first plan's job (its speed, time and cost)
    over_budget: bool = False  # no plan is within the budget: these are the cheapest anyway
    cheaper: Plan | None = None
    jobs: JobFacts | None = None
    instead: Instead | None = None
    cluster: Cluster | None = None
    budget: BudgetCheck | None = None
    needed: CardsNeeded | None = None
    traffic: Traffic | None = None
    # a card given only by its size: the slowest common card of that size stands in (Catalog.typical_of)
    typical: Card | None = None
    typical_job: Assessment | None = None
    apple: AppleFacts | None = None  # an Apple silicon Mac (core/jobs/apple.py)

    @property
    def speed(self) -> JobSpeed | None:
        """The answer's `speed`: the decode split with system RAM for an offloaded job, else the job's (on
        the stand-in card when only a size was given: `speed_stand_in`)."""
        if self.jobs is not None and self.jobs.cpu is not None:
            return cpu_speed(self.jobs.cpu)
        if self.jobs is not None and self.jobs.inference_offload is not None:
            return offload_speed(self.jobs.inference_offload)
        if self.job is not None:
            return self.job.speed
        return self.typical_job.speed if self.typical_job is not None else None

    @property
    def speed_stand_in(self) -> Card | None:
        """The card whose speed stands in for a card given only by its size (the answer names it)."""
        if self.typical is None or (self.job is not None and self.jobs_offload is None):
            return None
        return self.typical if self.speed is not None else None

    @property
    def jobs_offload(self) -> InferenceOffload | None:
        return self.jobs.inference_offload if self.jobs is not None else None

    @property
    def speed_json(self) -> dict[str, object] | None:
        """The answer's `speed` as the JSON contract carries it."""
        return speed_json(self.speed, self.speed_stand_in)

    @property
    def notes(self) -> list[str]:
        """The verdict's notes less those the speed line already words (each note once per answer)."""
        speed = self.speed
        said = set(speed.notes) if speed else set()
        return [note for note in self.memory.notes if note not in said]


def card_named(card_id: str | None) -> Card | None:
    """The catalog card a query names (its id, or a name the catalog resolves)."""
    if not card_id:
        return None
    catalog = load_catalog()
    if card_id in catalog.by_id:
        return catalog.get(card_id)
    match = catalog.resolve(card_id)
    return match.card if match else None


def main_verdict(est: Estimate) -> Verdict | None:
    """The verdict for the count asked (one card unless said), else the largest count estimated."""
    gpus = est.query.gpus or 1
    for verdict in est.verdicts:
        if verdict.count == gpus:
            return verdict
    return est.verdicts[-1] if est.verdicts else None


def shown_components(est: Estimate, capacity: int | None) -> list[ShownComponent]:
    """The breakdown's bars: each component of at least MIN_SHOWN_BYTES, as a share of the card (or total)."""
    scale = capacity or est.total_bytes or 1
    rows = []
    for name in COMPONENTS:
        value: int = getattr(est.breakdown, name)
        if value >= MIN_SHOWN_BYTES:
            rows.append(ShownComponent(name=name, bytes=value, fraction=value / scale))
    return rows


def _lacks_bf16(card_id: str | None) -> bool:
    catalog = load_catalog()
    return card_id is not None and card_id in catalog.by_id and catalog.get(card_id).bf16_tflops == 0


def assumptions(est: Estimate, stated: Query) -> list[tuple[str, AssumedValue]]:
    """(field, value) for what was assumed, worth a reader's check; never a field the user stated."""
    filled = est.query
    said = stated.said()
    items: list[tuple[str, AssumedValue]] = []
    training = filled.task is not Task.INFERENCE
    for name in ASSUMPTION_ORDER:
        if name in said:
            continue
        value = getattr(filled, name)
        if value is None:
            continue
        if not training and name in ("method", "lora_rank", "grad_checkpointing", "optimizer", "zero_stage"):
            continue
        if training and name == "runtime":
            continue
        if name == "lora_rank" and filled.method not in (Method.LORA, Method.QLORA):
            continue
        if name == "method" and filled.task is Task.PRETRAIN and value is Method.FULL:
            continue  # pretraining trains every weight: no "full fine-tune" assumed
        if name == "gpus" and not (filled.card or filled.card_memory_bytes):
            continue
        if name == "zero_stage" and ((filled.gpus or 1) == 1 or filled.tensor_parallel is not None):
            continue  # one card shards nothing; a Megatron layout (core/layout.py) says its own sharding
        if name in ("pipeline_parallel", "data_parallel") and value == 1:
            continue
        if name == "optimizer" and filled.method is Method.QLORA:
            continue
        if name == "precision" and value is Precision.BF16 and _lacks_bf16(filled.card):
            value = Precision.FP16  # what the card runs (its note says so), never "assumed bf16" on a V100
        items.append((name, value.value if hasattr(value, "value") else value))
    return items


def memory_shown(est: Estimate, stated: Query) -> MemoryShown:
    """The memory part of a fit answer for `est`, with what was assumed beyond what `stated` said."""
    verdict = main_verdict(est)
    capacity = verdict.capacity_bytes if verdict else None
    return MemoryShown(
        verdict=verdict,
        capacity=capacity,
        rows=shown_components(est, capacity),
        folk_reason=folk_reason(est),
        bytes_per_weight=est.folk.weights_bytes / max(est.params, 1),
        assumptions=assumptions(est, stated),
        notes=list(verdict.notes) if verdict else [],
    )


def offload_speed(plan: InferenceOffload) -> OffloadSpeed:
    """The answers' `speed` for a job split between the card and system RAM (core/jobs/offload.py)."""
    return OffloadSpeed(
        decode_tokens_per_s=plan.decode_tokens_per_s,
        aggregate_tokens_per_s=plan.decode_tokens_per_s,
        band=OFFLOAD_SPEED_BAND,
        kv_cache_dtype=plan.kv_cache_dtype,
    )


def cpu_speed(run: CpuRun) -> OffloadSpeed:
    """The answers' `speed` for a job on the CPU and system RAM alone (core/jobs/cpu.py): bandwidth
    arithmetic with the same band as a split with the card."""
    return OffloadSpeed(
        decode_tokens_per_s=run.decode_tokens_per_s,
        aggregate_tokens_per_s=run.decode_tokens_per_s,
        parallelism="cpu",
        band=OFFLOAD_SPEED_BAND,
        kv_cache_dtype="auto",
    )


def smallest_change_that_runs(fixes: list[Fix], currency: Currency) -> Instead | None:
    """Speed, time and cost of the first fix (smallest first) that makes the job run, for a setup that
    does not."""
    for fix in fixes:
        if fix.verdict is Fit.NO:
            continue
        card = card_named(fix.card)
        if card is None:
            continue
        job = assess(fix.query, card, fix.count, book=price_book_in_force(), currency=currency)
        if job.fits:
            return Instead(fix=fix, card=card, job=job)
    return None


def plan_job(plan: Plan, currency: Currency) -> Assessment | None:
    """The job of a plan on its card and count, with speed and price: what an answer that ranks plans gives
    as its own `speed`, `time` and `cost` (the first plan's, the one it recommends), so a plan answer
    carries the same keys as an answer for a card named."""
    card = card_named(plan.card)
    if card is None:
        return None
    return assess(plan.query, card, plan.count, book=price_book_in_force(), currency=currency)


def advise_fit(query: Query, currency: Currency, *, light: bool = False) -> FitAdvice:
    """The fit answer's advice for `query`, priced in `currency`; `light` runs no search (speed, price,
    fixes, plans): the memory alone, for answers that show several jobs side by side."""
    sort: SortKey = query.sort or "cost"
    query, traffic = apply_traffic(query)
    est = estimate(query)
    filled = est.query
    card = card_named(filled.card)
    memory = memory_shown(est, query)
    verdict = memory.verdict
    single = next((v for v in est.verdicts if v.count == 1), None)
    single = single if single is not None and single is not verdict else None
    typical = None
    if card is None and filled.card_memory_bytes and not light and not filled.card_name:
        # (a card the catalogue lacks, named with its memory, gets no stand-in: its speed is not known)
        typical = load_catalog().typical_of(filled.card_memory_bytes)
    jobs = job_facts(est, card or typical, filled.gpus or 1, verdict.fits if verdict else None, query)
    apple = apple_facts(card, query, est)
    if light:
        return FitAdvice(
            stated=query,
            estimate=est,
            card=card,
            currency=currency,
            sort=sort,
            memory=memory,
            single=single,
            jobs=jobs,
            traffic=traffic,
            apple=apple,
        )
    book = price_book_in_force()
    job = None
    if card is not None:
        job = assess(filled, card, filled.gpus or 1, book=book, currency=currency, result=est)
    fixes = (
        fit_fixes(query, currency=currency) if verdict is not None and verdict.fits is not Fit.FITS else []
    )
    unpinned = card is None and memory.capacity is None
    # no GPU: the cards to rent instead run the same engine and weights as the CPU answer
    searched = query.model_copy(update={"runtime": filled.runtime}) if jobs.cpu is not None else query
    plans = search_plans(searched, limit=PLANS_SHOWN, currency=currency, sort=sort) if unpinned else []
    cheaper = None
    if card is not None and verdict is not None and verdict.fits is Fit.FITS:
        cheaper = cheaper_plan(query, card, currency)
    offloaded = jobs.verdict in ("offload", "tight")
    instead = (
        smallest_change_that_runs(fixes, currency)
        if job is not None and not job.fits and not offloaded
        else None
    )
    over_budget = False
    if not plans and query.budget is not None and unpinned:
        # nothing within the budget: the cheapest plans anyway, said to be over it
        without_budget = query.model_copy(update={"budget": None})
        plans = search_plans(without_budget, limit=PLANS_SHOWN, currency=currency, sort=sort)
        over_budget = True
    # (a CPU-only answer's speed is the CPU's: the plans are what to rent instead)
    planned = plan_job(plans[0], currency) if plans and job is None and jobs.cpu is None else None
    cluster = None
    if job is not None and card is not None:
        cluster = cluster_for(query, card, job, book=book, currency=currency)
    if cluster is None and instead is not None:
        # the count asked does not run as set up: the cluster of the smallest change that does
        cluster = cluster_for(instead.fix.query, instead.card, instead.job, book=book, currency=currency)
    budget = None
    if query.budget is not None:
        costs = [] if over_budget else plan_costs(plans)
        runs = job if job is not None and job.fits else (instead.job if instead is not None else None)
        if card is not None and runs is not None and runs.cost is not None:
            costs = [(runs.cost.total, runs.cost.per_hour)]
        budget = check_budget(query, costs, currency)
    short = verdict is not None and verdict.fits is Fit.NO and not offloaded
    one_device = card is not None and card.unified_memory  # a Mac: no "how many of them"
    needed = (
        needed_when_short(query, card, currency) if short and card is not None and not one_device else None
    )
    typical_job = None
    if typical is not None and verdict is not None and verdict.fits is not Fit.NO:
        typical_job = assess(filled, typical, filled.gpus or 1, book=None, currency=currency, result=est)
    return FitAdvice(
        stated=query,
        estimate=est,
        card=card,
        currency=currency,
        sort=sort,
        memory=memory,
        single=single,
        job=job,
        fixes=fixes,
        plans=plans,
        planned=planned,
        over_budget=over_budget,
        cheaper=cheaper,
        jobs=jobs,
        instead=instead,
        cluster=cluster,
        budget=budget,
        needed=needed,
        traffic=traffic,
        typical=typical,
        typical_job=typical_job,
        apple=apple,
    )


__all__ = [
    "ASSUMPTION_ORDER",
    "MIN_SHOWN_BYTES",
    "FitAdvice",
    "Instead",
    "MemoryShown",
    "ShownComponent",
    "advise_fit",
    "assumptions",
    "card_named",
    "cpu_speed",
    "main_verdict",
    "memory_shown",
    "offload_speed",
    "plan_job",
    "shown_components",
    "smallest_change_that_runs",
]
