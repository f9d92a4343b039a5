"""The readable `gpufit estimate` breakdown (the same templates as the bot's answers)."""

from __future__ import annotations

from typing import Any

from core.answer.common import card_or_none, model_label
from core.answer.fit import assumptions, breakdown_rows, folk_reason, main_verdict
from core.estimator import Estimate
from core.query import Query


def estimate_view(est: Estimate, lang: str = "en") -> dict[str, Any]:
    """Data for templates/<lang>/estimate.j2 (`gpufit estimate` without --json)."""
    filled = est.query
    card = card_or_none(filled.card)
    verdict = main_verdict(est)
    stated = Query.model_validate(
        {k: v for k, v in filled.model_dump().items() if k not in filled.defaulted and k != "defaulted"}
    )
    view = {
        "est": est,
        "q": filled,
        "model_name": model_label(est, lang),
        "card": card,
        "card_label": card.name if card else None,
        "capacity": verdict.capacity_bytes if verdict else None,
        "verdict": verdict,
        "verdicts": est.verdicts,
        "single": None,
        "rows": breakdown_rows(est, verdict.capacity_bytes if verdict else None),
        "total": est.total_bytes,
        "folk": est.folk,
        "folk_reason": folk_reason(est),
        "bytes_per_weight": est.folk.weights_bytes / max(est.params, 1),
        "assumptions": assumptions(est, stated),
        "warnings": est.warnings,
        "notes": verdict.notes if verdict else [],
        "speed": None,
        "cost": None,
        "currency": "USD",
        "fixes": [],
        "plans": [],
    }
    return {"v": view, "compact": False, "short": False}
