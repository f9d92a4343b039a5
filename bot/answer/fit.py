"""Will it fit: the memory view of one job, the methods side by side, and ranked plans. The advice is
core's (core/advisor/fit_advice.py); here it becomes typed views (bot/answer/views.py) and JSON."""

from __future__ import annotations

import logging
from dataclasses import replace

from bot.answer.buttons import fit_buttons
from bot.answer.clarify import unknown_model_answer
from bot.answer.common import answer_currency, model_label, pack
from bot.answer.market import budget_facts, cluster_facts, platform_facts, traffic_facts
from bot.answer.model import NOTHING_READ_IN, TRAINING_METHODS, Answer, Lang, TypedNames
from bot.answer.provenance import image_tokens, model_origin, model_source
from bot.answer.views import FitView, FixRow, InsteadView, MethodsView, PlanView
from bot.charts import adapter as charts
from bot.render import render
from core import advisor
from core.advisor import Fix, Plan, SortKey
from core.advisor.fit_advice import Instead, MemoryShown, advise_fit, card_named, memory_shown
from core.assessment import Assessment, assess
from core.contract import speed_json
from core.estimator import Estimate, UnknownModelError
from core.jobs.facts import JobFacts
from core.query import Currency, Method, Query, Task
from core.report import memory_json, serving_figures

log = logging.getLogger(__name__)


def _fix_row(fix: Fix) -> FixRow:
    card = card_named(fix.card)
    return FixRow(fix=fix, card_name=card.name if card else fix.card, action=fix.action)


def _instead_view(instead: Instead | None) -> InsteadView | None:
    if instead is None:
        return None
    job = instead.job
    return InsteadView(
        fix=instead.fix,
        card_name=instead.card.name,
        count=job.count,
        speed=job.speed,
        time=job.time,
        cost=job.cost,
        job=job,
    )


def fit_view(
    query: Query,
    lang: Lang,
    *,
    light: bool = False,
    typed: TypedNames = NOTHING_READ_IN,
) -> tuple[Estimate, FitView]:
    """Everything the fit templates show; `light` skips the advice searches (speed, price, fixes). The advice
    is core's (core/advisor/fit_advice.py); here it is labelled for the answer's language."""
    currency = answer_currency(query, lang)
    advice = advise_fit(query, Currency(currency), light=light)
    est = advice.estimate
    job = advice.job
    view = memory_view(est, advice.stated, lang, typed=typed, memory=advice.memory)
    view = replace(
        view,
        notes=advice.notes,
        needed=advice.needed,
        single=advice.single,
        speed=advice.speed,
        typical=advice.speed_stand_in,
        cost=job.cost if job is not None else None,
        time=job.time if job is not None else None,
        serving=serving_figures(est, job),
        instead=_instead_view(advice.instead),
        currency=currency,
        fixes=[_fix_row(fix) for fix in advice.fixes],
        plans=advice.plans,
        planned=advice.planned,
        cheaper=advice.cheaper,
        jobs=advice.jobs,
        apple=advice.apple,
        traffic=advice.traffic,
        cluster=advice.cluster,
        budget=advice.budget,
    )
    return est, view


def memory_view(
    est: Estimate,
    stated: Query,
    lang: str,
    *,
    typed: TypedNames = NOTHING_READ_IN,
    memory: MemoryShown | None = None,
) -> FitView:
    """The memory part every fit template shows (the bot's answers and `gpufit estimate` alike); the advice
    fields (speed, cost, fixes, plans) are empty here and filled by `fit_view`."""
    card = card_named(est.query.card)
    shown = memory if memory is not None else memory_shown(est, stated)
    return FitView(
        est=est,
        q=est.query,
        model_name=model_label(est, lang),
        card_typed=typed.card,
        model_typed=typed.model if est.representative_shape else None,
        model_origin=model_origin(est.query.model, est.model_name),
        image_tokens=image_tokens(est.query.model),
        card=card,
        card_label=card.name if card else None,
        capacity=shown.capacity,
        verdict=shown.verdict,
        verdicts=est.verdicts,
        rows=shown.rows,
        total=est.total_bytes,
        folk=est.folk,
        folk_reason=shown.folk_reason,
        bytes_per_weight=shown.bytes_per_weight,
        assumptions=shown.assumptions,
        warnings=est.warnings,
        notes=shown.notes,
    )


