"""Ranked plans that fit: every card × count × method × precision, cheapest or fastest first."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from functools import lru_cache

from core.advisor.model import COUNTS, PRETRAIN_COUNTS, QUALITY_RANK, Plan
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
from core.catalog import Card, load_catalog
from core.cost import (
    CardPrice,
    PriceBook,
    currency_for,
    price_book_in_force,
)
from core.estimator import (
    UnknownCardError,
    estimate,
    need_bytes,
)
from core.platforms import platform
from core.query import Currency, Query, SortKey, Task
from core.runtimes import runtime_profile


def plans(
    query: Query,
    *,
    limit: int = 8,
    max_per_hour: float | None = None,
    sort: SortKey = "cost",
    currency: Currency | None = None,
    cards: Sequence[str] | None = None,
) -> list[Plan]:
    """The plans that fit, one per card × method × precision (its best card count), ranked by cost or speed.

    A named card restricts the search to it; a said card count or precision is kept; a stated budget
    (per hour or total) filters. Cards without a price rank after priced ones when sorting by cost.
    Pure for a given price file, and a search over every card, so results are cached.
    """
    chosen = tuple(cards) if cards is not None else None
    return list(
        _plans(
            query,
            limit=limit,
            max_per_hour=max_per_hour,
            sort=sort,
            currency=currency,
            cards=chosen,
            _book=price_book_in_force(),
        )
    )


def _rented_in_market(card: Card, currency: Currency, book: PriceBook | None) -> bool:
    """A card the user could rent where they pay: someone paying in USD is not offered a China-only H20 or
    L20 (and someone paying in CNY no card rented only abroad) unless they name it. Cards with no price at
    all stay in (their plans show no price)."""
    price = card_price(card.id, currency, book)
    home = "cn" if currency is Currency.CNY else "global"
    return price is None or price.market == home


@lru_cache(maxsize=16)
def _market_cards(currency: Currency, book: PriceBook | None) -> tuple[Card, ...]:
    """The catalog's cards rented in the market of `currency` (every search over all cards starts here)."""
    return tuple(card for card in load_catalog().cards if _rented_in_market(card, currency, book))


