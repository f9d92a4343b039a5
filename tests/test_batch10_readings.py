"""What the tenth answer corpus (tests/corpus/answers_batch10.toml) found gpufit misreading or answering
wrong, each checked with sibling phrasings so the rule is tested, not the one sentence that exposed it."""

from __future__ import annotations

from typing import Any

import pytest

from core.parser import parse
from core.query import Query


def _query(text: str, previous: Query | None = None) -> dict[str, Any]:
    parsed = parse(text, previous=previous)
    assert parsed.query is not None, text
    return parsed.query.model_dump(exclude_none=True)


# -- a budget with its period between the word and the amount ------------------------------------------------
@pytest.mark.parametrize(
    ("text", "amount", "period"),
    [
        ("预算每月5000，想7x24跑 qwen2.5-72b int4 推理，租啥卡", 5000, "month"),
        ("预算一天 80 块 推理 qwen3-32b int4", 80, "day"),
        ("budget per month 3000 usd, keep llama 3.1 70b running", 3000, "month"),
        ("预算每月3000元，想7x24部署一个qwen3-14b", 3000, "month"),
    ],
)
def test_a_budget_keeps_its_period_said_before_the_amount(text: str, amount: float, period: str) -> None:
    q = _query(text)
    assert q["budget"] == amount and q["budget_period"] == period


# -- a monthly price said after its period ('一个月 1.2万') --------------------------------------------------
@pytest.mark.parametrize(
    ("text", "monthly", "hourly"),
    [
        ("包月 h20 一个月 1.2万，按量 25块一小时，我们每天跑 14 小时，选哪个", 12000, 25),
        ("4090 包月 每个月 1100，按量 1.98一小时，每天8小时", 1100, 1.98),
        ("3090 包月950一个月，按量1.58一小时，我每天跑20小时 哪个划算", 950, 1.58),
    ],
)
def test_a_monthly_price_after_its_period_is_stated(text: str, monthly: float, hourly: float) -> None:
    q = _query(text)
    assert q["stated_monthly_price"] == monthly and q["stated_hourly_price"] == hourly


def test_requests_an_hour_are_no_hourly_price() -> None:
    q = _query("4090 按量还是包月，每小时3600个请求，qwen3-8b")
    assert "stated_hourly_price" not in q and q["requests_per_s"] == 1


# -- a billing follow-up weighs the price it states on the chat's card and hours -----------------------------
def test_a_billing_follow_up_keeps_the_card_and_hours() -> None:
    first = parse("4090 按量 1.98一小时 跑 qwen3-14b 推理，每天开8小时 一个月多少钱").query
    parsed = parse("那包月 1100 划算吗", previous=first)
    assert parsed.intent.value == "billing" and parsed.query is not None
    q = parsed.query
    said = (q.card, q.hours_per_day, q.stated_hourly_price, q.stated_monthly_price)
    assert said == ("rtx-4090", 8, 1.98, 1100)


# -- a headcount is the concurrency only when no concurrency is said -----------------------------------------
@pytest.mark.parametrize(
    ("text", "batch"),
    [
        ("内部知识库 200 人用，同时在线大概 30 个，qwen2.5-72b int4，8k 上下文，两张 a800 够不够", 30),
        ("公司 500 人使用，并发 40，qwen3-32b 两张 h100", 40),
        ("120 users, about 15 at once, serve qwen2.5-14b on an l40s", 15),
    ],
)
def test_the_concurrency_said_beats_the_headcount(text: str, batch: int) -> None:
    assert _query(text)["batch"] == batch


@pytest.mark.parametrize(
    ("text", "users"),
    [("50 users on qwen2.5-7b with one 4090", 50), ("200 人用 qwen3-14b 两张4090 够吗", 200)],
)
def test_a_headcount_alone_is_people_not_the_concurrency(text: str, users: int) -> None:
    # the share of them at once is sized from it (core/advisor/traffic.py, data/jobs.toml [traffic])
    query = Query.model_validate(_query(text))
    assert query.users == users and (query.batch is None or "batch" in query.defaulted)


# -- 'on A10s — how many?' asks for a count ------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "we expect 5 req/s at peak, 2k prompt + 400 output tokens, Llama 3.1 8B on A10s — how many?",
        "Qwen2.5-14B for 30 concurrent users on L40S, how many do we need?",
    ],
)
def test_a_bare_how_many_after_a_card_asks_a_count(text: str) -> None:
    assert parse(text).intent.value == "cards_needed"


def test_how_many_users_is_no_card_count() -> None:
    assert parse("qwen2.5-7b on an a10, how many users can it serve").intent.value != "cards_needed"


# -- 'how many such sequences' is a serving question ---------------------------------------------------------
def test_how_many_sequences_is_served() -> None:
    q = _query("Mistral Nemo 12B at its full 128k context on one H100 80GB, bf16 — how many such sequences?")
    assert q["runtime"] == "vllm"


# -- TGI is a runtime ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "TGI on 2x A10 for Mistral Nemo 12B in bf16 with 16k context",
        "用 text-generation-inference 部署 qwen2.5-7b 单卡 4090",
        "tgi 跑 llama3.1 8b l4 行吗",
    ],
)
def test_tgi_is_read_as_the_runtime(text: str) -> None:
    assert _query(text)["runtime"] == "tgi"


# -- an engine that prefills in chunks never holds a seq² score matrix ----------------------------------
def test_chunked_prefill_scores_one_chunk_against_the_context() -> None:
    """DeepSeek-R1 has no SDPA path in transformers (eager MLA), but KTransformers / llama.cpp prefill 512
    tokens at a time: their scores are 512 × 4,096 per head, not 4,096² (it was 20 GiB of activations, and
    "360 × RTX 4090" as the alternative)."""
    from core.estimator import estimate

    chunked, whole = (
        parse(f"{engine} deepseek-r1 q4 4090 上下文4096").query
        for engine in ("ktransformers", "transformers")
    )
    assert chunked is not None and whole is not None
    gib = 2**30
    assert estimate(chunked).breakdown.activations < 4 * gib
    assert estimate(whole).breakdown.activations > 16 * gib
