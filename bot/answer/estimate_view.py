"""The readable `gpufit estimate` breakdown (the same templates as the bot's answers)."""

from __future__ import annotations

from typing import Any

from bot.answer.fit import memory_view
from core.estimator import Estimate
from core.query import Query


def estimate_view(est: Estimate, lang: str = "en") -> dict[str, Any]:
    """Data for templates/<lang>/estimate.j2 (`gpufit estimate` without --json)."""
    filled = est.query
    stated = Query.model_validate(
        {k: v for k, v in filled.model_dump().items() if k not in filled.defaulted and k != "defaulted"}
    )
    return {"v": memory_view(est, stated, lang), "compact": False, "short": False}
