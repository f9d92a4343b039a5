"""Issue 19: modded cards, billing kinds, platforms, budgets, traffic and clusters — the core pieces, each
against figures worked by hand from data/prices.toml and data/cards.toml."""

from __future__ import annotations

import pytest

from core.advisor.budget import check_budget, what_budget_buys
from core.advisor.cluster import cluster_for
from core.advisor.traffic import apply_traffic
from core.assessment import assess
from core.billing import billing_advice
from core.catalog import load_catalog
from core.cost import load_price_book
from core.parser import parse
from core.platforms import platform
from core.query import Currency, Query, Task


def test_modded_cards_keep_their_stock_chip() -> None:
    catalog = load_catalog()
    mod, stock = catalog.get("rtx-4090-48gb"), catalog.get("rtx-4090")
    assert mod.memory_gib == 48 and mod.modded and mod.base == "rtx-4090"
    assert (mod.bandwidth_gb_s, mod.bf16_tflops) == (stock.bandwidth_gb_s, stock.bf16_tflops)
    turing = catalog.get("rtx-2080-ti-22gb")
    assert turing.bf16_tflops == 0 and "turing" in turing.caveats and turing.memory_gib == 22
    assert catalog.get("rtx-3080-20gb").bandwidth_gb_s == catalog.get("rtx-3080").bandwidth_gb_s


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("4090 48G魔改版能跑qwen2.5 72b awq吗", "rtx-4090-48gb"),
        ("2080ti 22g 跑 qwen2.5-14b", "rtx-2080-ti-22gb"),
        ("2080ti魔改22g 能跑 qwen2.5-7b 吗", "rtx-2080-ti-22gb"),
        ("魔改3080 20g 能跑 qwen2.5-14b 吗", "rtx-3080-20gb"),
        ("can a modded 4090 48GB run Llama 3.1 70B in int4?", "rtx-4090-48gb"),
        ("4090 能跑 qwen2.5-7b 吗", "rtx-4090"),
    ],
)
def test_modded_cards_are_read_as_named(text: str, card: str) -> None:
    parsed = parse(text)
    assert parsed.query is not None and parsed.query.card == card
    assert parsed.intent.value == "fit"  # never the "can VRAM be upgraded?" FAQ


def test_the_upgrade_faq_still_answers_upgrade_questions() -> None:
    assert parse("我的4090显存能升级到48G吗").faq == "vram_upgrade"
    assert parse("can I mod my 4090 to 48GB?").faq == "vram_upgrade"


def test_monthly_vs_hourly_break_even() -> None:
    """AutoDL 4090: ¥1,052 a month vs ¥1.98/h → break-even 1052 / (30 × 1.98) = 17.7 h a day."""
    book = load_price_book()
    autodl = platform("autodl")
    light = billing_advice("rtx-4090", Currency.CNY, book, hours_per_day=8, asked="monthly", platform=autodl)
    assert light is not None
    assert light.break_even_hours_per_day == pytest.approx(17.7, abs=0.05)
    assert light.best.kind == "on-demand" and light.monthly_vs_hourly == (475.2, 1052)
    heavy = billing_advice("rtx-4090", Currency.CNY, book, hours_per_day=20, asked="monthly", platform=autodl)
    assert heavy is not None and heavy.best.kind == "monthly" and heavy.best.price == 1052


def test_spot_is_chosen_only_when_asked() -> None:
    book = load_price_book()
    asked = billing_advice("rtx-4090", Currency.CNY, book, asked="spot")
    assert asked is not None and asked.best.kind == "spot" and asked.best.price == 1.19


def test_a_monthly_budget_buys_cards_for_a_month() -> None:
    book = load_price_book()
    query = Query(budget=5000, budget_period="month", currency=Currency.CNY)
    bought = what_budget_buys(query, book, Currency.CNY)
    assert bought.within and bought.period == "month" and bought.options
    for option in bought.options:
        assert option.period_cost is not None and option.period_cost <= 5000
        assert option.count in (1, 2, 4, 8) and option.largest


def test_a_total_budget_is_checked_against_the_run() -> None:
    query = Query(task=Task.FINETUNE, params_b=7, tokens=1e8, budget=50, budget_period="total")
    assert check_budget(query, [(40.0, 2.0)], Currency.USD).within is True  # type: ignore[union-attr]
    assert check_budget(query, [(60.0, 2.0)], Currency.USD).within is False  # type: ignore[union-attr]
    assert check_budget(query, [], Currency.USD).within is False  # type: ignore[union-attr]


