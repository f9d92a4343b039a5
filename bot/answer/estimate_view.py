"""The readable `gpufit estimate` breakdown (the same templates as the bot's answers)."""

from __future__ import annotations

from dataclasses import replace

from bot.answer.fit import memory_view
from bot.answer.views import FitView
from bot.render import render
from core.estimator import Estimate
from core.query import Query
from core.report import estimate_assessment, serving_figures


def estimate_view(est: Estimate, lang: str = "en") -> FitView:
    """What templates/estimate.j2 shows (`gpufit estimate` without --json): the memory view, and for a
    named card the same speed, time and cost that `--json` carries."""
    filled = est.query
    stated = Query.model_validate(
        {k: v for k, v in filled.model_dump().items() if k not in filled.defaulted and k != "defaulted"}
    )
    view = memory_view(est, stated, lang)
    job = estimate_assessment(est)
    if job is not None:
        view = replace(
            view,
            speed=job.speed,
            cost=job.cost,
            time=job.time,
            serving=serving_figures(est, job),
        )
    return view


def render_estimate(est: Estimate, lang: str = "en") -> str:
    """`gpufit estimate` without --json: the breakdown, folk rule, verdicts and assumptions."""
    return render("estimate", lang, v=estimate_view(est, lang), compact=False, short=False)
