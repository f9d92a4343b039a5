"""What the thirteenth answer corpus (tests/corpus/answers_batch13.toml) found gpufit misreading, each checked
with sibling phrasings so the rule is tested, not the one sentence that exposed it."""

from __future__ import annotations

from typing import Any

import pytest

from core.answer_kind import AnswerKind
from core.parser import parse
from core.query import Query


def _query(text: str, previous: Query | None = None) -> dict[str, Any]:
    parsed = parse(text, previous=previous)
    assert parsed.query is not None, text
    return parsed.query.model_dump(exclude_none=True)


# -- a budget after a job: the job held to it, not a new 'what does it rent' -------------------------------
@pytest.mark.parametrize(
    ("job", "follow_up", "amount", "period"),
    [
        ("grpo 训 qwen2.5-7b，lora，单卡 a100 80g 够吗", "预算 500 块够吗", 500, "total"),
        (
            "openrlhf ppo 训 qwen2.5-1.5b 全参，两张 a100 80g",
            "每月预算 1 万块，这样租一个月够吗",
            10000,
            "month",
        ),
        ("LoRA on Qwen2.5-7B over 100M tokens on a 4090", "is $50 enough?", 50, "total"),
    ],
)
def test_a_budget_following_a_job_keeps_the_job(job: str, follow_up: str, amount: float, period: str) -> None:
    first = parse(job).query
    assert first is not None and first.model is not None
    parsed = parse(follow_up, previous=first)
    assert parsed.query is not None and parsed.query.model == first.model
    assert parsed.query.budget == amount and parsed.query.budget_period == period
    assert parsed.query.kind is not AnswerKind.BUDGET


def test_a_budget_alone_still_asks_what_it_rents() -> None:
    parsed = parse("预算每月 5000 元，能租什么卡")
    assert parsed.query is not None and parsed.query.kind is AnswerKind.BUDGET


# -- a budget's period said before the word budget ('Daily budget of $40') ----------------------------------
@pytest.mark.parametrize(
    ("text", "amount", "period"),
    [
        ("Daily budget of $40: serve Qwen2.5-14B around the clock", 40, "day"),
        ("weekly budget of $300 to serve qwen2.5-7b", 300, "week"),
        ("a monthly budget of $2000 for serving llama 3.1 8b", 2000, "month"),
        ("每天的预算是 200 块，跑 qwen2.5-7b 推理", 200, "day"),
    ],
)
def test_a_budget_period_before_the_word_budget(text: str, amount: float, period: str) -> None:
    q = _query(text)
    assert q["budget"] == amount and q["budget_period"] == period and "billing" not in q


# -- the length of each RL generation ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "generations", "completion"),
    [
        ("GRPO with TRL on Qwen2.5-1.5B, one A100 80GB, 8 generations of 1024 tokens", 8, 1024),
        ("unsloth grpo 训 qwen3-4b，每个 prompt 生成 4 条，每条 512 token", 4, 512),
        ("GRPO qwen2.5-7b, 16 generations, each 2k tokens", 16, 2048),
    ],
)
def test_each_generations_length(text: str, generations: int, completion: int) -> None:
    q = _query(text)
    assert q["num_generations"] == generations and q["completion_tokens"] == completion


def test_a_prompt_length_is_not_a_completion_length() -> None:
    q = _query("GRPO qwen2.5-7b, prompts of 512 tokens, 8 generations")
    assert "completion_tokens" not in q


# -- a runtime ruled out is not the runtime named ----------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "runtime"),
    [
        ("不用 vllm，就用 transformers 的 generate，qwen2.5-7b 在 a10 上多快", "transformers"),
        ("llama.cpp instead of ollama, qwen2.5-7b on a 3090", "llama.cpp"),
        ("serve qwen2.5-7b with sglang rather than vllm on an h100", "sglang"),
    ],
)
def test_a_runtime_ruled_out_is_not_named(text: str, runtime: str) -> None:
    assert _query(text)["runtime"] == runtime


# -- hours a day said with the daytime or working days ----------------------------------------------------
@pytest.mark.parametrize(
    ("text", "hours"),
    [
        ("一个月只想花 2000 块，跑 qwen3-8b 推理服务，白天开 10 小时", 10),
        ("4090 按量 2 块一小时，每个工作日用 8 小时，包月划算吗", 8),
    ],
)
def test_hours_a_day_in_daytime_words(text: str, hours: float) -> None:
    assert _query(text)["hours_per_day"] == hours


