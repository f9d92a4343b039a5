"""The result sheet: recommendations keep its own safety margin, one budget reading throughout, the questions
a provider must answer (sized disk and RAM, transfer charges, region, the vendor's software stack), and cards
ordered for the user's market."""

from __future__ import annotations

import pytest

from bot.render import plain_text, render
from core import checklist as ck
from core.catalog import load_catalog


def _finish(lang: str, *answers: str) -> tuple[ck.ChecklistState, ck.ChecklistResult]:
    state = ck.start(lang)
    for text in answers:
        if text == "/skip":
            state = ck.skip(state)
            continue
        state, error = ck.answer_step(state, text)
        assert error is None, (text, error)
    while not state.done:
        state = ck.skip(state)
    return state, ck.result(state)


def _sheet(state: ck.ChecklistState, found: ck.ChecklistResult) -> str:
    return plain_text(render("checklist_result", state.lang, v=ck.result_view(found, state), mention=None))


JOBS = [
    ("en", ("serve llama 3.1 70b for users", "/skip", "/skip", "8k, 16 users")),
    ("en", ("full fine-tune", "qwen2.5 7b", "bf16", "4096, batch 8", "1b tokens")),
    ("zh", ("LoRA 微调", "qwen2.5 14b", "bf16", "4096，batch 4", "2万条样本，3轮")),
    ("en", ("inference", "qwen2.5 32b", "bf16", "32k, 8 users")),
]


@pytest.mark.parametrize(("lang", "answers"), JOBS)
def test_recommended_plans_keep_the_sheets_own_margin(lang: str, answers: tuple[str, ...]) -> None:
    _, found = _finish(lang, *answers)
    assert found.plans
    if not found.shortlist.margin_short:
        for plan in found.plans:
            assert plan.need_bytes * found.margin <= plan.capacity_bytes, plan.card


def test_a_plan_short_of_the_margin_is_tried_on_more_cards_rather_than_dropped() -> None:
    _, found = _finish("en", "full fine-tune", "qwen2.5 7b", "bf16", "4096, batch 8", "1b tokens")
    assert not found.shortlist.margin_short
    assert len(found.plans) >= 3
    assert any(plan.count > 1 for plan in found.plans)


def test_a_total_budget_for_serving_is_read_as_a_month_and_never_contradicted() -> None:
    """The issue's case: "nothing fits within ¥5,000" above plans at ¥886/month."""
    state, found = _finish(
        "zh", "部署对话服务", "qwen2.5 7b", "bf16", "8k，16 路并发", "每天 2 万次请求", "5000 元"
    )
    month = found.hours_per_day * found.days_per_month
    assert found.shortlist.budget_reading == "month" and found.shortlist.total_read_as_month
    monthly = [p.cost_per_hour * month for p in found.plans if p.cost_per_hour]
    assert any(cost <= 5000 for cost in monthly)
    assert not found.over_budget
    sheet = _sheet(state, found)
    assert "没有能装下" not in sheet and "按一个月的服务费用算" in sheet


@pytest.mark.parametrize(
    ("budget", "reading"), [("$2/h", "hour"), ("$3000 per month", "month"), ("$500 total", "total")]
)
def test_every_plan_is_judged_by_the_one_budget_reading(budget: str, reading: str) -> None:
    state, found = _finish("en", "lora", "qwen2.5 14b", "bf16", "4096, batch 4", "200M tokens", budget)
    short = found.shortlist
    assert short.budget_reading == reading
    for index, plan in enumerate(found.plans):
        cost = {
            "hour": plan.cost_per_hour,
            "month": (plan.cost_per_hour or 0) * found.hours_per_day * found.days_per_month or None,
            "total": plan.total_cost,
        }[reading]
        within = cost is not None and cost <= (state.answers.budget or 0)
        assert within == (index < short.within_budget), (plan.card, cost)
    assert found.over_budget == (short.within_budget == 0)


def test_provider_questions_size_the_disk_and_ram_and_ask_about_transfer_and_region() -> None:
    state, found = _finish("en", "full fine-tune", "qwen2.5 7b", "bf16", "4096, batch 8", "1b tokens")
    codes = [q.code for q in found.questions]
    assert {"disk", "ram", "transfer_charges", "region"} <= set(codes)
    needs = found.needs
    assert needs is not None
    assert needs.dataset_bytes == pytest.approx(3.3e9)  # 1B tokens × 3.3 bytes of text (data/speed.toml)
    assert needs.checkpoint_bytes == pytest.approx(found.estimate.trainable_params * 14)
    assert needs.disk_bytes > needs.model_files_bytes + needs.dataset_bytes + 2 * needs.checkpoint_bytes
    sheet = _sheet(state, found)
    assert "of local disk" in sheet and "checkpoints of" in sheet and "System RAM" in sheet


@pytest.mark.parametrize(("card", "code"), [("2x MI300X", "driver_rocm"), ("ascend 910b", "driver_cann")])
def test_amd_and_ascend_cards_get_their_own_stack_questions(card: str, code: str) -> None:
    state, found = _finish("en", "lora", "qwen2.5 7b", "/skip", "/skip", "/skip", "/skip", card)
    codes = [q.code for q in found.questions]
    assert code in codes and "driver_cuda" not in codes
    sheet = _sheet(state, found)
    assert ("ROCm" if code == "driver_rocm" else "CANN") in sheet


@pytest.mark.parametrize(("lang", "market"), [("en", "global"), ("zh", "cn")])
def test_cards_from_the_users_market_come_first(lang: str, market: str) -> None:
    _, found = _finish(lang, "lora", "qwen2.5 14b", "bf16", "4096, batch 4", "200M tokens")
    catalog = load_catalog()
    places = [market in catalog.by_id[p.card].markets for p in found.plans]
    assert places[0], found.plans[0].card
    assert places == sorted(places, reverse=True), "no card from another market ranks above one of yours"


def test_a_card_the_user_names_is_checked_whatever_its_market() -> None:
    _, found = _finish("en", "lora", "qwen2.5 7b", "/skip", "/skip", "/skip", "/skip", "H20")
    assert found.check is not None and found.check.card == "h20"


def test_a_skipped_precision_is_called_the_default_once() -> None:
    state, found = _finish("en", "serve llama 3.1 70b for users")
    sheet = _sheet(state, found)
    assert "Precision: the default (bf16)\n" in sheet and "(bf16) (default)" not in sheet
