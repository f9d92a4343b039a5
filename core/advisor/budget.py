"""Budget first (issue 19): what a budget per hour, day, month or in all buys, and whether a plan fits it.

A budget per period buys cards rented around the clock for that period: the count of each card whose price
(its monthly term where the book sells one and the budget is per month, else its hourly price × the
period's hours) stays within it, and the largest model per job on that setup. A total buys hours of rent.
A job named instead gets the plans of that job within the budget (core/advisor/plan_search.py) and a plain
within / not within.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from core.advisor.largest_model import LargestModel, jobs_for, largest_models
from core.advisor.model import Plan
from core.advisor.shared import budget_period
from core.catalog import load_catalog
from core.cost import PriceBook
from core.platforms import Platform
from core.query import BUDGET_PERIOD_HOURS, BudgetPeriod, Currency, Query

MAX_COUNT = 8  # one machine: a budget that buys more of a card is shown as eight of it
OPTIONS = 4  # setups an answer lists


class BudgetOption(BaseModel):
    """`count` × `card` within the budget, what it costs for the budget's period, and what it runs."""

    model_config = ConfigDict(frozen=True)

    card: str
    count: int
    billing: str  # "on-demand" or "monthly" (the term the count was priced on)
    per_hour: float  # all cards, per hour (a monthly term: its price ÷ 720 h)
    period_cost: float | None  # all cards for the budget's period (None for a total)
    hours: float | None  # a total budget: hours of rent it buys for these cards
    provider: str
    memory_bytes: int  # all cards together
    largest: list[LargestModel]


class BudgetAnswer(BaseModel):
    model_config = ConfigDict(frozen=True)

    amount: float
    currency: Currency
    period: BudgetPeriod
    within: bool
    options: list[BudgetOption]


def _candidates(currency: Currency, book: PriceBook, platform: Platform | None) -> list[tuple[str, float]]:
    """(card, hourly price) for every card rented in the currency's market (or on the platform named)."""
    home = "cn" if currency is Currency.CNY else "global"
    out: list[tuple[str, float]] = []
    for card in load_catalog().cards:
        price = book.price_for(card.id, currency, platform)
        if price is None or (platform is None and price.market != home) or price.per_hour <= 0:
            continue
        out.append((card.id, price.per_hour))
    return out