# -- a rent said as a price, not a budget ------------------------------------------------------------------
def test_a_rent_is_a_price() -> None:
    q = _query("买一张 4090 大概 1.6 万，租的话 2 块一小时，我们每天用 6 小时，多久回本")
    assert q["stated_hourly_price"] == 2 and "budget" not in q


# -- 'llama.cpp' names a runtime, not the Llama family -----------------------------------------------------
@pytest.mark.parametrize("text", ["换成 llama.cpp 呢", "switch to llama.cpp?"])
def test_llama_cpp_keeps_the_chats_model(text: str) -> None:
    first = parse("4090 跑 qwen3-14b q4 用 ollama 多快").query
    parsed = parse(text, previous=first)
    assert parsed.query is not None and parsed.query.model == "qwen3-14b"
    assert parsed.query.runtime == "llama.cpp"


# -- a billing follow-up keeps the chat's job ----------------------------------------------------------------
def test_a_billing_follow_up_keeps_the_job() -> None:
    first = parse("qwen2.5-72b awq 推理，单卡 a100 80g 能跑吗").query
    parsed = parse("按量 6 块一小时，每天开 10 小时，一个月多少钱", previous=first)
    assert parsed.query is not None and parsed.query.kind is AnswerKind.BILLING
    assert parsed.query.model == "qwen2.5-72b" and parsed.query.stated_hourly_price == 6
    again = parse("那 h100 呢", previous=parsed.query)
    assert again.query is not None and again.query.model == "qwen2.5-72b"


# -- money is not a prompt length -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "budget"),
    [
        ("We have $300 in total. LoRA on Llama 3.1 8B over 200M tokens", 300),
        ("¥500 in all, qwen2.5-7b lora", 500),
    ],
)
def test_money_in_total_is_not_a_prompt(text: str, budget: float) -> None:
    q = _query(text)
    assert q["budget"] == budget and "prompt_tokens" not in q


def test_tokens_in_and_out_are_still_lengths() -> None:
    q = _query("1,500 tokens in and 300 out, qwen2.5-7b on L40S")
    assert (q["prompt_tokens"], q["response_tokens"]) == (1500, 300)


# -- EXL2 weights at their own bits per weight ------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "bits"), [("Llama 3.3 70B at 2.5 bpw, exllamav2", 2.5), ("exl2 6.5bpw qwen2.5-7b", 6.5)]
)
def test_exl2_bits_per_weight_size_the_weights(text: str, bits: float) -> None:
    from core.estimator import estimate

    parsed = parse(text)
    assert parsed.query is not None and parsed.query.bits_per_weight == bits
    result = estimate(parsed.query)
    model_params = {"llama-3.3-70b": 70.6e9, "qwen2.5-7b": 7.61e9}[str(parsed.query.model)]
    expected = model_params * bits / 8  # an EXL2 file is params × bpw ÷ 8 bytes
    assert abs(result.breakdown.weights - expected) / expected < 0.03


# -- a term's price at the end of a sentence -----------------------------------------------------------------
def test_a_term_price_before_a_full_stop() -> None:
    q = _query(
        "H100 at $2.20/h on-demand, or a monthly plan at $1,250. We run it 20 hours a day. Which is cheaper?"
    )
    assert q["stated_monthly_price"] == 1250 and q["stated_hourly_price"] == 2.2 and "budget" not in q


# -- the share of the users online who wait at once ----------------------------------------------------------
def test_a_share_of_the_users_online_at_once() -> None:
    q = _query("小程序高峰同时在线 1000 人，大概 5% 的人同时在等回复，qwen2.5-7b，l20 要几张")
    assert q["batch"] == 50


# -- verl's update holds a token-capped micro-batch, not the whole step --------------------------------------
def test_verl_grpo_update_holds_one_micro_batch() -> None:
    """s12-rl-01: 16 responses of 8k tokens were all held at once (243 GiB a card, a false 'no'); verl packs
    ≤ 16,384 tokens a card per micro-batch and accumulates the rest, so one 8.7k-token sequence is held. The
    step's time still counts all 16 (jobs/rl.update_step)."""
    from core.jobs import rl

    query = parse("verl 跑 grpo，qwen2.5-7b 全参，8 卡 h100，rollout n=16，回答长度 8k").query
    assert query is not None and query.runtime == "verl"
    filled = query.with_defaults()
    assert rl.update_step(filled)[0] == 16
    assert rl.held_in_update(filled)[0] == 1
    trl = parse("trl grpo，qwen2.5-7b 全参，8 卡 h100，num_generations=16，回答长度 8k").query
    assert trl is not None and rl.held_in_update(trl.with_defaults())[0] == 16  # TRL: no such cap here
