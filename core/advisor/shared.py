"""Pieces plans and fixes share: a plan from an estimate on a card, prices, quality and sort order."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from core.advisor.model import INFERENCE_PRECISIONS, METHOD_QUALITY, QUALITY, QUALITY_RANK, Plan, SortKey
from core.catalog import Card
from core.cost import (
    CardPrice,
    PriceBook,
    PriceBookError,
    job_cost,
    load_price_book,
)
from core.estimator import (
    Estimate,
    Fit,
    Verdict,
)
from core.query import Currency, Method, Precision, Query, Runtime, Task
from core.speed import inference_speed, training_speed


def verdict_for_count(result: Estimate, count: int) -> Verdict | None:
    for verdict in result.verdicts:
        if verdict.count == count:
            return verdict
    return None


def card_price(card_id: str, currency: Currency, book: PriceBook | None = None) -> CardPrice | None:
    """The card's price from `book` (a plan search passes the one it started with), else the one in force."""
    if book is not None:
        return book.price_for(card_id, currency)
    try:
        return load_price_book().price_for(card_id, currency)
    except PriceBookError:
        return None


def quality_of(query: Query) -> str:
    if query.task is Task.INFERENCE:
        return QUALITY.get(query.precision or Precision.BF16, "none")
    method_quality = METHOD_QUALITY[query.method or Method.FULL]
    if query.method is Method.FULL and query.precision in (Precision.INT8, Precision.INT4):
        return "noticeable"
    return method_quality


def speed_value(result: Estimate, card: Card, count: int) -> float:
    if result.query.task is Task.INFERENCE:
        return inference_speed(result, card, count).decode_tokens_per_s
    return training_speed(result, card, count, None).tokens_per_s


def plan_on_card(
    result: Estimate, card: Card, count: int, currency: Currency, book: PriceBook | None = None
) -> Plan | None:
    verdict = verdict_for_count(result, count)
    if verdict is None or verdict.fits is Fit.NO:
        return None
    query = result.query
    price = card_price(card.id, currency, book)
    notes = list(verdict.notes)
    decode = aggregate = ttft = train = hours = mfu = None
    tokens_per_s: float | None
    if query.task is Task.INFERENCE:
        inf = inference_speed(result, card, count)
        decode, aggregate, ttft, mfu = (
            inf.decode_tokens_per_s,
            inf.aggregate_tokens_per_s,
            inf.ttft_s,
            inf.mfu,
        )
        tokens_per_s = aggregate
        notes += [n for n in inf.notes if n not in notes]
    else:
        tr = training_speed(result, card, count, query.tokens)
        train, hours, mfu = tr.tokens_per_s, tr.training_hours, tr.mfu
        tokens_per_s = None
        notes += [n for n in tr.notes if n not in notes]
    cost = job_cost(price, count, tokens_per_s=tokens_per_s, hours=hours) if price else None
    return Plan(
        card=card.id,
        card_name=card.name,
        memory_gib=card.memory_gib,
        count=count,
        task=query.task,
        method=query.method,
        precision=query.precision or Precision.BF16,
        runtime=query.runtime or Runtime.TRANSFORMERS,
        need_bytes=verdict.need_bytes,
        capacity_bytes=verdict.capacity_bytes,
        verdict=verdict.fits,
        margin=verdict.margin,
        nvlink=card.has_nvlink,
        quality=quality_of(query),
        decode_tokens_per_s=decode,
        aggregate_tokens_per_s=aggregate,
        ttft_s=ttft,
        training_tokens_per_s=train,
        training_hours=hours,
        mfu=mfu,
        cost_per_hour=cost.per_hour if cost else None,
        cost_per_million_tokens=cost.per_million_tokens if cost else None,
        total_cost=cost.total if cost else None,
        currency=currency,
        price=price,
        notes=notes,
        query=query,
    )


def variants_for(query: Query, card: Card) -> Iterable[Query]:
    """The method × precision choices worth trying on this card for this job."""
    said = query.said()
    if query.task is Task.INFERENCE:
        precisions = (
            [query.precision] if "precision" in said and query.precision else list(INFERENCE_PRECISIONS)
        )
        for precision in precisions:
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
    # Activation recompute is the usual first memory saver on small cards: tried when the user did not say.
    recompute = [query.grad_checkpointing] if "grad_checkpointing" in said else [False, True]
    for method in methods:
        for checkpointing in recompute:
            update: dict[str, Any] = {"method": method, "grad_checkpointing": checkpointing}
            if "precision" not in said:
                update["precision"] = None
            yield query.model_copy(update=update)


def stated_only(query: Query) -> Query:
    """The asked query with only what the user said (defaults re-derive per variant)."""
    return Query.model_validate(query.said() | {"task": query.task})


def sort_key(sort: SortKey) -> Callable[[Plan], tuple[float, ...]]:
    def cost_value(plan: Plan) -> float:
        if plan.total_cost is not None:
            return plan.total_cost
        return plan.cost_per_hour if plan.cost_per_hour is not None else float("inf")

    if sort == "speed":
        return lambda p: (-p.speed, cost_value(p), QUALITY_RANK[p.quality])
    return lambda p: (cost_value(p), QUALITY_RANK[p.quality], -p.speed)


def budget_caps(query: Query, max_per_hour: float | None) -> tuple[float | None, float | None]:
    """(per-hour cap, total cap) from the arguments and the budget the user stated."""
    per_hour, total = max_per_hour, None
    if query.budget is not None:
        hourly = query.budget_per_hour
        if hourly is None:
            hourly = query.task is Task.INFERENCE or query.tokens is None
        if hourly and per_hour is None:
            per_hour = query.budget
        elif not hourly:
            total = query.budget
    return per_hour, total
