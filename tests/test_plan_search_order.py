"""The plan search screens cards in the order of their price and stops where no dearer card can change its
result (core/advisor/plan_search.py): held against the search that screened every card first, over many
jobs drawn with a fixed seed, in both currencies, with and without a platform, a budget, a said count, a
serving engine (plans built in price order) and a training job (a shortlist ranked by hourly price).
"""

from __future__ import annotations

import heapq
import random
from typing import Any

import pytest

from core.advisor.model import QUALITY_RANK, Plan
from core.advisor.plan_search import _plans, search_cards, search_counts
from core.advisor.shared import (
    budget_caps,
    card_price,
    plan_on_card,
    quality_of,
    sort_key,
    stated_only,
    variant_class,
    variants_for,
)
from core.catalog import Card
from core.cost import CardPrice, PriceBook, currency_for, price_book_in_force
from core.estimator import estimate, need_bytes
from core.query import BudgetPeriod, Currency, Method, Precision, Query, SortKey, Task
from core.registry import load_registry
from core.runtimes import runtime_profile


def _every_card_screened(
    query: Query, *, limit: int, max_per_hour: float | None, sort: SortKey, currency: Currency | None
) -> tuple[Plan, ...]:
    """The search as it was: every card screened, then the plans built (kept whole to compare with)."""
    book = price_book_in_force()
    money = currency_for(query.currency, None) if currency is None else currency
    per_hour_cap, total_cap = budget_caps(query, max_per_hour)
    candidates = search_cards(query, money, book)
    if total_cap is not None and not query.has_data_amount:
        return ()
    counts = search_counts(query)
    base = stated_only(query).model_copy(update={"card": None, "card_memory_bytes": None})
    key = sort_key(sort)
    hourly_ranked = sort == "cost" and not query.has_data_amount and total_cap is None
    kv_pool = runtime_profile(query.runtime).kv_pool
    by_hourly_price = hourly_ranked and not kv_pool
    in_price_order = hourly_ranked and kv_pool
    shortlist: list[tuple[tuple[float, int], Card, Query, int]] = []
    by_price: list[tuple[float, int, Card, Query, int]] = []
    best: dict[tuple[str, str, str], Plan] = {}

    def keep(plan: Plan | None) -> None:
        if plan is None:
            return
        if per_hour_cap is not None and (plan.cost_per_hour is None or plan.cost_per_hour > per_hour_cap):
            return
        if total_cap is not None and (plan.total_cost is None or plan.total_cost > total_cap):
            return
        group = (plan.card, str(plan.method), plan.precision.value)
        if group not in best or key(plan) < key(best[group]):
            best[group] = plan

    def price_of(card: Card, platform_id: str | None) -> CardPrice | None:
        return card_price(card.id, money, book, platform_id)

    def over_cap(card: Card, count: int) -> bool:
        if per_hour_cap is None:
            return False
        price = price_of(card, base.platform)
        return price is None or round(price.per_hour * count, 4) > per_hour_cap

    variants: dict[tuple[bool, bool], list[Query]] = {}
    for card in candidates:
        kind = variant_class(card)
        if kind not in variants:
            variants[kind] = list(variants_for(base, card))
        for index in range(len(variants[kind])):
            for count in counts:
                if per_hour_cap is not None and over_cap(card, count):
                    break
                trial = variants[kind][index].model_copy(update={"gpus": count})
                if need_bytes(trial) > card.memory_bytes:
                    continue
                quality = QUALITY_RANK[quality_of(trial)]
                if by_hourly_price:
                    price = price_of(card, query.platform)
                    hourly = price.per_hour * count if price else float("inf")
                    shortlist.append(((hourly, quality), card, trial, count))
                    break
                if in_price_order:
                    price = price_of(card, trial.platform)
                    hourly = round(price.per_hour * count, 4) if price else float("inf")
                    by_price.append((hourly, len(by_price), card, trial, index))
                    continue
                plan = plan_on_card(
                    estimate(trial.model_copy(update={"card": card.id})), card, count, money, book
                )
                keep(plan)
                if plan is not None and sort == "cost":
                    break
    done: set[tuple[str, int]] = set()
    for hourly, _, card, trial, index in sorted(by_price, key=lambda entry: entry[:2]):
        if (card.id, index) in done:
            continue
        if len(best) >= limit:
            last = sorted(best.values(), key=key)[limit - 1].cost_per_hour
            if last is not None and hourly > last:
                break
        count = trial.gpus or 1
        plan = plan_on_card(estimate(trial.model_copy(update={"card": card.id})), card, count, money, book)
        keep(plan)
        if plan is not None:
            done.add((card.id, index))
    if in_price_order:
        position = {card.id: i for i, card in enumerate(candidates)}
        best = dict(sorted(best.items(), key=lambda item: position[item[0][0]]))
    by_price_first = query.task is Task.INFERENCE and query.platform == base.platform
    for (hourly, _), card, trial, count in heapq.nsmallest(3 * limit, shortlist, key=lambda entry: entry[0]):
        if by_price_first and len(best) >= limit:
            last = sorted(best.values(), key=key)[limit - 1].cost_per_hour
            if last is not None and round(hourly, 4) > last:
                break
        keep(plan_on_card(estimate(trial.model_copy(update={"card": card.id})), card, count, money, book))
    return tuple(sorted(best.values(), key=key)[:limit])


