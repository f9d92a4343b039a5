"""Will it fit: the memory view of one job, the methods side by side, and ranked plans."""

from __future__ import annotations

import logging
from typing import Any

from bot.answer.buttons import fit_buttons
from bot.answer.clarify import unknown_model_answer
from bot.answer.common import answer_currency, card_or_none, model_label, pack
from bot.answer.market import budget_facts, cluster_facts, platform_facts, traffic_facts
from bot.answer.model import (
    ASSUMPTION_ORDER,
    MIN_SHOWN_BYTES,
    NOTHING_READ_IN,
    TRAINING_METHODS,
    Answer,
    Lang,
    TypedNames,
)
from bot.answer.needed import needed_facts
from bot.answer.provenance import image_tokens, model_origin, model_source
from bot.charts import adapter as charts
from core import advisor
from core.advisor import Fix, Plan, SortKey
from core.advisor.budget import check_budget, plan_costs
from core.advisor.cheaper import cheaper_plan
from core.advisor.cluster import cluster_for
from core.advisor.traffic import apply_traffic
from core.assessment import Assessment, assess
from core.catalog import load_catalog
from core.cost import price_book_in_force
from core.estimator import COMPONENTS, Estimate, Fit, UnknownModelError, Verdict, estimate
from core.jobs.apple import apple_facts
from core.jobs.facts import JobFacts, job_facts
from core.jobs.offload import InferenceOffload
from core.query import Currency, Method, Precision, Query, Task
from core.report import folk_reason, memory_json, serving_json

log = logging.getLogger(__name__)


def main_verdict(est: Estimate) -> Verdict | None:
    gpus = est.query.gpus or 1
    for verdict in est.verdicts:
        if verdict.count == gpus:
            return verdict
    return est.verdicts[-1] if est.verdicts else None


def breakdown_rows(est: Estimate, capacity: int | None) -> list[dict[str, Any]]:
    scale = capacity or est.total_bytes or 1
    shown = [name for name in COMPONENTS if getattr(est.breakdown, name) >= MIN_SHOWN_BYTES]
    return [
        {
            "name": name,
            "bytes": getattr(est.breakdown, name),
            "fraction": getattr(est.breakdown, name) / scale,
        }
        for name in shown
    ]


def _lacks_bf16(card_id: str | None) -> bool:
    catalog = load_catalog()
    return card_id is not None and card_id in catalog.by_id and catalog.get(card_id).bf16_tflops == 0


def assumptions(est: Estimate, stated: Query) -> list[tuple[str, Any]]:
    """(field, value) for what was assumed, worth a reader's check; never a field the user stated."""
    filled = est.query
    said = stated.said()
    items: list[tuple[str, Any]] = []
    training = filled.task is not Task.INFERENCE
    for name in ASSUMPTION_ORDER:
        if name in said:
            continue
        value = getattr(filled, name)
        if value is None:
            continue
        if not training and name in ("method", "lora_rank", "grad_checkpointing", "optimizer", "zero_stage"):
            continue
        if training and name == "runtime":
            continue
        if name == "lora_rank" and filled.method not in (Method.LORA, Method.QLORA):
            continue
        if name == "gpus" and not (filled.card or filled.card_memory_bytes):
            continue
        if name == "zero_stage" and (filled.gpus or 1) == 1:
            continue
        if name == "optimizer" and filled.method is Method.QLORA:
            continue
        if name == "precision" and value is Precision.BF16 and _lacks_bf16(filled.card):
            value = Precision.FP16  # what the card runs (its note says so), never "assumed bf16" on a V100
        items.append((name, value.value if hasattr(value, "value") else value))
    return items


def _fix_rows(query: Query, currency: str) -> list[dict[str, Any]]:
    rows = []
    for fix in advisor.fixes(query, currency=Currency(currency)):
        card = card_or_none(fix.card)
        rows.append({"fix": fix, "card_name": card.name if card else fix.card, "action": fix.action})
    return rows


def _plans(query: Query, currency: str, sort: SortKey, limit: int = 5) -> list[Plan]:
    return advisor.plans(query, limit=limit, currency=Currency(currency), sort=sort)


