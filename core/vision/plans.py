"""Cards that run a vision job, cheapest per 1,000 items first (for questions that name no card, and for
the computer-vision scenario answer)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.catalog import load_catalog
from core.cost import PriceBookError, load_price_book
from core.estimator.memory import verdict_for
from core.estimator.result import Fit
from core.vision.defaults import fill_defaults
from core.vision.estimate import need_bytes, resolve_vision_model
from core.vision.job import VisionJob
from core.vision.registry import load_vision_registry
from core.vision.speed import vision_speed


class VisionPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    card: str
    card_name: str
    memory_gib: float
    fits: Fit
    need_bytes: int
    seconds_per_item: float | None
    per_hour: float
    per_thousand: float | None
    currency: str
    provider: str
    date: str


def vision_plans(job: VisionJob, currency: str, limit: int = 5) -> list[VisionPlan]:
    """Priced cards whose memory holds the job, by cost per 1,000 items (per hour when no speed)."""
    try:
        book = load_price_book()
    except PriceBookError:
        return []
    need = need_bytes(job.model_copy(update={"card": None, "card_memory_bytes": None}))
    registry = load_vision_registry()
    model = resolve_vision_model(job.model, registry)
    filled = fill_defaults(job, model)
    plans: list[VisionPlan] = []
    for card in load_catalog().cards:
        if card.memory_bytes < need:
            continue
        price = book.price_for(card.id, currency)
        if price is None:
            continue
        verdict = verdict_for(need, card.memory_bytes, card_id=card.id, count=1, uncertainty=0.1, notes=[])
        if verdict.fits is Fit.NO:
            continue
        speed = vision_speed(filled, model, registry, card)
        per_thousand = price.per_hour / speed.items_per_hour * 1000
        plans.append(
            VisionPlan(
                card=card.id,
                card_name=card.name,
                memory_gib=card.memory_gib,
                fits=verdict.fits,
                need_bytes=need,
                seconds_per_item=speed.seconds_per_item,
                per_hour=price.per_hour,
                per_thousand=per_thousand,
                currency=price.currency.value,
                provider=price.provider,
                date=price.date.isoformat(),
            )
        )
    plans.sort(key=lambda p: (p.per_thousand if p.per_thousand is not None else p.per_hour, p.per_hour))
    return plans[:limit]
