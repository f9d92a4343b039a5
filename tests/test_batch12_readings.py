"""What the twelfth answer corpus (tests/corpus/answers_batch12.toml) found gpufit misreading or answering
wrong, each checked with sibling phrasings so the rule is tested, not the one sentence that exposed it."""

from __future__ import annotations

from typing import Any

import pytest
from test_answer_corpus import ask_json

from core.parser import parse
from core.parser.market import read_deadline
from core.query import Query


def _query(text: str, previous: Query | None = None) -> dict[str, Any]:
    parsed = parse(text, previous=previous)
    assert parsed.query is not None, text
    return parsed.query.model_dump(exclude_none=True)


# -- a hyphen glued to a word joins a compound ('batch-1'), a spaced minus is a minus ('batch -4') -----------
@pytest.mark.parametrize(
    "text",
    [
        "Batch-1 check: Mixtral 8x7B in FP8 on a single H100 with TensorRT-LLM — tokens per second?",
        "batch-1 decode speed of llama 3.1 8b on a 4090",
        "a batch-64 decode of qwen2.5-7b on an h100, how fast?",
    ],
)
def test_a_hyphenated_batch_is_no_negative_batch(text: str) -> None:
    assert not parse(text).rejected, text


@pytest.mark.parametrize("text", ["qwen2.5-7b batch -4 on a 4090", "qwen2.5-7b batch=-4 on a 4090"])
def test_a_spaced_minus_is_still_refused(text: str) -> None:
    rejected = parse(text).rejected
    assert rejected and rejected[0].what == "batch", text


# -- a time to finish within ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "hours"),
    [
        ("一周内要预训练完一个 1.5b 的模型", 168),
        ("3 天之内要把 qwen3-8b 全参微调跑完", 72),
        ("24小时内训完", 24),
        ("两周内", 336),
        ("月底前（还有 10 天）要把 llama-3.1-70b 训完", 240),
        ("we need lora done within 24 hours", 24),
        ("we need it in under 24 hours", 24),
        ("and if we need it done in 2 days?", 48),
        ("pretrain a 70b model on 2t tokens in 60 days?", 1440),
        ("by tomorrow morning, about 12 hours from now", 12),
    ],
)
def test_a_deadline_is_read(text: str, hours: float) -> None:
    assert read_deadline(text) == hours


@pytest.mark.parametrize(
    "text",
    [
        "4090 + 16g内存",
        "每天跑 10 小时",
        "连续跑两周训练",
        "a100 按天租 150 一天",
        "how many hours a day do you run it",
    ],
)
def test_no_deadline_where_none_is_set(text: str) -> None:
    assert read_deadline(text) is None


def test_a_deadline_in_hours_is_no_budget() -> None:
    q = _query("We need LoRA on Qwen2.5-72B over 300M tokens done within 24 hours. How many A100 80GB?")
    assert "budget" not in q and q["deadline_hours"] == 24


def _cluster(*turns: str) -> tuple[dict[str, Any], str]:
    previous: Query | None = None
    data: dict[str, Any] = {}
    for turn in turns:
        data, remembered, _ = ask_json(turn, previous)
        previous = remembered or previous
    cluster = data["answer"].get("cluster")
    assert cluster is not None, turns
    return cluster, data["answer"]["text"]


@pytest.mark.parametrize(
    ("turns", "deadline"),
    [
        (("一周内要预训练完一个 1.5b 的模型，300B token，用 h100 要几张",), 168),
        (("I must fully fine-tune Llama 3.1 8B on 1B tokens within 12 hours. How many H100s?",), 12),
        (("3 天之内要把 qwen3-8b 全参微调 20亿 token 跑完，租 a800 要几张",), 72),
        (("How many 8x H200 nodes to pretrain a 70B model on 2T tokens in 60 days?",), 1440),
        (
            (
                "Full fine-tune Qwen2.5-14B on 2B tokens — how long on 8x A100 80GB?",
                "we need it in under 24 hours — how many GPUs then?",
            ),
            24,
        ),
    ],
)
def test_a_deadline_sizes_the_cluster_to_finish_by_then(turns: tuple[str, ...], deadline: float) -> None:
    cluster, text = _cluster(*turns)
    assert cluster["deadline_hours"] == deadline and cluster["meets_deadline"] is True
    assert cluster["hours"] <= deadline
    assert "within a month" not in text and "一个月内" not in text


