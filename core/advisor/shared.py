"""Pieces plans and fixes share: a plan from an estimate on a card, prices, quality and sort order."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from core.advisor.model import INFERENCE_PRECISIONS, METHOD_QUALITY, QUALITY, QUALITY_RANK, Plan
from core.assessment import Assessment, assess
from core.catalog import Card
from core.cost import CardPrice, PriceBook, price_book_in_force
from core.estimator import Estimate
from core.platforms import platform
from core.query import (
    BUDGET_PERIOD_HOURS,
    BudgetPeriod,
    Currency,
    Method,
    Precision,
    Query,
    SortKey,
    Task,
)
from core.runtimes import load_runtimes
from core.speed import inference_speed, training_speed


def card_price(
    card_id: str, currency: Currency, book: PriceBook | None = None, platform_id: str | None = None
) -> CardPrice | None:
    """The card's price from `book` (a plan search passes the one it started with), else the one in force;
    only the named platform's prices when the question names one (None where it does not sell the card)."""
    book = book if book is not None else price_book_in_force()
    return book.price_for(card_id, currency, platform(platform_id)) if book is not None else None


def quality_of(query: Query) -> str:
    if query.task is Task.INFERENCE:
        return QUALITY.get(query.precision or Precision.BF16, "none")
    method_quality = METHOD_QUALITY[query.method or Method.FULL]
    if query.method is Method.FULL and query.precision in (Precision.INT8, Precision.INT4):
        return "noticeable"
    return method_quality


def speed_value(result: Estimate, card: Card, count: int) -> float:
    """Single-stream decode tokens/s for serving, training tokens/s for training: what 'fastest' ranks by
    (also for a job that does not fit yet, to compare fixes with it)."""
    if result.query.task is Task.INFERENCE:
        return inference_speed(result, card, count).decode_tokens_per_s
    return training_speed(result, card, count, None).tokens_per_s


def plan_on_card(
    result: Estimate, card: Card, count: int, currency: Currency, book: PriceBook | None = None
) -> Plan | None:
    job = assess(
        result.query,
        card,
        count,
        book=book if book is not None else price_book_in_force(),
        currency=currency,
        result=result,
    )
    return plan_from(job, currency)


def plan_from(job: Assessment, currency: Currency) -> Plan | None:
    """The plan an assessment describes, when the job runs on it."""
    verdict, card = job.verdict, job.card
    if verdict is None or card is None or not job.fits:
        return None
    query = job.query
    notes = list(verdict.notes)
    speed_notes = job.inference.notes if job.inference else job.training.notes if job.training else []
    notes += [n for n in speed_notes if n not in notes]
    inf, tr, cost = job.inference, job.training, job.cost
    return Plan(
        card=card.id,
        card_name=card.name,
        memory_gib=card.memory_gib,
        count=job.count,
        task=query.task,
        method=query.method,
        precision=query.precision or Precision.BF16,
        runtime=query.runtime or load_runtimes().training_default.id,
        need_bytes=verdict.need_bytes,
        capacity_bytes=verdict.capacity_bytes,
        verdict=verdict.fits,
        margin=verdict.margin,
        nvlink=card.has_nvlink,
        quality=quality_of(query),
        decode_tokens_per_s=inf.decode_tokens_per_s if inf else None,
        aggregate_tokens_per_s=inf.aggregate_tokens_per_s if inf else None,
        ttft_s=inf.ttft_s if inf else None,
        training_tokens_per_s=tr.tokens_per_s if tr else None,
        training_hours=tr.training_hours if tr else None,
        mfu=inf.mfu if inf else tr.mfu if tr else None,
        cost_per_hour=cost.per_hour if cost else None,
        cost_per_million_tokens=cost.per_million_tokens if cost else None,
        total_cost=cost.total if cost else None,
        currency=currency,
        price=job.price,
        notes=notes,
        query=query,
    )


def _on_card(precision: Precision, card: Card, said: dict[str, object]) -> Precision:
    """bf16 the user did not ask for is fp16 on a card without bf16 (V100, T4): what it would really run."""
    if precision is Precision.BF16 and "precision" not in said and card.bf16_tflops == 0:
        return Precision.FP16
    return precision


