"""Answers for image, video, vision, speech and embedding jobs (issue 12): the same `fit` shape as a
language-model answer, rendered from templates/<lang>/vision_fit.j2; the facts carry the estimate's JSON
(`kind`, `verdict`, `breakdown`, `total_bytes`, `speed`, `cost`, `cards_needed`)."""

from __future__ import annotations

from typing import Any

from bot.answer.common import answer_currency, pack
from bot.answer.model import Answer, Lang
from core.catalog import load_catalog
from core.cost import PriceBookError, load_price_book
from core.vision import VisionEstimate, VisionJob, estimate_vision
from core.vision.cost import vision_cost
from core.vision.plans import vision_plans
from core.vision.result import VISION_COMPONENTS

# Assumptions worth stating when filled in, in the order a reader checks them.
VISION_ASSUMPTIONS = (
    "model",
    "task",
    "method",
    "width",
    "height",
    "frames",
    "batch",
    "steps",
    "tokens",
    "precision",
    "offload",
    "vae_tiling",
    "grad_checkpointing",
    "cache_latents",
    "cache_text",
    "lora_rank",
)
MIN_SHOWN_BYTES = 5 * 2**20


def vision_view(est: VisionEstimate, currency: str) -> dict[str, Any]:
    """What the template needs: verdict, bars, the article's rule, assumptions, speed, cost, fixes."""
    verdict = est.verdicts[0] if est.verdicts else None
    capacity = verdict.capacity_bytes if verdict else None
    total = est.total_bytes
    scale = capacity or total or 1
    parts = est.breakdown.as_dict()
    rows = [
        {"name": name, "bytes": parts[name], "fraction": parts[name] / scale}
        for name in VISION_COMPONENTS
        if parts[name] >= MIN_SHOWN_BYTES
    ]
    job = est.job
    assumptions = [
        (name, getattr(job, name).value if hasattr(getattr(job, name), "value") else getattr(job, name))
        for name in VISION_ASSUMPTIONS
        if name in job.defaulted
        and getattr(job, name) is not None
        and not (name == "frames" and job.frames == 1)
        and name != "task"
    ]
    card = load_catalog().by_id.get(verdict.card) if verdict else None
    cost = None
    if card is not None:
        try:
            price = load_price_book().price_for(card.id, currency)
        except PriceBookError:
            price = None
        if price is not None:
            cost = vision_cost(est.speed, price)
    return {
        "model_name": est.model_name,
        "job": job.model_dump(mode="json"),
        "family": est.family,
        "verdict": verdict,
        "card_name": card.name if card else (verdict.card if verdict else ""),
        "rows": rows,
        "total": total,
        "capacity": capacity,
        "peak_phase": est.peak_phase,
        "folk": est.folk,
        "uncertainty": est.uncertainty,
        "assumptions": assumptions,
        "speed": est.speed,
        "cost": cost,
        "fixes": [f for f in est.fixes if f.fits or not verdict or verdict.fits.value == "no"],
        "max_batch": est.max_batch if job.task and job.task.value in ("infer", "train", "embed") else None,
        "warnings": est.warnings,
        "plans": vision_plans(job, currency) if verdict is None else [],
    }


def vision_answer(job: VisionJob, lang: Lang) -> Answer:
    currency = job.currency.value if job.currency else answer_currency(None, lang)
    est = estimate_vision(job)
    view = vision_view(est, currency)
    facts = est.as_json()
    facts["cost"] = view["cost"].model_dump(mode="json") if view["cost"] else None
    return pack("fit", lang, "vision_fit", {"v": view}, facts=facts)
