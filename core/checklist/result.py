"""The checklist's result: the query it adds up to, memory per card, ranked plans, fixes, questions."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.advisor import Fix, Plan, fixes, plans
from core.assessment import Assessment, assess
from core.catalog import Card, Segment, load_catalog
from core.checklist.model import DEFAULT_PARAMS_B, ChecklistAnswers, ChecklistState, default_currency
from core.checklist.provision import MachineNeeds, machine_needs, stack_question
from core.checklist.shortlist import Shortlist, keeping_margin, shortlist
from core.estimator import Estimate, Fit
from core.jobs.facts import job_facts
from core.jobs.offload import InferenceOffload
from core.query import Currency, Query
from core.runtimes import load_runtimes


def to_query(state: ChecklistState) -> Query:
    """The fit question the answers make (not-said fields stay None for `with_defaults` to fill)."""
    answers = state.answers
    params_b = answers.params_b
    if answers.model is None and params_b is None:
        params_b = DEFAULT_PARAMS_B
    return Query(
        task=answers.task,
        method=answers.method,
        model=answers.model,
        params_b=params_b if answers.model is None else None,
        card=answers.card,
        gpus=answers.gpus,
        precision=answers.precision,
        batch=answers.batch,
        seq=answers.seq,
        tokens=answers.tokens if not answers.serving else None,
        budget=answers.budget,
        budget_period=answers.budget_period,
        currency=answers.currency or default_currency(state.lang),
        # the RAM step was answered: the job runs where the rest can live in RAM (llama.cpp's split)
        runtime=load_runtimes().gguf_default.id if answers.host_memory_bytes and answers.serving else None,
        host_memory_bytes=answers.host_memory_bytes,
        host_memory_type=answers.host_memory_type,
        host_memory_channels=answers.host_memory_channels,
    )


# Days a serving deployment runs in the month the result prices (a calendar month, rounded).
DAYS_PER_MONTH = 30
HOURS_PER_DAY = 24
SAFETY_MARGIN = 1.2  # the article's redundancy factor on top of the estimate
PLAN_LIMIT = 6
MIN_SHOWN_SHARE = 0.001  # breakdown components below 0.1% of the total are left out of the sheet
CARD_PLAN_LIMIT = 3
CANDIDATES_PER_PLAN = 4  # plans searched per plan shown: some fail the margin or the user's market


class ProviderQuestion(BaseModel):
    """One question to ask the provider before paying; `cards` names the cards it is about."""

    model_config = ConfigDict(frozen=True)

    code: str
    cards: list[str] = Field(default_factory=list)


class CardCheck(BaseModel):
    """The preferred card against the need: one card's memory, all cards' memory, and the verdict."""

    model_config = ConfigDict(frozen=True)

    card: str
    card_name: str
    count: int
    count_said: bool
    card_bytes: int
    total_card_bytes: int
    need_per_card_bytes: int
    need_with_margin_bytes: int
    job_total_bytes: int
    verdict: Fit | None
    nvlink: bool
    consumer: bool


class ChecklistResult(BaseModel):
    """Everything the result sheet shows, as data; templates word it."""

    model_config = ConfigDict(frozen=True)

    lang: str
    answers: ChecklistAnswers
    query: Query
    estimate: Estimate
    model_name: str
    need_per_card_bytes: int
    need_with_margin_bytes: int
    margin: float = SAFETY_MARGIN
    check: CardCheck | None = None
    offload: InferenceOffload | None = None  # the split between the cards named and system RAM
    plans: list[Plan] = Field(default_factory=list)
    card_plans: list[Plan] = Field(default_factory=list)
    over_budget: bool = False
    shortlist: Shortlist = Field(default_factory=Shortlist)
    needs: MachineNeeds | None = None
    fixes: list[Fix] = Field(default_factory=list)
    questions: list[ProviderQuestion] = Field(default_factory=list)
    currency: Currency
    requests_per_day: float | None = None
    hours_per_day: int = HOURS_PER_DAY
    days_per_month: int = DAYS_PER_MONTH


def result(state: ChecklistState) -> ChecklistResult:
    """The memory each card needs, the plans that fit and their cost, fixes for the preferred card, questions.

    Raises ValueError (UnknownModelError/UnknownCardError) only for names that left the data since the answer.
    """
    answers = state.answers
    asked = to_query(state)
    currency = asked.currency or default_currency(state.lang)
    card = load_catalog().by_id.get(asked.card) if asked.card else None

    general = asked.model_copy(update={"card": None, "gpus": None, "budget": None})
    candidates = plans(general, limit=PLAN_LIMIT * CANDIDATES_PER_PLAN, currency=currency)
    short = shortlist(
        keeping_margin(candidates, general, margin=SAFETY_MARGIN, currency=currency),
        answers=answers,
        currency=currency,
        margin=SAFETY_MARGIN,
        limit=PLAN_LIMIT,
        hours_per_day=HOURS_PER_DAY,
        days_per_month=DAYS_PER_MONTH,
    )
    found = short.plans

    card_plans: list[Plan] = []
    count = asked.gpus
    if card is not None:
        card_plans = plans(
            asked.model_copy(update={"budget": None}), limit=CARD_PLAN_LIMIT, currency=currency
        )
        if count is None:
            count = card_plans[0].count if card_plans else 1
    job = assess(
        asked.model_copy(update={"gpus": count}) if card is not None else asked,
        card,
        count,
        book=None,
        currency=currency,
        speed=False,
    )
    est = job.estimate
    need = est.total_bytes
    check = _card_check(job, answers.gpus is not None) if job.card is not None else None
    needs = machine_needs(
        task=est.query.task,
        weights_bytes=est.folk.weights_bytes,
        trainable_params=est.trainable_params,
        data_tokens=answers.tokens / (answers.epochs or 1) if answers.tokens else None,
        text_bytes=answers.text_bytes,
        gpu_memory_bytes=_box_memory(card, count or 1, found),
    )
    offload = None
    if card is not None and answers.host_memory_bytes and answers.serving:
        jobs = job_facts(est, card, count or 1, check.verdict if check is not None else None)
        offload = jobs.inference_offload
    fix_list: list[Fix] = []
    if check is not None and check.verdict is not Fit.FITS:
        fix_list = fixes(asked.model_copy(update={"gpus": count}), currency=currency)
    return ChecklistResult(
        lang=state.lang,
        answers=answers,
        query=est.query,
        estimate=est,
        model_name=est.model_name,
        need_per_card_bytes=need,
        need_with_margin_bytes=int(need * SAFETY_MARGIN),
        check=check,
        offload=offload,
        plans=found,
        card_plans=card_plans,
        over_budget=short.over_budget,
        shortlist=short,
        needs=needs,
        fixes=fix_list,
        questions=provider_questions(card, count or 1, found, needs),
        currency=currency,
        requests_per_day=answers.requests_per_day if answers.serving else None,
    )


def _card_check(job: Assessment, count_said: bool) -> CardCheck:
    card, count, verdict = job.card, job.count, job.verdict
    assert card is not None
    need = verdict.need_bytes if verdict else job.estimate.total_bytes
    return CardCheck(
        card=card.id,
        card_name=card.name,
        count=count,
        count_said=count_said,
        card_bytes=card.memory_bytes,
        total_card_bytes=card.memory_bytes * count,
        need_per_card_bytes=need,
        need_with_margin_bytes=int(need * SAFETY_MARGIN),
        job_total_bytes=need * count,
        verdict=verdict.fits if verdict else None,
        nvlink=card.has_nvlink,
        consumer=card.segment is Segment.CONSUMER,
    )


def _box_memory(card: Card | None, count: int, found: list[Plan]) -> int:
    """GPU memory of the machine to rent: the user's cards, else the top plan's."""
    if card is not None:
        return card.memory_bytes * count
    if found:
        return found[0].capacity_bytes * found[0].count
    return 0


def provider_questions(
    card: Card | None, count: int, found: list[Plan], needs: MachineNeeds | None = None
) -> list[ProviderQuestion]:
    """What to ask before renting, most decisive first; card-specific ones name the cards concerned."""
    catalog = load_catalog()
    considered = (
        [card] if card is not None else [catalog.by_id[p.card] for p in found[:3] if p.card in catalog.by_id]
    )
    names = list(dict.fromkeys(c.name for c in considered))
    multi = count > 1 or any(p.count > 1 for p in found[:3])
    pcie_only = [c.name for c in considered if not c.has_nvlink]
    consumer = [c.name for c in considered if c.segment is not Segment.DATACENTER]
    no_ecc = [c.name for c in considered if not c.ecc]
    stacks: dict[str, list[str]] = {}
    for considered_card in considered:
        stacks.setdefault(stack_question(considered_card), []).append(considered_card.name)
    questions = [ProviderQuestion(code="vram_fixed", cards=names)]
    questions += [
        ProviderQuestion(code=code, cards=list(dict.fromkeys(cards))) for code, cards in stacks.items()
    ] or [ProviderQuestion(code="driver_cuda")]
    questions += [
        ProviderQuestion(code="interconnect_multi" if multi else "interconnect", cards=pcie_only),
        ProviderQuestion(code="ecc", cards=no_ecc),
    ]
    if consumer:
        questions.append(ProviderQuestion(code="throttling", cards=list(dict.fromkeys(consumer))))
    questions += [
        ProviderQuestion(code="disk"),
        ProviderQuestion(code="ram"),
        ProviderQuestion(code="storage_bandwidth"),
        ProviderQuestion(code="transfer_charges"),
        ProviderQuestion(code="region"),
        ProviderQuestion(code="billing"),
    ]
    return questions