def _monthly_price(
    card_id: str, currency: Currency, book: PriceBook, platform: Platform | None
) -> float | None:
    """The card's median monthly term in the currency's market (or on the platform named)."""
    home = "cn" if currency is Currency.CNY else "global"
    rows = [
        r
        for r in book.rows_for(card_id, platform)
        if r.billing == "monthly" and not r.platform_only and (platform is not None or r.market == home)
    ]
    prices = sorted(p for r in rows if (p := r.per_term(currency, book.meta.usd_to_cny)) is not None)
    return prices[(len(prices) - 1) // 2] if prices else None


def what_budget_buys(
    query: Query, book: PriceBook, currency: Currency, platform: Platform | None = None
) -> BudgetAnswer:
    """The setups the budget rents (the most memory first, each with its largest model per job)."""
    assert query.budget is not None
    amount = query.budget
    period = query.budget_period or "total"
    catalog = load_catalog()
    setups: list[tuple[int, float, BudgetOption]] = []
    for card_id, hourly in _candidates(currency, book, platform):
        card = catalog.get(card_id)
        count, billing, per_hour_all, period_cost, hours = 0, "on-demand", 0.0, None, None
        if period == "total":
            count, hours = 1, amount / hourly
            if hours < 1:
                continue
            per_hour_all = hourly
        else:
            period_hours = BUDGET_PERIOD_HOURS[period]
            count = min(MAX_COUNT, math.floor(amount / (hourly * period_hours) + 1e-9))
            monthly = _monthly_price(card_id, currency, book, platform) if period == "month" else None
            if monthly is not None and math.floor(amount / monthly + 1e-9) > count:
                count, billing = min(MAX_COUNT, math.floor(amount / monthly + 1e-9)), "monthly"
            if count < 1:
                continue
            count = _tensor_parallel(count)
            if billing == "monthly" and monthly is not None:
                period_cost, per_hour_all = monthly * count, monthly * count / period_hours
            else:
                per_hour_all, period_cost = hourly * count, hourly * count * period_hours
        provider = book.price_for(card_id, currency, platform) or book.price_for(card_id, currency)
        setups.append(
            (
                card.memory_bytes * count,
                per_hour_all,
                BudgetOption(
                    card=card_id,
                    count=count,
                    billing=billing,
                    per_hour=round(per_hour_all, 4),
                    period_cost=round(period_cost, 2) if period_cost is not None else None,
                    hours=round(hours, 1) if hours is not None else None,
                    provider=provider.provider if provider is not None else "",
                    memory_bytes=card.memory_bytes * count,
                    largest=[],
                ),
            )
        )
    chosen = _diverse(setups)
    jobs = jobs_for(query)
    options = [
        o.model_copy(update={"largest": largest_models(catalog.get(o.card), o.count, jobs, query)})
        for o in chosen
    ]
    return BudgetAnswer(
        amount=amount, currency=currency, period=period, within=bool(options), options=options
    )


def _tensor_parallel(count: int) -> int:
    """The largest power of two within `count`: serving splits a model over 1, 2, 4 or 8 cards."""
    return 1 << (count.bit_length() - 1)


def _diverse(setups: list[tuple[int, float, BudgetOption]]) -> list[BudgetOption]:
    """The setups with the most memory (the largest models), cheapest first among equals, one per card size:
    two setups of the same total memory teach nothing new."""
    ranked = sorted(setups, key=lambda s: (-s[0], s[1]))
    out: list[BudgetOption] = []
    seen: set[int] = set()
    for memory, _, option in ranked:
        bucket = round(memory / 2**33)  # 8 GiB buckets
        if bucket in seen:
            continue
        seen.add(bucket)
        out.append(option)
        if len(out) == OPTIONS:
            break
    return out


class BudgetCheck(BaseModel):
    """A job named with a budget: the budget as read, and whether the plan shown is within it."""

    model_config = ConfigDict(frozen=True)

    amount: float
    currency: Currency
    period: BudgetPeriod
    within: bool | None  # None: the plan's cost is unknown (no price, or a total without the amount of data)
    cost: float | None  # the plan's cost for the budget's period (a total: the whole run)


def plan_costs(plans: Sequence[Plan]) -> list[tuple[float | None, float | None]]:
    """(the run's total, per hour for all cards) of each plan, for `check_budget`."""
    return [(plan.total_cost, plan.cost_per_hour) for plan in plans]


def check_budget(
    query: Query, costs: Sequence[tuple[float | None, float | None]], currency: Currency
) -> BudgetCheck | None:
    """Whether the cheapest of the setups shown — each as (the run's total, per hour) — fits the budget the
    question gave; not within when nothing runs."""
    if query.budget is None:
        return None
    period = budget_period(query)
    cost: float | None = None
    for total, per_hour in costs:
        if period == "total":
            value = total
            if value is None and per_hour is not None and query.rental_days:
                value = per_hour * query.rental_days * 24  # no data amount: the days said ('跑两天')
        else:
            value = per_hour * BUDGET_PERIOD_HOURS[period] if per_hour is not None else None
            if total is not None and (value is None or total < value):
                value = total  # a run shorter than the period costs its total in it
        if value is not None and (cost is None or value < cost):
            cost = value
    within = None if cost is None else cost <= query.budget * (1 + 1e-9)
    if not costs:
        within = False
    return BudgetCheck(
        amount=query.budget,
        currency=currency,
        period=period,
        within=within,
        cost=round(cost, 2) if cost is not None else None,
    )
