"""The one "bigger card" search: cards with more memory than the one named, smallest size first.

Two questions use it: a job that does not fit (`bigger_card`: the smallest larger card of the same vendor
on which the job runs, cheapest among equals; the advisor's "bigger card" fix and its button), and "can I
upgrade my card's memory?" (`bigger_cards`: the cheapest cards of the next size up, or of the memory wanted,
rented in the user's market).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from itertools import groupby

from core.advisor.shared import card_price
from core.assessment import verdict_for_count
from core.catalog import Card, Catalog, load_catalog
from core.cost import CardPrice, PriceBook, price_book_in_force
from core.estimator import Fit, estimate, short_floor
from core.query import Currency, Precision, Query


def _sizes_above(floor_bytes: float, keep: dict[str, bool] | None = None) -> Iterator[list[Card]]:
    """Catalog cards with more than `floor_bytes`, grouped by size, smallest first (catalog order within)."""
    larger = [
        c for c in load_catalog().cards if c.memory_bytes > floor_bytes and (keep is None or keep[c.id])
    ]
    larger.sort(key=lambda c: c.memory_gib)
    for _, same_size in groupby(larger, key=lambda c: c.memory_gib):
        yield list(same_size)


@lru_cache(maxsize=256)
def _bigger_of_kind(
    catalog: Catalog, vendor: str, memory_bytes: int, bf16: bool
) -> tuple[tuple[Card, ...], ...]:
    """The sizes `bigger_card` tries, smallest first: the catalog's cards with more memory than
    `memory_bytes` of the vendor, none without bf16 for a bf16 job. A function of the catalog alone, made
    once per card (the fixes search asks it for every job that does not fit)."""
    keep = {
        other.id: other.vendor == vendor and not (bf16 and other.bf16_tflops == 0) for other in catalog.cards
    }
    return tuple(tuple(same_size) for same_size in _sizes_above(memory_bytes, keep))


def bigger_card(query: Query, card: Card, count: int, currency: Currency) -> Card | None:
    """The smallest card with more memory on which the job fits, cheapest first among equals.

    Same vendor (the software stack stays); a bf16 job never moves to an fp16-only card (the recipe would
    change). Tried from the smallest memory up, stopping after the first size on which something fits: a job
    that fits a 32 GB card is not estimated on the forty cards above it.
    """
    bf16 = query.precision in (None, Precision.BF16)
    floor: int | None = None  # short_of's card-free figure, worked out when a card first needs it
    screened = False
    book = price_book_in_force()
    for same_size in _bigger_of_kind(load_catalog(), card.vendor, card.memory_bytes, bf16):
        # cheapest first (catalog order among equal prices, unpriced last): the first card of the size that
        # runs the job is the cheapest that does, and the dearer ones are not estimated
        for _, other in sorted(
            ((_hourly(other, currency, book, query.platform), other) for other in same_size),
            key=lambda t: t[0],
        ):
            if not other.unified_memory:  # short_of(query, other, count), its card-free part once
                if not screened:
                    floor, screened = short_floor(query, count), True
                if floor is not None and floor > other.memory_bytes:
                    continue  # far too small: its estimate would say no
            result = estimate(query.model_copy(update={"card": other.id, "gpus": count}))
            verdict = verdict_for_count(result, count)
            if verdict is not None and verdict.fits is not Fit.NO:
                return other
    return None


def _hourly(card: Card, currency: Currency, book: PriceBook | None, platform_id: str | None) -> float:
    """The card's hourly price (infinite when it has none): what ranks cards of one size."""
    price = card_price(card.id, currency, book, platform_id)
    return price.per_hour if price else float("inf")


def bigger_cards(
    card: Card, currency: Currency, wanted_bytes: int | None, limit: int = 3
) -> list[tuple[Card, CardPrice]]:
    """The cheapest cards of the smallest size with the memory wanted (else the next size up from `card`):
    what to rent instead of 'upgrading' it. Only cards rented in the user's market (an H20 is no suggestion
    to someone paying in USD)."""
    floor = max(card.memory_bytes * 1.1, (wanted_bytes or 0) * 0.9)
    home = "cn" if currency is Currency.CNY else "global"
    priced: list[tuple[Card, CardPrice]] = []
    for same_size in _sizes_above(floor):
        for other in same_size:
            price = card_price(other.id, currency)
            if price is not None and price.market == home:
                priced.append((other, price))
    if not priced:
        return []
    next_size = min(other.memory_bytes for other, _ in priced)
    step = [pair for pair in priced if pair[0].memory_bytes <= next_size * 1.1]
    return sorted(step, key=lambda pair: pair[1].per_hour)[:limit]


__all__ = ["bigger_card", "bigger_cards"]
