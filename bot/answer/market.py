"""Answers about money and the market (issue 19): what a budget buys, which billing kind to rent a card on,
and the facts fit / plan / cards-needed answers add when the question gives a budget, a platform, traffic or a
cluster. The arithmetic is in core (core/advisor/budget.py, core/billing.py, core/advisor/traffic.py,
core/advisor/cluster.py); here it becomes views and JSON."""

from __future__ import annotations

from bot.answer.clarify import clarify_answer
from bot.answer.common import answer_currency, pack, registry_label
from bot.answer.model import Answer, Lang
from bot.answer.views import BudgetView
from core.advisor.budget import BudgetAnswer, BudgetCheck, what_budget_buys
from core.advisor.cluster import Cluster
from core.advisor.traffic import Traffic
from core.answer_kind import AnswerKind
from core.billing import BillingAdvice
from core.catalog import load_catalog
from core.cost import price_book_in_force
from core.platforms import platform
from core.query import Currency, Query


def budget_answer(query: Query, lang: Lang) -> Answer:
    """'预算每月5000元 能租卡跑什么': the setups the budget rents and the largest model per job on each."""
    currency = Currency(query.currency.value if query.currency else answer_currency(query, lang))
    book = price_book_in_force()
    if book is None or query.budget is None:
        return clarify_answer(lang, "model", query)
    named = platform(query.platform)
    bought = what_budget_buys(query, book, currency, named)
    catalog = load_catalog()
    names = {m: registry_label(m) for o in bought.options for row in o.largest for m in row.examples}
    view = BudgetView(
        b=bought,
        cards={o.card: catalog.get(o.card) for o in bought.options},
        names=names,
        platform=named,
        currency=currency.value,
    )
    return pack(
        AnswerKind.BUDGET,
        lang,
        "budget",
        view,
        query=query,
        facts={"budget": budget_facts(bought), "platform": platform_facts(query, None)},
    )


def budget_facts(budget: BudgetAnswer | BudgetCheck | None) -> dict[str, object] | None:
    if budget is None:
        return None
    facts: dict[str, object] = {
        "amount": budget.amount,
        "currency": budget.currency.value,
        "period": budget.period,
        "within": budget.within,
    }
    if isinstance(budget, BudgetAnswer):
        facts["options"] = [
            {
                "card": o.card,
                "count": o.count,
                "billing": o.billing,
                "per_hour": o.per_hour,
                "period_cost": o.period_cost,
                "hours": o.hours,
                "provider": o.provider,
                "largest_model": [row.as_json() for row in o.largest],
            }
            for o in budget.options
        ]
    else:
        facts["cost"] = budget.cost
    return facts


def billing_facts(advice: BillingAdvice | None) -> dict[str, object] | None:
    if advice is None:
        return None
    return {
        "kind": advice.best.kind,
        "price": advice.best.price,
        "provider": advice.best.provider,
        "break_even_hours_per_day": advice.break_even_hours_per_day,
        "break_even_kind": advice.break_even_kind,
        "hours_per_day": advice.hours_per_day,
        "days": advice.days,
        "currency": advice.currency.value,
        "options": [o.model_dump(mode="json") for o in advice.options],
    }


def platform_facts(query: Query | None, card_id: str | None) -> dict[str, object] | None:
    """`platform`: the platform named and whether its prices have the card."""
    named = platform(query.platform if query is not None else None)
    if named is None:
        return None
    book = price_book_in_force()
    sells = None if card_id is None or book is None else book.sells(named, card_id)
    return {"id": named.id, "name": named.name, "sells": sells}


def traffic_facts(traffic: Traffic | None) -> dict[str, object] | None:
    return traffic.model_dump(mode="json") if traffic is not None else None


def cluster_facts(cluster: Cluster | None) -> dict[str, object] | None:
    return cluster.model_dump(mode="json") if cluster is not None else None