def fit_view(
    query: Query,
    lang: Lang,
    *,
    light: bool = False,
    typed: TypedNames = NOTHING_READ_IN,
) -> tuple[Estimate, dict[str, Any]]:
    """Everything the fit templates show, as data; `light` skips the advice searches (speed, price, fixes)."""
    sort: SortKey = query.sort or "cost"
    query, traffic = apply_traffic(query)
    est = estimate(query)
    filled = est.query
    card = card_or_none(filled.card)
    verdict = main_verdict(est)
    single = next((v for v in est.verdicts if v.count == 1), None)
    capacity = verdict.capacity_bytes if verdict else None
    currency = answer_currency(query, lang)
    speed = cost = time = None
    job: Assessment | None = None
    if card is not None and not light:
        job = assess(
            filled,
            card,
            filled.gpus or 1,
            book=price_book_in_force(),
            currency=Currency(currency),
            result=est,
        )
        speed, cost, time = job.speed_json(), job.cost, job.time_json()
    fixes = (
        _fix_rows(query, currency)
        if verdict is not None and verdict.fits is not Fit.FITS and not light
        else []
    )
    plans = _plans(query, currency, sort) if card is None and capacity is None and not light else []
    cheaper = None
    if card is not None and verdict is not None and verdict.fits is Fit.FITS and not light:
        cheaper = cheaper_plan(query, card, Currency(currency))
    # a card given only by its size: the most rented card of that size stands in for the split and the speed
    typical = (
        load_catalog().typical_of(filled.card_memory_bytes)
        if card is None and filled.card_memory_bytes and not light
        else None
    )
    if typical is not None and verdict is not None and verdict.fits is not Fit.NO:
        stand_in = assess(
            filled, typical, filled.gpus or 1, book=None, currency=Currency(currency), result=est
        )
        typical_speed = stand_in.speed_json()
        if speed is None and typical_speed is not None:
            speed = typical_speed | {"typical_card": typical.id, "typical_card_name": typical.name}
    jobs = job_facts(est, card or typical, filled.gpus or 1, verdict.fits if verdict else None)
    apple = apple_facts(card, query, est)
    offloaded = jobs.verdict in ("offload", "tight")
    if jobs.inference_offload is not None:
        speed = offload_speed_json(jobs.inference_offload)
        if typical is not None:
            speed |= {"typical_card": typical.id, "typical_card_name": typical.name}
    instead = _instead(fixes, currency) if job is not None and not job.fits and not offloaded else None
    over_budget = False
    if not plans and query.budget is not None and card is None and capacity is None and not light:
        # nothing within the budget: the cheapest plans anyway, said to be over it
        plans = _plans(query.model_copy(update={"budget": None}), currency, sort)
        over_budget = True
    cluster = None
    if job is not None and card is not None and not light:
        cluster = cluster_for(query, card, job, book=price_book_in_force(), currency=Currency(currency))
    if cluster is None and instead is not None and not light:
        # the count asked does not run as set up: the cluster of the smallest change that does
        fixed: Assessment = instead["job"]
        if fixed.card is not None:
            cluster = cluster_for(
                instead["fix"].query,
                fixed.card,
                fixed,
                book=price_book_in_force(),
                currency=Currency(currency),
            )
    budget = None
    if query.budget is not None and not light:
        costs = [] if over_budget else plan_costs(plans)
        runs = job if job is not None and job.fits else (instead["job"] if instead is not None else None)
        if card is not None and runs is not None and runs.cost is not None:
            costs = [(runs.cost.total, runs.cost.per_hour)]
        budget = check_budget(query, costs, Currency(currency))
    no = verdict is not None and verdict.fits is Fit.NO and not offloaded
    mac = card is not None and card.unified_memory  # one device: no "how many of them"
    needed = needed_facts(query, est, currency) if no and not light and not mac else None
    view = memory_view(est, query, lang, typed=typed)
    said = set(speed["notes"]) if speed else set()
    view["notes"] = [note for note in view["notes"] if note not in said]  # each note once per answer
    view |= {
        "needed": needed,
        "single": single if single is not None and single is not verdict else None,
        "speed": speed,
        "cost": cost,
        "time": time,
        "serving": serving_facts(est, job),
        "instead": instead,
        "currency": currency,
        "fixes": fixes,
        "plans": plans,
        "cheaper": cheaper,
        "jobs": jobs,
        "apple": apple,
        "traffic": traffic,
        "cluster": cluster,
        "budget": budget,
        "platform": platform_facts(query, card.id if card is not None else None),
    }
    return est, view


