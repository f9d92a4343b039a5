"""The cards-needed search as answers ask it: on the count the user asked about, and the smallest count when
that one does not run the job (fit answers, 'how many cards' answers)."""

from __future__ import annotations

from core.advisor.cards_needed import CardsNeeded, as_served, cards_needed, fits_as_asked
from core.assessment import Assessment, assess
from core.catalog import Card
from core.cost import price_book_in_force
from core.query import Currency, Query


def needed_for(query: Query, card: Card, currency: Currency) -> CardsNeeded | None:
    """The smallest count of `card` for the job, priced in the answer's currency."""
    stripped = query.model_copy(update={"kind": None, "sort": None})
    return cards_needed(stripped, card, book=price_book_in_force(), currency=currency)


def asked_count(query: Query, card: Card, currency: Currency) -> Assessment:
    """The job on the count the user asked about (one card when they named none), sized as the search
    sizes it, so its verdict and the search's count never disagree."""
    stripped = as_served(
        query.model_copy(update={"kind": None, "sort": None, "card": card.id, "card_memory_bytes": None})
    )
    count = stripped.gpus or 1
    return assess(stripped, card, count, book=None, currency=currency, speed=False)


def needed_when_short(stated: Query, card: Card, currency: Currency) -> CardsNeeded | None:
    """The smallest count of `card` for a job whose asked count does not run it (None when it does). Sized
    from what the user stated, so unsaid details get this search's defaults (inference over several cards
    under a tensor-parallel engine)."""
    if fits_as_asked(asked_count(stated, card, currency)):
        return None
    on_card = stated.model_copy(update={"card": card.id, "card_memory_bytes": None})
    return needed_for(on_card, card, currency)


__all__ = ["asked_count", "needed_for", "needed_when_short"]