@lru_cache(maxsize=4096)
def _plans(
    query: Query,
    *,
    limit: int,
    max_per_hour: float | None,
    sort: SortKey,
    currency: Currency | None,
    cards: tuple[str, ...] | None,
    _book: object,
) -> tuple[Plan, ...]:
    catalog = load_catalog()
    book = _book if isinstance(_book, PriceBook) else None
    money = currency_for(query.currency, None) if currency is None else currency
    per_hour_cap, total_cap = budget_caps(query, max_per_hour)
    if cards is not None:
        candidates = [catalog.get(c) for c in cards if c in catalog.by_id]
    elif query.card:
        match = catalog.by_id.get(query.card) or (m.card if (m := catalog.resolve(query.card)) else None)
        if match is None:
            raise UnknownCardError(query.card, catalog.closest(query.card))
        candidates = [match]
    elif query.platform and book is not None and (named := platform(query.platform)) is not None:
        # 'Best GPU on AutoDL': the cards that platform rents, at its prices
        candidates = [card for card in catalog.cards if book.sells(named, card.id)]
    else:
        candidates = list(_market_cards(money, book))
    if total_cap is not None and not query.has_data_amount:
        # A budget for the whole job, but no amount of data to price a whole run: no plan has a total cost,
        # so keep() would drop every plan built (the search returns none without building them).
        return ()
    said = query.said()
    if "gpus" in said and query.gpus:
        counts: tuple[int, ...] = (query.gpus,)
    else:
        counts = PRETRAIN_COUNTS if query.task is Task.PRETRAIN else COUNTS
    base = stated_only(query).model_copy(update={"card": None, "card_memory_bytes": None})
    key = sort_key(sort)
    # Ranked by price per hour (no token count to price a whole run): rank the cheap way first and build
    # full plans (speed, cost) only for the shortlist.
    hourly_ranked = sort == "cost" and not query.has_data_amount and total_cap is None
    kv_pool = runtime_profile(query.runtime).kv_pool
    by_hourly_price = hourly_ranked and not kv_pool
    # A serving engine's verdict needs the card (its KV pool), so memory alone cannot screen its plans; but
    # they still rank by the hourly price: built in that order, the search stops once the next price is
    # above the last plan it would show (the same plans as building them all).
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

    # Cards share variants (equal queries): the variants depend on a card only through what it computes in
    # (variant_class), so they are made once per class, and each variant × count is sized once per search,
    # not per card, keyed by small ints (hashing a query costs more than sizing it from the cache).
    variants: dict[tuple[bool, bool], list[Query]] = {}
    sized: dict[tuple[tuple[bool, bool], int, int], tuple[Query, int, int]] = {}
    prices: dict[tuple[str, str | None], CardPrice | None] = {}

    def price_of(card: Card, platform_id: str | None) -> CardPrice | None:
        found = (card.id, platform_id)
        if found not in prices:
            prices[found] = card_price(card.id, money, book, platform_id)
        return prices[found]

    def sized_trial(kind: tuple[bool, bool], index: int, count: int) -> tuple[Query, int, int]:
        """(the variant on `count` cards, the bytes one of them holds, its quality rank)."""
        found = sized.get((kind, index, count))
        if found is None:
            trial = variants[kind][index].model_copy(update={"gpus": count})
            found = (trial, need_bytes(trial), QUALITY_RANK[quality_of(trial)])
            sized[(kind, index, count)] = found
        return found

    def over_cap(card: Card, count: int) -> bool:
        """Priced above the hourly cap (or not priced, with a cap): keep() would drop its plan, so it is
        not built (a budget per hour)."""
        if per_hour_cap is None:
            return False
        price = price_of(card, base.platform)
        return price is None or round(price.per_hour * count, 4) > per_hour_cap  # JobCost.per_hour

    for card in candidates:
        kind = variant_class(card)
        if kind not in variants:
            variants[kind] = list(variants_for(base, card))
        memory = card.memory_bytes
        for index in range(len(variants[kind])):
            for count in counts:
                if per_hour_cap is not None and over_cap(card, count):
                    break  # more cards of the same kind cost more per hour
                trial, need, quality = sized.get((kind, index, count)) or sized_trial(kind, index, count)
                if need > memory:
                    continue  # screened without building the estimate: it cannot fit this card
                if by_hourly_price:
                    price = price_of(card, query.platform)
                    hourly = price.per_hour * count if price else float("inf")
                    shortlist.append(((hourly, quality), card, trial, count))
                    break  # more cards of the same kind cost more per hour
                if in_price_order:
                    price = price_of(card, trial.platform)
                    hourly = round(price.per_hour * count, 4) if price else float("inf")  # JobCost.per_hour
                    by_price.append((hourly, len(by_price), card, trial, index))
                    continue
                plan = plan_on_card(
                    estimate(trial.model_copy(update={"card": card.id})), card, count, money, book
                )
                keep(plan)
                if plan is not None and sort == "cost":
                    break  # more cards of the same kind cost more per hour and do not run cheaper
    done: set[tuple[str, int]] = set()  # (card, variant) with a plan: more of that card costs more
    for hourly, _, card, trial, index in sorted(by_price, key=lambda entry: entry[:2]):
        if (card.id, index) in done:
            continue
        if len(best) >= limit:
            last = sorted(best.values(), key=key)[limit - 1].cost_per_hour
            if last is not None and hourly > last:
                break  # every plan left costs more per hour than the last one shown
        count = trial.gpus or 1
        plan = plan_on_card(estimate(trial.model_copy(update={"card": card.id})), card, count, money, book)
        keep(plan)
        if plan is not None:
            done.add((card.id, index))
    if in_price_order:  # equal plans rank in the catalog's order, as when every plan is built
        position = {card.id: i for i, card in enumerate(candidates)}
        best = dict(sorted(best.items(), key=lambda item: position[item[0][0]]))
    # A serving plan without an amount of data ranks by its hourly price first (sort_key), so once `limit`
    # plans are kept, a shortlisted one priced above the last of them cannot be shown: it is not built.
    by_price_first = query.task is Task.INFERENCE and query.platform == base.platform
    for (hourly, _), card, trial, count in heapq.nsmallest(3 * limit, shortlist, key=lambda entry: entry[0]):
        if by_price_first and len(best) >= limit:
            last = sorted(best.values(), key=key)[limit - 1].cost_per_hour
            if last is not None and round(hourly, 4) > last:  # JobCost.per_hour
                break
        keep(plan_on_card(estimate(trial.model_copy(update={"card": card.id})), card, count, money, book))
    return tuple(sorted(best.values(), key=key)[:limit])