def offload_speed_json(plan: InferenceOffload) -> dict[str, Any]:
    """The answers' `speed` for a job split between the card and system RAM (core/jobs/offload.py)."""
    return {
        "kind": "inference",
        "decode_tokens_per_s": plan.decode_tokens_per_s,
        "aggregate_tokens_per_s": plan.decode_tokens_per_s,
        "batch": 1,
        "parallelism": "offload",
        # the split's decode is bandwidth arithmetic (core/jobs/offload.py), checked against community
        # reports in tests, not calibrated on the speed issue's published runs
        "band": 0.5,
        "calibrated_on": [],
        "kv_cache_dtype": plan.kv_cache_dtype,
        "notes": [],
    }


def serving_facts(est: Estimate, job: Assessment | None) -> dict[str, Any] | None:
    """The KV-pool engine's figures (core/report.py serving_json: one contract for every command)."""
    return serving_json(est, job)


def _instead(fixes: list[dict[str, Any]], currency: str) -> dict[str, Any] | None:
    """Speed, time and cost of the smallest change that makes the job run, for a setup that does not."""
    for row in fixes:
        fix: Fix = row["fix"]
        if fix.verdict is Fit.NO:
            continue
        card = card_or_none(fix.card)
        if card is None:
            continue
        job = assess(fix.query, card, fix.count, book=price_book_in_force(), currency=Currency(currency))
        if not job.fits:
            continue
        return {
            "fix": fix,
            "card_name": card.name,
            "count": job.count,
            "speed": job.speed_json(),
            "time": job.time_json(),
            "cost": job.cost,
            "job": job,
        }
    return None


def memory_view(
    est: Estimate, stated: Query, lang: str, *, typed: TypedNames = NOTHING_READ_IN
) -> dict[str, Any]:
    """The memory part every fit template shows (the bot's answers and `gpufit estimate` alike); the advice
    fields (speed, cost, fixes, plans) are empty here and filled by `fit_view`."""
    card = card_or_none(est.query.card)
    verdict = main_verdict(est)
    capacity = verdict.capacity_bytes if verdict else None
    return {
        "est": est,
        "q": est.query,
        "model_name": model_label(est, lang),
        "card_typed": typed.card,
        "model_typed": typed.model if est.representative_shape else None,
        "model_origin": model_origin(est.query.model, est.model_name),
        "image_tokens": image_tokens(est.query.model),
        "card": card,
        "card_label": card.name if card else None,
        "capacity": capacity,
        "verdict": verdict,
        "verdicts": est.verdicts,
        "single": None,
        "rows": breakdown_rows(est, capacity),
        "total": est.total_bytes,
        "folk": est.folk,
        "folk_reason": folk_reason(est),
        "bytes_per_weight": est.folk.weights_bytes / max(est.params, 1),
        "assumptions": assumptions(est, stated),
        "warnings": est.warnings,
        "notes": verdict.notes if verdict else [],
        "speed": None,
        "cost": None,
        "time": None,
        "serving": None,
        "instead": None,
        "currency": "USD",
        "fixes": [],
        "plans": [],
        "cheaper": None,
    }


def _job_facts(view: dict[str, Any]) -> dict[str, Any]:
    jobs: JobFacts | None = view.get("jobs")
    if jobs is None:
        return {}
    facts: dict[str, Any] = {
        "runtime": jobs.runtime,
        "offload": jobs.offload,
        "rl": jobs.rl.model_dump(mode="json") if jobs.rl else None,
        "launch": jobs.launch.model_dump(mode="json") if jobs.launch else None,
    }
    if jobs.verdict is not None:
        facts["verdict"] = jobs.verdict
    return facts


def _fit_facts(est: Estimate, view: dict[str, Any]) -> dict[str, Any]:
    # memory in the one JSON contract (core/report.py), the same keys and values as `gpufit estimate --json`
    return (
        memory_json(est)
        | {
            "verdict": view["verdict"].fits.value if view["verdict"] else None,
            "assumed": [name for name, _ in view["assumptions"]],
            "speed": view["speed"],
            "cost": view["cost"].model_dump(mode="json") if view["cost"] else None,
            "time": view["time"],
            "serving": view["serving"],
            "instead": _instead_facts(view["instead"]),
            "fixes": [
                row["fix"].model_dump(mode="json", exclude={"query"}) | {"action": row["action"]}
                for row in view["fixes"]
            ],
            "plans": [advisor.plan_json(p) for p in view["plans"]],
            "cheaper": advisor.plan_json(view["cheaper"]) if view["cheaper"] else None,
            "cards_needed": view.get("needed"),
            "model_source": model_source(est, view.get("model_origin")),
            "traffic": traffic_facts(view.get("traffic")),
            "cluster": cluster_facts(view.get("cluster")),
            "budget": budget_facts(view.get("budget")),
            "platform": view.get("platform"),
            "apple": view.get("apple"),
        }
        | _setup_that_runs(view)
        | _job_facts(view)
    )