def test_traffic_becomes_concurrency_by_littles_law() -> None:
    """A day's 1.16 req/s average, at its busy hours' 4× (the 80/20 rule), × (0.5 s + 300 tokens at the card's
    per-stream speed) in flight; context = 1,000 + 300."""
    query = parse("一天10万次请求 每次输入1000 token 输出300 token 用qwen2.5-7b 要几张4090").query
    assert query is not None and query.requests_per_s == pytest.approx(100_000 / 86_400)
    sized, traffic = apply_traffic(query)
    assert traffic is not None and traffic.prompt_tokens == 1000 and traffic.response_tokens == 300
    assert sized.seq == 1300 and sized.batch == traffic.concurrent
    assert traffic.stream_tokens_per_s is not None
    assert traffic.peak_requests_per_s is not None
    assert traffic.peak_requests_per_s == pytest.approx(4 * 100_000 / 86_400, rel=1e-3)
    expected = traffic.peak_requests_per_s * (0.5 + 300 / traffic.stream_tokens_per_s)
    assert traffic.concurrent == pytest.approx(expected, abs=1.0)


def test_the_count_asked_is_the_cluster() -> None:
    query = parse("两台机器每台8张H100 全参微调70b 1B token").query
    assert query is not None and (query.gpus, query.nodes) == (16, 2)
    card = load_catalog().get("h100-sxm")
    job = assess(query, card, 16, book=load_price_book(), currency=Currency.USD)
    cluster = cluster_for(query, card, job, book=load_price_book(), currency=Currency.USD)
    assert cluster is not None and (cluster.gpus, cluster.nodes, cluster.gpus_per_node) == (16, 2, 8)
    assert cluster.hours is not None and cluster.gpu_hours == pytest.approx(cluster.hours * 16, rel=1e-3)
    assert cluster.interconnect == "nvlink" and cluster.between_nodes == "infiniband"


def test_a_month_long_job_gets_a_cluster_of_nodes() -> None:
    query = parse("pretrain a 7B model from scratch on 2T tokens using H100s").query
    assert query is not None
    card = load_catalog().get("h100-sxm")
    job = assess(query, card, 1, book=load_price_book(), currency=Currency.USD)
    cluster = cluster_for(query, card, job, book=load_price_book(), currency=Currency.USD)
    assert cluster is not None and not cluster.asked and cluster.hours is not None and cluster.hours <= 720
    assert cluster.gpus % 8 == 0 and cluster.nodes == cluster.gpus // 8


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("月预算3000元，想做DPO训练7B模型，用什么卡", "month"),
        ("月度预算3000元 微调7B用什么卡", "month"),
        ("日预算200元 微调7B用什么卡", "day"),
        ("预算3000元 微调7B用什么卡", "total"),
        ("周预算1000元 微调7B用什么卡", "week"),
        ("每周预算 1000 块，每周 lora 微调一次 qwen2.5-14b", "week"),
        ("a budget of $300 a week to serve llama 3.1 8b", "week"),
        ("$300 per week for serving qwen2.5-7b", "week"),
    ],
)
def test_a_budget_named_by_its_period_before_the_word_budget(text: str, period: str) -> None:
    """'月预算' is a monthly budget as '每月预算' is (as a total, a monthly ¥3,000 read '❌ not enough')."""
    query = parse(text).query
    assert query is not None and query.budget_period == period


@pytest.mark.parametrize(
    ("text", "price"),
    [
        ("pretrain a 1B model on 50B tokens with 8x H100, cost at $2.5 per GPU-hour?", 2.5),
        ("L40S at $2.10/h: serve Llama 3.1 8B, cost per million tokens?", 2.1),
        ("4090 按 2 块一小时算，lora 微调 qwen2.5-7b 1亿 token 多少钱", 2.0),
    ],
)
def test_a_rate_the_job_is_priced_at_is_a_price_not_a_budget(text: str, price: float) -> None:
    query = parse(text).query
    assert query is not None and query.stated_hourly_price == price and query.budget is None


def test_a_budget_per_hour_stays_a_budget() -> None:
    query = parse("budget under $2/hour, serve llama 3.1 8b").query
    assert query is not None and query.budget == 2 and query.stated_hourly_price is None


def test_a_fit_is_priced_at_the_hourly_price_the_user_states() -> None:
    """s12-bg-08: '$0.00069/s for an L40S' is $2.48 an hour, and the job's cost is counted at it, not at the
    list's median; the other cards keep their listed prices."""
    query = parse(
        "Per-second billing at $0.00069/s for an L40S: serving Llama 3.1 8B cost per million tokens?"
    ).query
    assert query is not None and query.stated_hourly_price is not None
    book = load_price_book()
    job = assess(query, load_catalog().get("l40s"), 1, book=book, currency=Currency.USD)
    assert (
        job.price is not None
        and job.price.stated
        and job.price.per_hour == round(query.stated_hourly_price, 4)
    )
    other = assess(query, load_catalog().get("l4"), 1, book=book, currency=Currency.USD)
    assert other.price is not None and not other.price.stated
