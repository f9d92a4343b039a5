"""A plan as JSON (`gpufit plan --json` and the answers' facts): its figures, its price's provenance, and the
query to re-run."""

from __future__ import annotations

from typing import Any

from core.advisor.model import Plan
from core.vision.plans import VisionPlan


def plan_json(plan: Plan | VisionPlan) -> dict[str, Any]:
    """One plan for `--json`, language or vision job: the figures every plan has (PlanFigures), the job's
    own, its price's provenance, and the query to re-run."""
    data = plan.model_dump(mode="json", exclude={"price", "query"})
    data["price_source"] = plan.price.owner if plan.price else None
    data["price_provider"] = plan.price.provider if plan.price else None
    data["price_date"] = plan.price.date.isoformat() if plan.price else None
    data["query"] = plan.query.model_dump(mode="json")
    return data