def test_a_deadline_the_count_asked_meets_keeps_the_count() -> None:
    cluster, text = _cluster("月底前（还有 10 天）要把 llama-3.1-70b 全参 sft 5B token 训完，用 16 张 h800")
    assert cluster["gpus"] == 16 and cluster["asked"] and cluster["meets_deadline"] is True
    assert "能在你给的 10 天内跑完" in text


def test_the_smallest_cluster_for_a_deadline_is_the_smallest() -> None:
    """Half the nodes (or the next smaller power of two inside a node) would miss the deadline."""
    text = "How many 8x H200 nodes to pretrain a 70B model on 2T tokens in 60 days?"
    cluster, _ = _cluster(text)
    fewer = cluster["gpus"] - 8
    smaller, _ = _cluster(f"{fewer // 8} nodes of 8x H200: how long to pretrain a 70B model on 2T tokens?")
    assert smaller["gpus"] == fewer and smaller["hours"] > 1440


# -- RL counts and lengths said in words --------------------------------------------------------------------
def test_generations_and_completion_lengths_in_words() -> None:
    q = _query("GRPO with Unsloth on Llama 3.2 3B, QLoRA, on a T4 — 6 generations, 512-token completions.")
    assert q["num_generations"] == 6 and q["completion_tokens"] == 512
    first = parse("GRPO with TRL on Qwen2.5-3B, LoRA, one A10G, 8 generations").query
    q = _query("and with num_generations 16 and 1024-token completions?", previous=first)
    assert q["num_generations"] == 16 and q["completion_tokens"] == 1024 and q["model"] == "qwen2.5-3b"


# -- nodes with their cards in all ('two DGX B200 nodes (16 GPUs)') ------------------------------------------
@pytest.mark.parametrize(
    ("text", "gpus", "nodes"),
    [
        ("Two DGX B200 nodes (16 GPUs, InfiniBand): full fine-tune of Llama 3.1 405B — does it fit?", 16, 2),
        ("two H100 nodes with 8 GPUs each, full fine-tune llama 3.1 70b", 16, 2),
        ("两台 h100 服务器 每台 8 卡 训练 qwen2.5-72b", 16, 2),
    ],
)
def test_nodes_with_a_card_name_between(text: str, gpus: int, nodes: int) -> None:
    q = _query(text)
    assert (q["gpus"], q["nodes"]) == (gpus, nodes)


# -- a headcount of people by what they are, and people online times each one's rate -----------------------
@pytest.mark.parametrize(
    ("text", "users"),
    [
        ("120 engineers share a coding assistant on Qwen2.5-32B AWQ, 16k context each. How many H100s?", 120),
        ("300 employees will use qwen2.5-14b for a knowledge base, how many l40s", 300),
        ("公司 300 名员工 用 qwen2.5-14b 做知识库 要几张 l40s", 300),
        ("80 个工程师 用 qwen2.5-coder-7b 写代码 一张 4090 够吗", 80),
    ],
)
def test_a_headcount_of_people(text: str, users: int) -> None:
    q = _query(text)
    assert q["users"] == users and "batch" not in q


@pytest.mark.parametrize(
    ("text", "per_s"),
    [
        ("在线用户 300 人，平均每人每分钟发一条，每条回复 200 token，glm-4-9b-0414，4090 要几张", 5.0),
        ("300 users online, each sends 2 messages per minute, llama 3.1 8b on l40s — how many?", 10.0),
        ("同时在线 60 人 每人每小时问 30 次 qwen2.5-7b 4090 够吗", 0.5),
    ],
)
def test_people_online_times_their_rate(text: str, per_s: float) -> None:
    q = _query(text)
    assert q["requests_per_s"] == pytest.approx(per_s) and "batch" not in q


def test_a_checklist_field_of_users_at_once() -> None:
    q = _query("Checklist:\n- model: Llama 3.1 8B\n- job: serve with vLLM\n- GPU: 1x L4\n- users at once: 10")
    assert q["batch"] == 10


