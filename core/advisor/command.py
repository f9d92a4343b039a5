"""`gpufit plan '<question>'`: the ranked plans for a question in words."""

from __future__ import annotations

import json
import sys
from typing import Any

from core.advisor.model import Plan, SortKey
from core.advisor.plan_search import plans
from core.cost import (
    currency_for,
)
from core.estimator import (
    UnknownCardError,
    UnknownModelError,
)


def plan_command(question: str, *, as_json: bool, lang: str | None) -> int:
    """`gpufit plan "<question>"`: the ranked plans for a question in words."""
    from core.parser import parse
    from core.render import html_to_terminal, render_plan

    parsed = parse(question)
    query = parsed.query
    language = lang or parsed.lang
    if query is None or (query.model is None and query.params_b is None):
        print('gpufit: which model? e.g. gpufit plan "Qwen2.5 7B LoRA fine-tune"', file=sys.stderr)
        return 2
    money = currency_for(query.currency, language)
    sort: SortKey = parsed.sort
    try:
        found = plans(query, sort=sort, currency=money)
    except UnknownModelError as err:
        hint = f" Did you mean: {', '.join(err.suggestions)}?" if err.suggestions else ""
        print(f"gpufit: unknown model {err.name!r}.{hint}", file=sys.stderr)
        return 2
    except UnknownCardError as err:
        hint = f" Did you mean: {', '.join(err.suggestions)}?" if err.suggestions else ""
        print(f"gpufit: unknown card {err.name!r}.{hint}", file=sys.stderr)
        return 2
    if as_json:
        payload = {
            "query": query.model_dump(mode="json"),
            "sort": sort,
            "currency": money.value,
            "plans": [plan_json(p) for p in found],
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    print(html_to_terminal(render_plan(found, language, money.value, sort)))
    return 0


def plan_json(plan: Plan) -> dict[str, Any]:
    """One plan for `--json`: the plan's figures, its price's provenance, and the query to re-run."""
    data = plan.model_dump(mode="json", exclude={"price", "query"})
    data["price_source"] = plan.price.owner if plan.price else None
    data["price_provider"] = plan.price.provider if plan.price else None
    data["price_date"] = plan.price.date.isoformat() if plan.price else None
    data["query"] = plan.query.model_dump(mode="json")
    return data
