"""The readable `gpufit estimate` breakdown (the same templates as the bot's answers)."""

from __future__ import annotations

from typing import Any

from bot.answer.fit import memory_view, serving_facts
from core.assessment import assess
from core.catalog import load_catalog
from core.cost import currency_for, price_book_in_force
from core.estimator import Estimate
from core.query import Query


def estimate_view(est: Estimate, lang: str = "en") -> dict[str, Any]:
    """Data for templates/<lang>/estimate.j2 (`gpufit estimate` without --json): the memory view, and for a
    named card the same speed, time and cost that `--json` carries."""
    filled = est.query
    stated = Query.model_validate(
        {k: v for k, v in filled.model_dump().items() if k not in filled.defaulted and k != "defaulted"}
    )
    view = memory_view(est, stated, lang)
    card = load_catalog().by_id.get(filled.card or "")
    if card is not None:
        job = assess(
            filled,
            card,
            filled.gpus or 1,
            book=price_book_in_force(),
            currency=currency_for(filled.currency, None),
            result=est,
            fits_only=False,
        )
        view |= {
            "speed": job.speed_json(),
            "cost": job.cost,
            "time": job.time_json(),
            "serving": serving_facts(est, job),
        }
    return {"v": view, "compact": False, "short": False}