def _setup_that_runs(view: dict[str, Any]) -> dict[str, Any]:
    """When the asked setup does not run, `time` and `cost` are those of the smallest change that does (the
    answer says so); `setup` names it."""
    instead = _instead_facts(view["instead"])
    if instead is None:
        return {}
    setup = {"card": instead["card"], "count": instead["count"], "fix": instead["fix"], "asked": False}
    return {
        "time": instead["time"] | {"setup": setup} if instead["time"] else None,
        "cost": instead["cost"] | {"setup": setup} if instead["cost"] else None,
    }


def _instead_facts(instead: dict[str, Any] | None) -> dict[str, Any] | None:
    if instead is None:
        return None
    fix: Fix = instead["fix"]
    return {
        "fix": fix.kind,
        "card": fix.card,
        "count": instead["count"],
        "speed": instead["speed"],
        "time": instead["time"],
        "cost": instead["cost"].model_dump(mode="json") if instead["cost"] else None,
    }


def fit_answer(query: Query, lang: Lang, typed: TypedNames = NOTHING_READ_IN) -> Answer:
    est, view = fit_view(query, lang, typed=typed)
    return pack(
        "fit",
        lang,
        "fit",
        {"v": view},
        query=query,
        filled=est.query,
        compact_template="fit_compact",
        buttons=fit_buttons(query, est, view, lang),
        facts=_fit_facts(est, view),
        chart=charts.memory_chart(
            est,
            view["verdict"],
            model_name=view["model_name"],
            fixes=[row["fix"] for row in view["fixes"]],
            plans=view["plans"],
        ),
    )


def methods_answer(query: Query, lang: Lang, typed: TypedNames = NOTHING_READ_IN) -> Answer:
    """'Fine-tune' with no method: full, LoRA and QLoRA side by side, the recommended one in detail."""
    views: dict[Method, dict[str, Any]] = {}
    jobs: dict[Method, Assessment] = {}
    for method in TRAINING_METHODS:
        variant = query.model_copy(update={"method": method, "task": Task.FINETUNE})
        result, views[method] = fit_view(variant, lang, light=True)
        jobs[method] = assess(result.query, book=None, currency=Currency.USD, speed=False, result=result)
    best = advisor.recommend_method(jobs)
    best_query = query.model_copy(update={"method": best, "task": Task.FINETUNE})
    est, view = fit_view(best_query, lang, typed=typed)
    views[best] = view
    data = {"v": view, "methods": [(m.value, views[m]) for m in TRAINING_METHODS], "best": best.value}
    facts = _fit_facts(est, view) | {
        "recommended_method": best.value,
        "methods": {
            m.value: {
                "total_bytes": views[m]["total"],
                "verdict": views[m]["verdict"].fits.value if views[m]["verdict"] else None,
            }
            for m in TRAINING_METHODS
        },
    }
    return pack(
        "fit",
        lang,
        "methods_side_by_side",
        data,
        query=query,
        filled=est.query.model_copy(update={"method": None}),
        buttons=fit_buttons(query.model_copy(update={"method": best}), est, view, lang, all_methods=True),
        facts=facts,
        chart=charts.methods_chart(
            est,
            [(m.value, views[m]["est"], views[m]["verdict"]) for m in TRAINING_METHODS],
            model_name=view["model_name"],
        ),
    )


def plan_answer(query: Query, lang: Lang) -> Answer:
    """The ranked plans for a job (cheapest first, or fastest when the question asked for speed)."""
    sort: SortKey = query.sort or "cost"
    try:
        without_card = query.model_copy(update={"card": None, "card_memory_bytes": None})
        est, view = fit_view(without_card, lang)
    except UnknownModelError as err:
        return unknown_model_answer(lang, err.name, err.suggestions, query)
    return pack(
        "plan",
        lang,
        "plan",
        {
            "plans": view["plans"],
            "currency": view["currency"],
            "model_name": view["model_name"],
            "estimate": est,
            "query": est.query,
            "full": False,
            "sort": sort,
            "v": view,
        },
        query=query,
        filled=est.query,
        facts=_fit_facts(est, view),
        chart=charts.plan_chart(
            view["plans"], model_name=view["model_name"], query=est.query, currency=view["currency"]
        ),
    )