# -- items counted before their noun ('给 1000 万条文本做向量') -------------------------------------------
def test_items_counted_before_their_noun() -> None:
    text = "qwen3-embedding-8b 在一张 4090 上给 1000 万条文本做向量，每条 500 token，要多久"
    data, _, _ = ask_json(text, None)
    assert data["query"]["items"] == 10_000_000 and data["answer"]["speed"]["hours"] > 100


# -- a reserved / yearly price the question states, weighed before the price list's monthly term -------------
def _billing(*turns: str) -> dict[str, Any]:
    previous: Query | None = None
    data: dict[str, Any] = {}
    for turn in turns:
        data, remembered, _ = ask_json(turn, previous)
        previous = remembered or previous
    facts: dict[str, Any] = data["answer"]["billing"]
    return facts


@pytest.mark.parametrize(
    ("turns", "kind", "break_even", "best"),
    [
        (("4090 包年 9000 块，按量 1.9 一小时，每天用 6 小时，包年划算吗",), "reserved", 13.0, "on-demand"),
        (
            ("H100 at $2.49/h on demand vs a 3-month commitment at $1.85/h. We use it ~14h a day. Which?",),
            "reserved",
            17.8,
            "on-demand",
        ),
        (
            ("4090 按量 2 块一小时，lora 微调 qwen2.5-7b 1亿 token 多少钱", "换成包天 40 块呢"),
            "daily",
            20.0,
            None,
        ),
        (("a800 按天租 150 一天，按量 8 块一小时，我每天跑 16 小时，选哪个",), "daily", 18.8, "on-demand"),
    ],
)
def test_the_term_the_question_prices_is_the_one_weighed(
    turns: tuple[str, ...], kind: str, break_even: float, best: str | None
) -> None:
    facts = _billing(*turns)
    assert facts["break_even_kind"] == kind and facts["break_even_hours_per_day"] == pytest.approx(break_even)
    if best is not None:
        assert facts["kind"] == best


def test_a_commitment_bills_around_the_clock() -> None:
    facts = _billing("H100 at $2.49/h on demand vs a 3-month commitment at $1.85/h. We'd use it 14h a day.")
    reserved = next(o for o in facts["options"] if o["kind"] == "reserved")
    assert reserved["stated"] and reserved["month_cost"] == pytest.approx(1.85 * 24 * 30)


# -- a working day said by the clock ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "hours"),
    [
        ("a100 按量 6.5 一小时，我们只有工作日 9 点到 18 点开，包月 2800 划算吗", 9),
        ("4090 包月还是按量，早上9点到晚上6点用", 9),
        ("A100 monthly or hourly? we run it 9am to 6pm", 9),
        ("H100 hourly vs monthly, strictly 9-to-5", 8),
    ],
)
def test_hours_a_day_by_the_clock(text: str, hours: float) -> None:
    assert _query(text)["hours_per_day"] == hours


# -- a batch of requests with their lengths: prompts at the prefill's rate, replies batched ------------------
@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        # 1e5 × 1,500 prompt tokens × 2 × 72.7e9 = 2.2e19 FLOPs on 4 × 989 TFLOPS at 0.4–0.6 ≈ 2.5–3.8 h
        (
            "用 qwen2.5-72b 当 judge 给 10 万条回答打分，每条输入 1500 token 输出 10 token，4 张 h100 要多久",
            1.5,
            8,
        ),
        (
            "score 100k answers with qwen2.5-72b as judge, 1500 tokens in, 10 out each, 4x h100: how long?",
            1.5,
            8,
        ),
    ],
)
def test_a_batch_of_prompts_is_a_prefill_job(text: str, low: float, high: float) -> None:
    data, _, _ = ask_json(text, None)
    answer = data["answer"]
    assert answer.get("traffic") is None  # a batch to run, not traffic to size
    assert low <= answer["time"]["hours"] <= high
    assert answer["speed"]["batch"] > 1  # the engine runs what its KV pool holds at once


def test_a_budget_kept_running_around_the_clock_is_a_budget() -> None:
    parsed = parse(
        "We have $2,000 a month. What's the biggest model we can serve 24/7 in int4, and on which card?"
    )
    assert parsed.intent == "budget" and parsed.query is not None
    assert (parsed.query.budget, parsed.query.budget_period) == (2000, "month")
    # other hours a day with a price stay a billing question
    assert parse("4090 包月 1500，按量 2.2 一小时，我们每天跑 10 小时，选哪个").intent == "billing"
