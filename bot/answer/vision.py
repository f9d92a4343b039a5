"""Answers for image, video, vision, speech and embedding jobs (issue 12): the same `fit` shape as a
language-model answer, rendered from templates/<lang>/vision_fit.j2; the facts carry the estimate's JSON
(`kind`, `verdict`, `breakdown`, `total_bytes`, `speed`, `cost`, `cards_needed`)."""

from __future__ import annotations

from bot.answer.common import answer_currency, pack
from bot.answer.model import Answer, Lang
from bot.answer.views import VisionCheck, VisionView
from bot.charts import adapter as charts
from bot.charts.spec import ChartSpec
from core.advisor.fit_advice import AssumedValue, ShownComponent
from core.advisor.plan_json import plan_json
from core.catalog import load_catalog
from core.estimator import UnknownCardError
from core.runtimes import vision_runtime
from core.vision import VisionEstimate, VisionJob, estimate_vision, resolve_vision_model
from core.vision.cost import priced_cost
from core.vision.plans import vision_plans
from core.vision.result import VISION_COMPONENTS, Fix

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


def vision_view(est: VisionEstimate, currency: str) -> VisionView:
    """What the template needs: verdict, bars, the article's rule, assumptions, speed, cost, fixes."""
    verdict = est.verdicts[0] if est.verdicts else None
    capacity = verdict.capacity_bytes if verdict else None
    total = est.total_bytes
    scale = capacity or total or 1
    parts = est.breakdown.as_dict()
    rows = [
        ShownComponent(name=name, bytes=parts[name], fraction=parts[name] / scale)
        for name in VISION_COMPONENTS
        if parts[name] >= MIN_SHOWN_BYTES
    ]
    job = est.job
    assumptions: list[tuple[str, AssumedValue]] = [
        (name, getattr(job, name).value if hasattr(getattr(job, name), "value") else getattr(job, name))
        for name in VISION_ASSUMPTIONS
        if name in job.defaulted
        and getattr(job, name) is not None
        and not (name == "frames" and job.frames == 1)
        and name != "task"
        # the engine's own choice is said in its own line
        and not (name == "offload" and est.offload is not None and est.offload.chosen_by == "runtime")
    ]
    card = load_catalog().by_id.get(verdict.card) if verdict else None
    cost = priced_cost(est, currency)
    return VisionView(
        model_name=est.model_name,
        job=job,
        family=est.family,
        verdict=verdict,
        card_name=card.name if card else (verdict.card if verdict else ""),
        rows=rows,
        total=total,
        capacity=capacity,
        peak_phase=est.peak_phase,
        folk=est.folk,
        uncertainty=est.uncertainty,
        assumptions=assumptions,
        speed=est.speed,
        cost=cost,
        fixes=_shown_fixes(est),
        max_batch=est.max_batch if job.task and job.task.value in ("infer", "train", "embed") else None,
        warnings=est.warnings,
        offload=est.offload,
        runs_with_offload=est.runs_with_offload,
        runtime_name=vision_runtime(job.runtime).name if job.runtime else None,
        pcie_gen=(card.pcie_gen or 4) if card is not None else 4,
        plans=vision_plans(job, currency) if verdict is None else [],
        sized_card=card is None and verdict is not None and capacity is not None,
    )


OFFLOAD_FIXES = ("model_offload", "group_offload", "sequential_offload")


def _shown_fixes(est: VisionEstimate) -> list[Fix]:
    """Fixes matter when the job does not fit comfortably, or when no card was named; a job that already
    runs with offload is shown what runs without it."""
    verdict = est.verdicts[0] if est.verdicts else None
    fixes = [f for f in est.fixes if not (est.runs_with_offload and f.code in OFFLOAD_FIXES)]
    fitting = [f for f in fixes if not verdict or (verdict.fits.value != "fits" and f.fits)]
    return fitting or ([] if verdict and verdict.fits.value == "fits" else fixes)


def vision_fit_answer(job: VisionJob, lang: Lang) -> Answer:
    """A vision job's fit answer; an unknown card gets the 'did you mean' answer."""
    from bot.answer.clarify import unknown_card_answer

    try:
        return vision_answer(job, lang)
    except UnknownCardError as err:
        return unknown_card_answer(lang, err.name, err.suggestions, None)


def vision_answer(job: VisionJob, lang: Lang) -> Answer:
    currency = job.currency.value if job.currency else answer_currency(None, lang)
    est = estimate_vision(job)
    view = vision_view(est, currency)
    facts = est.as_json(view.cost)
    del facts["query"]  # the answer's `query` beside it (Answer.understood)
    facts["plans"] = [plan_json(plan) for plan in view.plans]
    answer = pack("fit", lang, "vision_fit", view, facts=facts, chart=vision_chart(est, view))
    vision = est.job.model_copy(update={"defaulted": job.defaulted})
    return answer.model_copy(update={"vision": vision, "understood": est.understood()})


def vision_chart(est: VisionEstimate, view: VisionView) -> ChartSpec | None:
    """The cards that hold the job (seconds per item against cost per 1,000) when no card was named and
    some are priced; otherwise the job's memory by component against the card."""
    plans = view.plans
    if plans:
        return charts.vision_plan_chart(
            plans,
            model_name=est.model_name,
            job=view.job.model_dump(mode="json"),
            unit=est.speed.unit if est.speed else None,
            currency=plans[0].currency,
        )
    return charts.vision_memory_chart(est, card_name=view.card_name or None)


def scenario_checks(job: VisionJob, currency: str) -> list[VisionCheck]:
    """The job named in a computer-vision scenario question, on the article's two sizes: a 24 GB card
    (RTX 4090) and a 48 GB one (L20 where prices are in CNY, L40S elsewhere)."""
    checks: list[VisionCheck] = []
    catalog = load_catalog()
    for card_id in ("rtx-4090", "l20" if currency == "CNY" else "l40s"):
        est = estimate_vision(job.model_copy(update={"card": card_id, "card_memory_bytes": None}))
        if not est.verdicts:
            continue
        verdict = est.verdicts[0]
        checks.append(
            VisionCheck(
                card_name=catalog.get(card_id).name,
                verdict=verdict,
                speed=est.speed,
                fixes=[f for f in est.fixes if f.fits][:1],
            )
        )
    return checks


def vision_job_facts(job: VisionJob) -> dict[str, object]:
    """The named job's estimate without a card, for the scenario answer's JSON."""
    return estimate_vision(job.model_copy(update={"card": None})).as_json()


def facts_model_name(job: VisionJob) -> str:
    """The model's display name (the registry's), for the scenario answer's heading."""
    return resolve_vision_model(job.model).name
