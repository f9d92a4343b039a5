"""What a vision job costs on a rented card: the same JobCost as a language-model job (core.cost), per hour,
per 1,000 items (images, videos, steps, texts, 30 s audio chunks) and for the whole job, from a dated price
and the speed estimate."""

from __future__ import annotations

from core.catalog import load_catalog
from core.cost import CardPrice, JobCost, job_cost, price_book_in_force
from core.vision.result import VisionEstimate, VisionSpeed


def vision_cost(speed: VisionSpeed | None, price: CardPrice, gpus: int = 1) -> JobCost:
    return job_cost(
        price,
        gpus,
        items_per_hour=speed.items_per_hour if speed else None,
        hours=speed.hours if speed and speed.hours else None,
    )


def priced_cost(est: VisionEstimate, currency: str) -> JobCost | None:
    """The job's cost on the catalog card it names, at the price book in force (None without a card or a
    price for it)."""
    verdict = est.verdicts[0] if est.verdicts else None
    card = load_catalog().by_id.get(verdict.card) if verdict else None
    book = price_book_in_force()
    if card is None or book is None:
        return None
    price = book.price_for(card.id, currency)
    return vision_cost(est.speed, price) if price is not None else None
