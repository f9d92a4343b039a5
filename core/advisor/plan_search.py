"""Ranked plans that fit: every card × count × method × precision, cheapest or fastest first."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from functools import lru_cache
from itertools import groupby

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


def search_cards(query: Query, currency: Currency, book: PriceBook | None) -> list[Card]:
    """The cards a plan search over `query` tries when not given its own list: the card the query names,
    else the cards the platform it names rents (at that platform's prices), else the cards rented in the
    market of `currency`."""
    catalog = load_catalog()
    if query.card:
        match = catalog.by_id.get(query.card) or (m.card if (m := catalog.resolve(query.card)) else None)
        if match is None:
            raise UnknownCardError(query.card, catalog.closest(query.card))
        return [match]
    if query.platform and book is not None and (named := platform(query.platform)) is not None:
        # 'Best GPU on AutoDL': the cards that platform rents, at its prices
        return [card for card in catalog.cards if book.sells(named, card.id)]
    return list(_market_cards(currency, book))


def ranks_by_hourly_price(query: Query, sort: SortKey = "cost") -> bool:
    """Whether every plan of a search over `query` ranks first by its hourly price: a serving job sorted by
    cost with no amount of data (no plan has a total or a price per token) and no budget for the whole job.
    Such a ranking puts every plan under a price before every plan at or above it."""
    if sort != "cost" or query.task is not Task.INFERENCE or query.has_data_amount:
        return False
    return budget_caps(query, None)[1] is None


def search_counts(query: Query) -> tuple[int, ...]:
    """The card counts a plan search tries: the count said, else the usual counts for the task."""
    if "gpus" in query.said() and query.gpus:
        return (query.gpus,)
    return PRETRAIN_COUNTS if query.task is Task.PRETRAIN else COUNTS


def _card_prices(
    candidates: Sequence[Card], currency: Currency, book: PriceBook | None, platform_id: str | None
) -> tuple[float, ...]:
    """Each candidate's hourly price for one card (infinite without a price), in the candidates' order."""
    if book is None:  # (card_price then reads the book in force: not remembered)
        return _hourly_prices(tuple(card.id for card in candidates), currency, book, platform_id)
    return _hourly_prices_cached(tuple(card.id for card in candidates), currency, book, platform_id)


def _hourly_prices(
    card_ids: tuple[str, ...], currency: Currency, book: PriceBook | None, platform_id: str | None
) -> tuple[float, ...]:
    prices = (card_price(card_id, currency, book, platform_id) for card_id in card_ids)
    return tuple(price.per_hour if price else float("inf") for price in prices)


# A search's candidates are the same few lists (a market's cards, a platform's): their prices and price
# order are worked out once per price book, not per search.
_hourly_prices_cached = lru_cache(maxsize=64)(_hourly_prices)


@lru_cache(maxsize=64)
def _price_order(per_hour: tuple[float, ...], counts: tuple[int, ...]) -> tuple[tuple[float, int, int], ...]:
    """(hourly price, card position, count) of every candidate card × count, cheapest first, the catalog's
    order among equal prices (infinite without a price), fewer cards first on one card: the order in which
    a search in price order tries them."""
    order = []
    for position, unit in enumerate(per_hour):
        for count in counts:
            hourly = round(unit * count, 4) if unit != float("inf") else unit  # JobCost.per_hour
            order.append((hourly, position, count))
    return tuple(sorted(order))


@lru_cache(maxsize=64)
def _by_price(per_hour: tuple[float, ...]) -> tuple[int, ...]:
    """The candidates' positions, cheapest first (the catalog's order among equal prices)."""
    return tuple(sorted(range(len(per_hour)), key=per_hour.__getitem__))


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
    else:
        candidates = search_cards(query, money, book)
    if total_cap is not None and not query.has_data_amount:
        # A budget for the whole job, but no amount of data to price a whole run: no plan has a total cost,
        # so keep() would drop every plan built (the search returns none without building them).
        return ()
    counts = search_counts(query)
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

    def variant_count(card: Card) -> int:
        kind = variant_class(card)
        if kind not in variants:
            variants[kind] = list(variants_for(base, card))
        return len(variants[kind])

    def screened(card: Card, index: int, count: int) -> tuple[Query, int] | None:
        """(the variant on `count` cards, its quality rank), or None when it is known not to be a plan: its
        card-free memory is already more than the card holds (no estimate built), or it is over the hourly
        cap (more cards of the kind cost more: no larger count is either)."""
        if per_hour_cap is not None and over_cap(card, count):
            return None
        kind = variant_class(card)
        trial, need, quality = sized.get((kind, index, count)) or sized_trial(kind, index, count)
        return None if need > card.memory_bytes else (trial, quality)

    def build(card: Card, trial: Query, count: int) -> Plan | None:
        plan = plan_on_card(estimate(trial.model_copy(update={"card": card.id})), card, count, money, book)
        keep(plan)
        return plan

    if by_hourly_price:
        # A shortlist of 3 × limit, built cheapest first: each card × variant on its fewest cards that may
        # fit, ranked by (hourly price, quality), ties in the catalog's order; cards are screened in the
        # order of their price, and once the shortlist is full, a card whose price on the fewest cards is
        # above its last entry cannot enter it (nor can any dearer card): the rest are not screened.
        wanted = 3 * limit
        fewest = min(counts)

        per_hour_of = _card_prices(candidates, money, book, query.platform)
        entries: list[tuple[float, int, int, int, Card, Query, int]] = []
        bound = float("inf")  # the wanted-th lowest hourly price in `entries`
        for position in _by_price(per_hour_of):
            card = candidates[position]
            per_hour = per_hour_of[position]
            if len(entries) >= wanted and per_hour * fewest > bound:
                break
            for index in range(variant_count(card)):
                for count in counts:
                    if per_hour_cap is not None and over_cap(card, count):
                        break  # more cards of the same kind cost more per hour
                    fits = screened(card, index, count)
                    if fits is None:
                        continue  # screened without building the estimate: it cannot fit this card
                    trial, quality = fits
                    hourly = per_hour * count  # (price.per_hour * count, or infinite without a price)
                    entries.append((hourly, quality, position, index, card, trial, count))
                    break  # more cards of the same kind cost more per hour
            if len(entries) >= wanted:
                bound = heapq.nsmallest(wanted, (entry[0] for entry in entries))[-1]
        # A serving plan without an amount of data ranks by its hourly price first (sort_key), so once
        # `limit` plans are kept, a shortlisted one priced above the last of them cannot be shown: it is not
        # built.
        by_price_first = query.task is Task.INFERENCE and query.platform == base.platform
        for hourly, _, _, _, card, trial, count in sorted(entries, key=lambda entry: entry[:4])[:wanted]:
            if by_price_first and len(best) >= limit:
                last = sorted(best.values(), key=key)[limit - 1].cost_per_hour
                if last is not None and round(hourly, 4) > last:  # JobCost.per_hour
                    break
            build(card, trial, count)
    elif in_price_order:
        # Every card × count in the order of its hourly price (the catalog's among equal prices), each
        # card's variants in turn; a variant with a plan on a card is not tried on more of that card, and
        # once `limit` plans are kept, the search stops at the first price above the last of them. Screened
        # only when reached, so the dearer cards are never sized.
        done: set[tuple[int, int]] = set()  # (card, variant) with a plan: more of that card costs more
        order = _price_order(_card_prices(candidates, money, book, base.platform), counts)
        for (hourly, position), group in groupby(order, key=lambda entry: entry[:2]):
            card = candidates[position]
            stop = False
            group_counts = [count for _, _, count in group]
            for index in range(variant_count(card)):
                for count in group_counts:
                    if (position, index) in done:
                        break
                    fits = screened(card, index, count)
                    if fits is None:
                        continue
                    if len(best) >= limit:
                        last = sorted(best.values(), key=key)[limit - 1].cost_per_hour
                        if last is not None and hourly > last:
                            stop = True  # every plan left costs more per hour than the last one shown
                            break
                    if build(card, fits[0], count) is not None:
                        done.add((position, index))
                if stop:
                    break
            if stop:
                break
        # equal plans rank in the catalog's order, as when every plan is built
        position_of = {card.id: i for i, card in enumerate(candidates)}
        best = dict(sorted(best.items(), key=lambda item: position_of[item[0][0]]))
    else:
        for card in candidates:
            for index in range(variant_count(card)):
                for count in counts:
                    if per_hour_cap is not None and over_cap(card, count):
                        break  # more cards of the same kind cost more per hour
                    fits = screened(card, index, count)
                    if fits is None:
                        continue  # screened without building the estimate: it cannot fit this card
                    plan = build(card, fits[0], count)
                    if plan is not None and sort == "cost":
                        break  # more cards of the same kind cost more per hour and do not run cheaper
    return tuple(sorted(best.values(), key=key)[:limit])