SHAPES: tuple[dict[str, Any], ...] = (
    {},
    {"precision": Precision.BF16},
    {"precision": Precision.INT4},
    {"batch": 16},
    {"runtime": "vllm", "batch": 8},
    {"runtime": "sglang", "seq": 32768},
    {"runtime": "llama.cpp"},
    {"gpus": 2},
    {"task": Task.FINETUNE},
    {"task": Task.FINETUNE, "method": Method.LORA, "precision": Precision.BF16},
    {"task": Task.FINETUNE, "method": Method.QLORA, "seq": 8192},
    {"task": Task.FINETUNE, "method": Method.FULL},
    {"task": Task.FINETUNE, "tokens": 2_000_000_000},
    {"task": Task.PRETRAIN},
)
BUDGETS: tuple[tuple[float | None, BudgetPeriod | None], ...] = (
    (None, None),
    (None, None),
    (3.0, "hour"),
    (2000.0, "month"),
    (500.0, "total"),
)


def _searches(count: int, seed: int) -> list[tuple[Query, int, SortKey, Currency]]:
    rng = random.Random(seed)
    models = [model.id for model in load_registry().models]
    found: list[tuple[Query, int, SortKey, Currency]] = []
    sorts: tuple[SortKey, ...] = ("cost", "cost", "speed")
    for _ in range(count):
        budget, period = rng.choice(BUDGETS)
        platform = rng.choice((None, None, None, "autodl"))
        query = Query(
            model=rng.choice(models),
            budget=budget,
            budget_period=period,
            platform=platform,
            **rng.choice(SHAPES),
        )
        found.append((query, rng.choice((3, 5, 8)), rng.choice(sorts), rng.choice(list(Currency))))
    return found


@pytest.mark.parametrize("seed", [5, 6])
def test_the_search_in_price_order_finds_the_plans_of_screening_every_card(seed: int) -> None:
    book = price_book_in_force()
    assert isinstance(book, PriceBook)
    shown = 0
    for query, limit, sort, currency in _searches(70, seed):
        kwargs: dict[str, Any] = {"limit": limit, "max_per_hour": None, "sort": sort, "currency": currency}
        expected = _every_card_screened(query, **kwargs)
        found = _plans.__wrapped__(query, cards=None, _book=book, **kwargs)
        assert found == expected, query.model_dump(exclude_defaults=True)
        shown += len(found)
    assert shown > 100
