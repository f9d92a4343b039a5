"""Cards that run a vision job, cheapest per 1,000 items first (for questions that name no card, and for
the computer-vision scenario answer). A card too small for the whole pipeline is in the list when the job
runs there as its engine runs it on a short card (ComfyUI's own offload, the model's README flags, diffusers'
model offload: core/vision/estimate.py), ranked at that speed and said to offload."""

from __future__ import annotations

from core.advisor.model import PlanFigures
from core.catalog import Card, load_catalog
from core.cost import CardPrice, price_book_in_force
from core.estimator.memory import verdict_for
from core.estimator.result import Fit
from core.query import Precision
from core.vision.cost import vision_cost
from core.vision.defaults import fill_defaults
from core.vision.estimate import need_bytes, offloaded_on, resolve_vision_model
from core.vision.job import VisionJob
from core.vision.registry import load_vision_registry
from core.vision.speed import vision_speed


class VisionPlan(PlanFigures):
    """One card that runs a vision job: the plan figures every job has, and the job's own speed and cost per
    1,000 items."""

    precision: Precision
    seconds_per_item: float | None
    items_per_hour: float | None
    unit: str
    cost_per_thousand_items: float | None
    query: VisionJob
    # the card holds only part of the pipeline: the offload the job runs with there (model | partial | group |
    # sequential) and the bytes waiting in system RAM; None when it runs wholly in the card's memory
    offload: str | None = None
    host_bytes: int | None = None


def _offloaded_plan(job: VisionJob, card: Card, price: CardPrice) -> VisionPlan | None:
    """The plan of a card too small for the whole pipeline, when the job runs there with the offload its
    engine picks by itself (an offload the question states, or "no offload", is in `need` already)."""
    if "offload" not in job.defaulted:
        return None
    found = offloaded_on(job, card)
    if found is None:
        return None
    run, need, offload = found
    return _plan(run, card, price, need, offload=offload.mode, host_bytes=offload.host_bytes)


def _plan(
    run: VisionJob,
    card: Card,
    price: CardPrice,
    need: int,
    *,
    offload: str | None = None,
    host_bytes: int | None = None,
) -> VisionPlan | None:
    """The card's plan for the job as it runs there (`need` bytes on the card); None when it does not fit."""
    verdict = verdict_for(need, card.memory_bytes, card_id=card.id, count=1, uncertainty=0.1, notes=[])
    if verdict.fits is Fit.NO:
        return None
    registry = load_vision_registry()
    speed = vision_speed(run, resolve_vision_model(run.model, registry), registry, card)
    cost = vision_cost(speed, price)
    assert run.precision
    return VisionPlan(
        card=card.id,
        card_name=card.name,
        memory_gib=card.memory_gib,
        count=1,
        need_bytes=need,
        capacity_bytes=card.memory_bytes,
        verdict=verdict.fits,
        margin=verdict.margin,
        cost_per_hour=cost.per_hour,
        total_cost=cost.total,
        currency=price.currency,
        price=price,
        notes=["offload"] if offload is not None else [],
        precision=run.precision,
        seconds_per_item=speed.seconds_per_item,
        items_per_hour=speed.items_per_hour,
        unit=speed.unit,
        cost_per_thousand_items=cost.per_thousand_items,
        query=run,
        offload=offload,
        host_bytes=host_bytes,
    )


def vision_plans(job: VisionJob, currency: str, limit: int = 5) -> list[VisionPlan]:
    """Priced cards whose memory holds the job, by cost per 1,000 items (per hour when no speed)."""
    book = price_book_in_force()
    if book is None:
        return []
    model = resolve_vision_model(job.model, load_vision_registry())
    cardless = fill_defaults(job.model_copy(update={"card": None, "card_memory_bytes": None}), model)
    need = need_bytes(cardless)
    plans: list[VisionPlan] = []
    for card in load_catalog().cards:
        price = book.price_for(card.id, currency)
        if price is None:
            continue
        if card.memory_bytes < need:
            plan = _offloaded_plan(cardless, card, price)
        else:
            plan = _plan(cardless.model_copy(update={"card": card.id}), card, price, need)
        if plan is not None:
            plans.append(plan)
    plans.sort(
        key=lambda p: (
            p.cost_per_thousand_items if p.cost_per_thousand_items is not None else p.cost_per_hour or 0.0,
            p.cost_per_hour or 0.0,
        )
    )
    return plans[:limit]
