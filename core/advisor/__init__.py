"""Advice built on the estimator: ranked plans that fit, the smallest fixes for a card that does not, and
the article's scenario recommendations checked against real numbers.

Memory comes from core.estimator.estimate, speed from core.speed, prices from core.cost; this module only
searches over cards × counts × methods × precisions and ranks. It returns data; templates word it.
"""

from __future__ import annotations

from core.advisor.compare import CompareRow, Comparison, compare_cards, tied_leader
from core.advisor.fit_fixes import fixes
from core.advisor.methods import recommend_method
from core.advisor.model import (
    COUNTS,
    INFERENCE_PRECISIONS,
    METHOD_QUALITY,
    PRETRAIN_COUNTS,
    QUALITY,
    QUALITY_RANK,
    SCENARIOS,
    CardOption,
    ClaimCheck,
    Fix,
    Plan,
    ScenarioAdvice,
)
from core.advisor.plan_json import plan_json
from core.advisor.plan_search import plans
from core.advisor.scenarios import scenario
from core.advisor.shared import (
    budget_caps,
    card_price,
    plan_on_card,
    quality_of,
    sort_key,
    speed_value,
    stated_only,
    variants_for,
)
from core.query import SortKey

__all__ = [
    "COUNTS",
    "INFERENCE_PRECISIONS",
    "METHOD_QUALITY",
    "PRETRAIN_COUNTS",
    "QUALITY",
    "QUALITY_RANK",
    "SCENARIOS",
    "CardOption",
    "ClaimCheck",
    "CompareRow",
    "Comparison",
    "Fix",
    "Plan",
    "ScenarioAdvice",
    "SortKey",
    "budget_caps",
    "card_price",
    "compare_cards",
    "fixes",
    "plan_json",
    "plan_on_card",
    "plans",
    "quality_of",
    "recommend_method",
    "scenario",
    "sort_key",
    "speed_value",
    "stated_only",
    "tied_leader",
    "variants_for",
]
