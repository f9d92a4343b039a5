"""Plans, fixes and the article's scenarios, on Query objects directly (no parser needed)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.cli import plan_command
from core.advisor import SCENARIOS, fixes, plan_json, plans, scenario
from core.catalog import load_catalog
from core.estimator import Fit, estimate
from core.query import Currency, Method, Precision, Query, Runtime, Task
from core.report import estimate_json


def test_cheapest_plans_fit_and_are_sorted_by_cost() -> None:
    found = plans(Query(model="qwen2.5-7b"), limit=6)
    assert found
    assert all(p.verdict is not Fit.NO for p in found)
    costs = [p.cost_per_hour for p in found if p.cost_per_hour is not None]
    assert costs == sorted(costs)
    assert all(p.need_bytes <= p.capacity_bytes for p in found)


def test_fastest_under_hourly_budget() -> None:
    found = plans(
        Query(task=Task.FINETUNE, model="llama-3.1-8b", tokens=1e9),
        sort="speed",
        max_per_hour=20,
        currency=Currency.CNY,
    )
    assert found
    assert all(p.cost_per_hour is not None and p.cost_per_hour <= 20 for p in found)
    speeds = [p.speed for p in found]
    assert speeds == sorted(speeds, reverse=True)
    assert all(p.training_hours and p.total_cost for p in found)
    assert all(p.currency is Currency.CNY for p in found)


def test_stated_budget_and_card_and_count_are_kept() -> None:
    q = Query(
        task=Task.FINETUNE,
        method=Method.QLORA,
        model="qwen2.5-14b",
        card="4090",
        gpus=2,
        budget=5,
        budget_period="hour",
    )
    found = plans(q, currency=Currency.CNY)
    assert found and all(p.card == "rtx-4090" and p.count == 2 and p.method is Method.QLORA for p in found)
    assert all(p.cost_per_hour is not None and p.cost_per_hour <= 5 for p in found)


def test_plan_json_round_trips() -> None:
    found = plans(Query(model="llama-3.1-8b", runtime=Runtime.VLLM), limit=2)
    data = json.loads(json.dumps(plan_json(found[0])))
    assert {"card", "count", "need_bytes", "cost_per_hour", "price_source", "price_date", "query"} <= set(
        data
    )


def test_fixes_for_full_finetune_on_4090() -> None:
    found = fixes(Query(task=Task.FINETUNE, method=Method.FULL, model="llama-3.1-8b", card="rtx-4090"))
    kinds = [f.kind for f in found]
    # 8B full fine-tuning needs ~140 GB: LoRA or QLoRA fit the 4090 alone; else more cards or a bigger one
    assert {"lora", "qlora", "more_cards", "bigger_card"} <= set(kinds), kinds
    capacity = load_catalog().get("rtx-4090").memory_bytes
    for fix in found:
        assert fix.verdict is not Fit.NO
        assert fix.need_bytes <= fix.capacity_bytes
        if fix.kind == "bigger_card":  # the same job on more memory
            assert fix.saved_bytes == 0 and fix.capacity_bytes > capacity
        else:  # less memory per card on the 4090
            assert fix.saved_bytes > 0 and fix.capacity_bytes <= capacity


def test_fixes_for_13b_fp16_inference_on_24gb() -> None:
    found = fixes(Query(model="llama-2-13b", card="rtx-4090", precision=Precision.FP16))
    by_kind = {f.kind.value: f for f in found}
    assert "int8" in by_kind and "int4" in by_kind
    assert by_kind["int4"].quality_cost == "noticeable"
    assert by_kind["int8"].need_bytes < 24 * 2**30
    assert "more_cards" in by_kind and by_kind["more_cards"].speed_cost == "pcie"


def test_fixes_shorter_context_and_smaller_batch() -> None:
    found = fixes(Query(model="llama-3.1-8b", card="rtx-4090", seq=131072, batch=8))
    by_kind = {f.kind.value: f for f in found}
    assert "shorter_context" in by_kind
    assert by_kind["shorter_context"].query.seq is not None and by_kind["shorter_context"].query.seq < 131072


def test_no_fixes_when_it_fits() -> None:
    assert fixes(Query(model="qwen2.5-0.5b", card="h100-sxm")) == []


def test_hopeless_job_gets_a_combined_multi_card_fix() -> None:
    found = fixes(Query(task=Task.FINETUNE, method=Method.FULL, model="llama-3.1-70b", card="rtx-4090"))
    assert found and found[-1].kind == "combined" and "more_cards" in found[-1].changes


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenarios(name: str) -> None:
    advice = scenario(name, currency=Currency.CNY)
    assert advice.name == name
    if name == "vision":
        assert "vision_not_estimated" in advice.notes and advice.cards
        return
    assert advice.checks and advice.plans


def test_learning_scenario_flags_13b_fp16_as_loose() -> None:
    advice = scenario("learning")
    check = {c.label: c for c in advice.checks}["13b_inference_fp16"]
    assert check.verdict is Fit.NO and not check.holds
    assert check.need_bytes > check.capacity_bytes
    assert "loose_13b_fp16" in advice.notes


def test_pretraining_scenario_plans_use_8_cards() -> None:
    advice = scenario("pretraining")
    assert all(p.count == 8 and p.memory_gib >= 80 for p in advice.plans)


def test_unknown_scenario() -> None:
    with pytest.raises(ValueError):
        scenario("cooking")


def test_estimate_json_has_speed_and_cost_with_a_card() -> None:
    data: dict[str, Any] = estimate_json(
        estimate(Query(task=Task.FINETUNE, model="llama-3.1-8b", card="a100-80gb-sxm", tokens=1e9))
    )
    assert data["speed"]["training_hours"] > 0 and data["speed"]["mfu"]
    assert data["cost"]["currency"] == "USD" and data["cost"]["price"]["date"] and data["cost"]["total"] > 0
    inference: dict[str, Any] = estimate_json(estimate(Query(model="llama-3.1-8b", card="h100-sxm")))
    assert inference["speed"]["decode_tokens_per_s"] > 0 and inference["speed"]["ttft_s"] > 0
    assert inference["cost"]["per_million_tokens"] > 0
    assert "speed" not in estimate_json(estimate(Query(model="llama-3.1-8b")))


def test_plan_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert plan_command("微调qwen2.5 7b 10亿token 最便宜的方案", as_json=True, lang=None) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["currency"] == "CNY" and data["sort"] == "cost" and data["plans"]


def test_plan_command_text_and_speed_sort(capsys: pytest.CaptureFixture[str]) -> None:
    assert plan_command("fastest way to serve llama 3.1 8b", as_json=True, lang="en") == 0
    assert json.loads(capsys.readouterr().out)["sort"] == "speed"
    assert plan_command("cheapest way to serve llama 3.1 8b", as_json=False, lang="en") == 0
    out = capsys.readouterr().out
    assert "cheapest first" in out


def test_plan_command_without_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert plan_command("hello", as_json=False, lang=None) == 2
    assert "which model" in capsys.readouterr().err


def test_every_fix_kind_has_one_row_in_order_with_its_button() -> None:
    from core.advisor.fix_kinds import FIX_TABLE, FixKind

    assert [spec.kind for spec in FIX_TABLE] == list(FixKind)
    found = fixes(Query(model="llama-2-13b", card="rtx-4090", precision=Precision.FP16))
    actions = {f.kind.value: f.action for f in found}
    assert actions["int4"] == "precision=int4" and actions["more_cards"] == "gpus=2"
