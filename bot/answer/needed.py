"""The cards-needed search as answers use it: priced in the answer's currency, on the usual cards when the
question names none, and for fit answers whose card count does not run the job."""

from __future__ import annotations

from typing import Any

from bot.answer.common import card_or_none
from core.advisor.cards_needed import (
    CardsNeeded,
    as_served,
    cards_needed,
    fits_as_asked,
)
from core.assessment import Assessment, assess
from core.catalog import Card
from core.cost import price_book_in_force
from core.estimator import Estimate
from core.query import Currency, Query


def needed_for(query: Query, card: Card, currency: str) -> CardsNeeded | None:
    """The smallest count of `card` for the job, priced in the answer's currency."""
    stripped = query.model_copy(update={"kind": None, "sort": None})
    return cards_needed(stripped, card, book=price_book_in_force(), currency=Currency(currency))


def needed_facts(stated: Query, est: Estimate, currency: str) -> dict[str, Any] | None:
    """`cards_needed` for a fit answer whose card count does not run the job (None when it does, or when
    there is no card). Sized from what the user stated, so unsaid details get this search's defaults
    (inference over several cards under a tensor-parallel engine)."""
    card = card_or_none(est.query.card)
    if card is None:
        return None
    asked = asked_count(stated, card, currency)
    if fits_as_asked(asked):
        return None
    on_card = stated.model_copy(update={"card": card.id, "card_memory_bytes": None})
    needed = needed_for(on_card, card, currency)
    return needed.as_json() if needed is not None else None


def asked_count(query: Query, card: Card, currency: str) -> Assessment:
    """The job on the count the user asked about (one card when they named none), sized as the search
    sizes it, so its verdict and the search's count never disagree."""
    stripped = as_served(
        query.model_copy(update={"kind": None, "sort": None, "card": card.id, "card_memory_bytes": None})
    )
    count = stripped.gpus or 1
    return assess(stripped, card, count, book=None, currency=Currency(currency), speed=False)
