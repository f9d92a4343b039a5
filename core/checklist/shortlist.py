"""Which plans the sheet recommends, in what order, and how it reads the budget — one reading, used for
every plan and every sentence about the budget, so the sheet never contradicts itself.

- A recommended plan keeps the sheet's own safety margin (need × margin ≤ the card's memory); when none
  does, the closest ones are shown and the sheet says they fit without the full margin.
- Plans within the budget come first, and among them cards rented in the user's market: someone pricing
  in CNY is renting in China (an H100 is not rented there), someone pricing in USD is not (H20, L20, H800,
  4090D are China-market cards); a card the user named is never moved back.
- The budget is read per hour, per month or in total as said; a total for a service that runs around the
  clock is read as a month of it (the sheet prices serving per day and per month).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.advisor import Plan, plans
from core.catalog import load_catalog
from core.checklist.model import ChecklistAnswers
from core.query import Currency, Query

BudgetReading = Literal["hour", "month", "total"]


class Shortlist(BaseModel):
    """The plans to show, best first, and what the sheet says about them."""

    model_config = ConfigDict(frozen=True)

    plans: list[Plan] = Field(default_factory=list)
    budget_reading: BudgetReading | None = None
    total_read_as_month: bool = False  # a total budget for serving, compared with a month of it
    budget_checkable: bool = True  # False: a total for training without the amount of data
    within_budget: int = 0  # how many of `plans` (the first ones) fit the budget
    over_budget: bool = False  # a budget was given and no plan fits it
    margin_short: bool = False  # no plan keeps the full margin: these fit without it
    off_market: list[str] = Field(default_factory=list)  # cards of `plans` not rented in the user's market


def budget_reading(answers: ChecklistAnswers) -> tuple[BudgetReading | None, bool]:
    """How the budget is read, and whether a total is read as a month (serving)."""
    if answers.budget is None:
        return None, False
    if answers.budget_period == "hour":
        return "hour", False
    if answers.budget_period in ("month", "day"):
        return "month", False
    if answers.serving:
        return "month", True
    return "total", False


def market_of(currency: Currency) -> Literal["cn", "global"]:
    return "cn" if currency is Currency.CNY else "global"


# More cards tried for a plan that fits only without the margin: twice, then four times as many.
_WIDER = (2, 4)


def keeping_margin(candidates: list[Plan], query: Query, *, margin: float, currency: Currency) -> list[Plan]:
    """Each plan that fits only without the margin, tried again on more of the same card (the need per card
    falls as the job is split); the result ranked by cost, plans without a price last."""
    kept: list[Plan] = []
    for plan in candidates:
        better = plan
        if plan.need_bytes * margin > plan.capacity_bytes:
            for factor in _WIDER:
                wider = query.model_copy(
                    update={"gpus": plan.count * factor, "precision": plan.precision, "method": plan.method}
                )
                found = plans(wider, limit=1, currency=currency, cards=[plan.card])
                if found and found[0].need_bytes * margin <= found[0].capacity_bytes:
                    better = found[0]
                    break
        if better not in kept:
            kept.append(better)
    return sorted(kept, key=_cost_key)


def _cost_key(plan: Plan) -> tuple[bool, float]:
    cost = plan.total_cost if plan.total_cost is not None else plan.cost_per_hour
    return (cost is None, cost or 0.0)


def shortlist(
    candidates: list[Plan],
    *,
    answers: ChecklistAnswers,
    currency: Currency,
    margin: float,
    limit: int,
    hours_per_day: int,
    days_per_month: int,
) -> Shortlist:
    """Order `candidates` (plans that fit, cheapest first) as the sheet recommends them."""
    keeps_margin = [p for p in candidates if p.need_bytes * margin <= p.capacity_bytes]
    pool = keeps_margin or candidates
    reading, as_month = budget_reading(answers)
    checkable = not (reading == "total" and answers.tokens is None)
    catalog = load_catalog()
    market = market_of(currency)

    def off_market(plan: Plan) -> bool:
        card = catalog.by_id.get(plan.card)
        return card is not None and market not in card.markets and plan.card != answers.card

    def within(plan: Plan) -> bool:
        if reading is None or not checkable:
            return True
        budget = answers.budget or 0.0
        if reading == "hour":
            return plan.cost_per_hour is not None and plan.cost_per_hour <= budget
        if reading == "month":
            if plan.cost_per_hour is None:
                return False
            return plan.cost_per_hour * hours_per_day * days_per_month <= budget
        return plan.total_cost is not None and plan.total_cost <= budget

    ranked = sorted(pool, key=lambda p: (not within(p), off_market(p)))[:limit]
    fitting = sum(1 for p in ranked if within(p))
    return Shortlist(
        plans=ranked,
        budget_reading=reading,
        total_read_as_month=as_month,
        budget_checkable=checkable,
        within_budget=fitting if reading is not None else len(ranked),
        over_budget=reading is not None and checkable and bool(ranked) and fitting == 0,
        margin_short=bool(candidates) and not keeps_margin,
        off_market=[p.card for p in ranked if off_market(p)],
    )