def _job_facts(jobs: JobFacts | None) -> dict[str, object]:
    if jobs is None:
        return {}
    facts: dict[str, object] = {
        "runtime": jobs.runtime,
        "offload": jobs.offload_json(),
        "rl": jobs.rl.model_dump(mode="json") if jobs.rl else None,
        "launch": jobs.launch.model_dump(mode="json") if jobs.launch else None,
    }
    if jobs.verdict is not None:
        facts["verdict"] = jobs.verdict
    if jobs.context_rule is not None:
        facts["context_rule"] = jobs.context_rule.model_dump(mode="json")
    if jobs.cpu is not None:
        facts["cpu"] = jobs.cpu.model_dump(mode="json") | {"runs": jobs.cpu.runs}
    if jobs.slots is not None:
        facts["slots"] = jobs.slots.model_dump(mode="json")
    return facts


def _fit_facts(query: Query, est: Estimate, view: FitView) -> dict[str, object]:
    # memory in the one JSON contract (core/report.py), the same keys and values as `gpufit estimate --json`
    card = view.card
    return (
        memory_json(est)
        | {
            "verdict": view.verdict.fits.value if view.verdict else None,
            "assumed": [name for name, _ in view.assumptions],
            "speed": speed_json(view.speed, view.typical),
            "cost": view.cost.model_dump(mode="json") if view.cost else None,
            "time": view.time.as_json() if view.time else None,
            "serving": view.serving.as_json() if view.serving else None,
            "instead": _instead_facts(view.instead),
            "fixes": [
                row.fix.model_dump(mode="json", exclude={"query"}) | {"action": row.action}
                for row in view.fixes
            ],
            "plans": [advisor.plan_json(p) for p in view.plans],
            "cheaper": advisor.plan_json(view.cheaper) if view.cheaper else None,
            "cards_needed": view.needed.as_json() if view.needed is not None else None,
            "model_source": model_source(est, view.model_origin),
            "traffic": traffic_facts(view.traffic),
            "cluster": cluster_facts(view.cluster),
            "budget": budget_facts(view.budget),
            "platform": platform_facts(query, card.id if card is not None else None),
            "apple": view.apple.model_dump(mode="json") if view.apple else None,
        }
        | _setup_that_runs(view.instead)
        | first_plan_facts(view.planned)
        | _job_facts(view.jobs)
    )


def first_plan_facts(planned: Assessment | None) -> dict[str, object]:
    """No card named: `speed`, `time` and `cost` are the first plan's (the one the answer recommends), so a
    plan answer carries the job's figures under the same keys as an answer for a card; `setup` names it.
    `gpufit plan --json` gives the same."""
    if planned is None or planned.card is None:
        return {}
    setup = {"card": planned.card.id, "count": planned.count, "fix": None, "plan": 1, "asked": False}
    speed = speed_json(planned.speed)
    time = planned.time_json()
    cost = planned.cost.model_dump(mode="json") if planned.cost else None
    return {
        "speed": speed | {"setup": setup} if speed else None,
        "time": time | {"setup": setup} if time else None,
        "cost": cost | {"setup": setup} if cost else None,
    }


def _setup_that_runs(instead: InsteadView | None) -> dict[str, object]:
    """When the asked setup does not run, `time` and `cost` are those of the smallest change that does (the
    answer says so); `setup` names it."""
    if instead is None:
        return {}
    setup = {
        "card": instead.fix.card,
        "count": instead.count,
        "fix": instead.fix.kind,
        "plan": None,
        "asked": False,
    }
    cost = instead.cost.model_dump(mode="json") if instead.cost else None
    return {
        "time": instead.time.as_json() | {"setup": setup} if instead.time else None,
        "cost": cost | {"setup": setup} if cost else None,
    }


