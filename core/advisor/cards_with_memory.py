"""Which cards are sold with a memory size ('哪些卡有48G显存', 'which GPUs have 80GB?'): the catalog's cards
of that size, cheapest to rent first, with what each can really use and how fast it reads it.

Asked without a card or a model, the size is the user's constraint (a model they know needs about that
much, a listing they saw); the answer is the cards to choose between. When no card is sold with exactly that
size, the next size up is given instead (a '40 GB' card for 36 GB asked would be the A100 40GB), and the
answer says so.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.catalog import Card, load_catalog
from core.cost import CardPrice, price_book_in_force
from core.query import Currency, Query
from core.units import GIB


class CardWithMemory(BaseModel):
    """One card of the size asked: what it is sold as, what a job can use, its speed figures and price."""

    model_config = ConfigDict(frozen=True)

    card: str
    name: str
    memory_gib: float  # as sold ("48 GB")
    memory_bytes: int  # usable (nvidia-smi's total where known)
    memory_mib_visible: int | None
    bandwidth_gb_s: float
    bf16_tflops: float
    segment: str
    price: CardPrice | None  # the typical hourly price in the answer's currency; None: not in the price list


class CardsWithMemory(BaseModel):
    """The answer's content: the size asked, the size the cards listed are sold with, and the cards."""

    model_config = ConfigDict(frozen=True)

    asked_bytes: int
    asked_gib: float  # the size as the user said it ("48G": 48)
    sold_gib: float | None  # the size of the cards listed; None when no card has that much or more
    exact: bool  # the cards listed are sold with the size asked (else: the next size up)
    currency: Currency
    cards: list[CardWithMemory]


def cards_with_memory(query: Query) -> CardsWithMemory:
    """The cards sold with `query.card_memory_bytes`, or with the next size up; priced ones cheapest first,
    then the unpriced by popularity."""
    asked = query.card_memory_bytes or 0
    currency = query.currency or Currency.USD
    catalog = load_catalog()
    sold = catalog.with_memory(asked)
    exact = bool(sold)
    if not sold:
        larger = sorted({c.memory_gib for c in catalog.cards if c.memory_gib * GIB > asked})
        sold = catalog.with_memory(int(larger[0] * GIB)) if larger else []
    book = price_book_in_force()
    rows = [_row(card, book.price_for(card.id, currency) if book is not None else None) for card in sold]
    rows.sort(key=lambda row: (row.price is None, row.price.per_hour if row.price else 0.0))
    return CardsWithMemory(
        asked_bytes=asked,
        asked_gib=round(asked / GIB, 1),
        sold_gib=sold[0].memory_gib if sold else None,
        exact=exact,
        currency=currency,
        cards=rows,
    )


def _row(card: Card, price: CardPrice | None) -> CardWithMemory:
    return CardWithMemory(
        card=card.id,
        name=card.name,
        memory_gib=card.memory_gib,
        memory_bytes=card.memory_bytes,
        memory_mib_visible=card.memory_mib_visible,
        bandwidth_gb_s=card.bandwidth_gb_s,
        bf16_tflops=card.bf16_tflops,
        segment=card.segment.value,
        price=price,
    )