def variant_class(card: Card) -> tuple[bool, bool]:
    """What of a card `variants_for` reads: whether it lacks bf16 and whether it has fp8 units (cards of one
    class get the same variants, so a search over many cards makes them once per class)."""
    return card.bf16_tflops == 0, bool(card.fp8_tflops)


def variants_for(query: Query, card: Card) -> Iterable[Query]:
    """The method × precision choices worth trying on this card for this job (they depend on the card only
    through `variant_class`)."""
    said = query.said()
    if query.task is Task.INFERENCE:
        precisions = (
            [query.precision] if "precision" in said and query.precision else list(INFERENCE_PRECISIONS)
        )
        for precision in dict.fromkeys(_on_card(p, card, said) for p in precisions):
            if precision is Precision.FP8 and "precision" not in said and not card.fp8_tflops:
                continue
            yield query.model_copy(update={"precision": precision, "method": None})
        return
    if query.method is not None and "method" in said:
        methods = [query.method]
    elif query.task is Task.PRETRAIN:
        methods = [Method.FULL]
    else:
        methods = [Method.FULL, Method.LORA, Method.QLORA]
    # Every row keeps the same activation-recompute setting: the user's, else the default (on for
    # fine-tuning), so that rows differ only in card, count, method and precision and their memory compares.
    recompute = [query.grad_checkpointing if "grad_checkpointing" in said else None]
    for method in methods:
        for checkpointing in recompute:
            update: dict[str, Any] = {"method": method, "grad_checkpointing": checkpointing}
            if "precision" not in said:
                no_bf16 = card.bf16_tflops == 0 and method is not Method.QLORA
                update["precision"] = Precision.FP16 if no_bf16 else None
            yield query.model_copy(update=update)


def stated_only(query: Query) -> Query:
    """The asked query with only what the user said (defaults re-derive per variant)."""
    return Query.model_validate(query.said() | {"task": query.task})


def sort_key(sort: SortKey) -> Callable[[Plan], tuple[float, ...]]:
    def cost_value(plan: Plan) -> float:
        # the whole job's cost (issue 19): the run's total, else per million tokens; the hourly price only
        # when the plan has no speed (a card twice as fast at 1.8x the price is the cheaper plan)
        # (a service without its traffic is a card rented by the hour: its hourly price is the job's cost)
        if plan.total_cost is not None:
            return plan.total_cost
        if plan.cost_per_hour is not None and plan.training_tokens_per_s:
            return plan.cost_per_hour / (plan.training_tokens_per_s * 3600) * 1e6
        return plan.cost_per_hour if plan.cost_per_hour is not None else float("inf")

    if sort == "speed":
        return lambda p: (-p.speed, cost_value(p), QUALITY_RANK[p.quality])
    return lambda p: (cost_value(p), QUALITY_RANK[p.quality], -p.speed)


def budget_caps(query: Query, max_per_hour: float | None) -> tuple[float | None, float | None]:
    """(per-hour cap, total cap) from the arguments and the budget the user stated."""
    per_hour, total = max_per_hour, None
    if query.budget is not None:
        period = budget_period(query)
        if period in ("day", "week", "month") and query.task is not Task.INFERENCE and query.has_data_amount:
            period = "total"  # a training job with its data: the day's or month's money pays for the run
        if period == "total" and not query.has_data_amount and query.task is not Task.INFERENCE:
            # the run's length unknown from its data: a total over the days said ('跑两天') caps the hour, and
            # with no days said no plan can be held to it (its total is unknown), so none is dropped
            if query.rental_days and per_hour is None:
                per_hour = query.budget / (query.rental_days * 24)
        elif period == "total":
            total = query.budget
        elif per_hour is None:
            per_hour = query.budget / BUDGET_PERIOD_HOURS[period]
    return per_hour, total


def budget_period(query: Query) -> BudgetPeriod:
    """What the budget is per: as said, else per hour for a service or a job without its amount of data (its
    length is unknown, so only its rate can be held to a budget), else the whole job. A month or a day of a
    training job with its data is held to it as the run's money (budget_caps)."""
    period = query.budget_period
    if period is None:
        period = "hour" if query.task is Task.INFERENCE or not query.has_data_amount else "total"
    return period
