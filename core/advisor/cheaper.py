"""Cheaper alternatives to a setup that runs: another card that also fits and costs clearly less."""

from __future__ import annotations

from core.advisor.model import Plan
from core.advisor.plan_search import plans
from core.advisor.shared import card_price
from core.catalog import Card
from core.estimator import Fit
from core.query import Currency, Query

# "Clearly cheaper": under 80% of the named setup's hourly price (a few percent is noise between providers
# and dates, not a reason to switch cards).
CHEAPER_SHARE = 0.8


def cheaper_plan(query: Query, card: Card, currency: Currency) -> Plan | None:
    """A plan on another card that fits (not just tight) and costs under CHEAPER_SHARE of this setup per hour,
    with the same precision and method (the answer should not trade quality for the price)."""
    own = card_price(card.id, currency)
    if own is None:
        return None
    filled = query.with_defaults()
    keep = {"card": None, "card_memory_bytes": None, "precision": filled.precision, "method": filled.method}
    base = query.model_copy(update=keep)
    for plan in plans(base, limit=3, currency=currency):
        if plan.card == card.id or plan.cost_per_hour is None:
            continue
        if plan.verdict is Fit.FITS and plan.cost_per_hour < CHEAPER_SHARE * own.per_hour * (query.gpus or 1):
            return plan
    return None


__all__ = ["CHEAPER_SHARE", "cheaper_plan"]