def _instead_facts(instead: InsteadView | None) -> dict[str, object] | None:
    if instead is None:
        return None
    return {
        "fix": instead.fix.kind,
        "card": instead.fix.card,
        "count": instead.count,
        "speed": speed_json(instead.speed),
        "time": instead.time.as_json() if instead.time else None,
        "cost": instead.cost.model_dump(mode="json") if instead.cost else None,
    }


def fit_answer(query: Query, lang: Lang, typed: TypedNames = NOTHING_READ_IN) -> Answer:
    est, view = fit_view(query, lang, typed=typed)
    return pack(
        "fit",
        lang,
        "fit",
        view,
        query=query,
        filled=est.query,
        compact_template="fit_compact",
        buttons=fit_buttons(query, est, view, lang),
        facts=lambda: _fit_facts(query, est, view),
        chart=charts.memory_chart(
            est,
            view.verdict,
            model_name=view.model_name,
            fixes=[row.fix for row in view.fixes],
            plans=view.plans,
        ),
    )


def methods_answer(query: Query, lang: Lang, typed: TypedNames = NOTHING_READ_IN) -> Answer:
    """'Fine-tune' with no method: full, LoRA and QLoRA side by side, the recommended one in detail."""
    views: dict[Method, FitView] = {}
    jobs: dict[Method, Assessment] = {}
    for method in TRAINING_METHODS:
        variant = query.model_copy(update={"method": method, "task": Task.FINETUNE})
        result, views[method] = fit_view(variant, lang, light=True)
        jobs[method] = assess(result.query, book=None, currency=Currency.USD, speed=False, result=result)
    best = advisor.recommend_method(jobs)
    best_query = query.model_copy(update={"method": best, "task": Task.FINETUNE})
    est, view = fit_view(best_query, lang, typed=typed)
    views[best] = view
    shown = MethodsView(
        recommended=view, methods=[(m.value, views[m]) for m in TRAINING_METHODS], best=best.value
    )
    facts = _fit_facts(best_query, est, view) | {
        "recommended_method": best.value,
        "methods": {
            m.value: {
                "total_bytes": views[m].total,
                "verdict": verdict.fits.value if (verdict := views[m].verdict) else None,
            }
            for m in TRAINING_METHODS
        },
    }
    return pack(
        "fit",
        lang,
        "methods_side_by_side",
        shown,
        query=query,
        filled=est.query.model_copy(update={"method": None}),
        buttons=fit_buttons(query.model_copy(update={"method": best}), est, view, lang, all_methods=True),
        facts=facts,
        chart=charts.methods_chart(
            est,
            [(m.value, views[m].est, views[m].verdict) for m in TRAINING_METHODS],
            model_name=view.model_name,
        ),
    )


def plan_text(plans: list[Plan], lang: str, currency: str, sort: SortKey) -> str:
    """`gpufit plan`: the plans that fit, in the advisor's order (cheapest or fastest first)."""
    return render("plan", lang, compact=False, short=False, v=PlanView(plans, currency, sort))


def plan_answer(query: Query, lang: Lang) -> Answer:
    """The ranked plans for a job (cheapest first, or fastest when the question asked for speed)."""
    sort: SortKey = query.sort or "cost"
    try:
        without_card = query.model_copy(update={"card": None, "card_memory_bytes": None})
        est, view = fit_view(without_card, lang)
    except UnknownModelError as err:
        return unknown_model_answer(lang, err.name, err.suggestions, query)
    shown = PlanView(view.plans, view.currency, sort, fit=view, estimate=est)
    return pack(
        "plan",
        lang,
        "plan",
        shown,
        query=query,
        filled=est.query,
        facts=lambda: _fit_facts(without_card, est, view),
        chart=charts.plan_chart(
            view.plans, model_name=view.model_name, query=est.query, currency=view.currency
        ),
    )
