"""What a vision job costs on a rented card: per hour, per 1,000 items (images, videos, steps, texts, 30 s
audio chunks) and for the whole job, from a dated price (core.cost) and the speed estimate."""

from __future__ import annotations

from core.cost import CardPrice
from core.vision.result import VisionCost, VisionSpeed


def vision_cost(speed: VisionSpeed | None, price: CardPrice, gpus: int = 1) -> VisionCost:
    per_hour = price.per_hour * gpus
    per_thousand = per_hour / speed.items_per_hour * 1000 if speed and speed.items_per_hour else None
    total = per_hour * speed.hours if speed and speed.hours else None
    return VisionCost(
        per_hour=round(per_hour, 4),
        per_thousand=round(per_thousand, 4) if per_thousand is not None else None,
        total=round(total, 2) if total is not None else None,
        currency=price.currency.value,
        provider=price.provider,
        date=price.date.isoformat(),
    )
