"""Answer bugs found by the corpus (tests/corpus/), each fixed where it starts."""

from __future__ import annotations

from bot.answer import answer
from core.parser import parse


def test_a_count_of_responses_is_not_a_response_length() -> None:
    """tc-18: '1 million responses of 500 tokens' is 1M samples of 500 tokens (a 500M-token run), not
    responses 1 token long; a length is said with its unit ('300 tokens out', '输出300 token')."""
    query = parse("cost to generate 1 million responses of 500 tokens with llama 3.1 8b on one L40S?").query
    assert query is not None
    assert (query.samples, query.seq, query.response_tokens) == (1_000_000, 500, None)
    traffic = parse("部署qwen2.5-7b 一天10万次请求 每次输入1000 token 输出300 token").query
    assert traffic is not None and (traffic.prompt_tokens, traffic.response_tokens) == (1000, 300)
    said = parse("serve llama 3.1 8b, 20 requests per second, 300 tokens out").query
    assert said is not None and said.response_tokens == 300


def test_the_run_of_a_million_responses_is_timed_and_priced() -> None:
    reply = answer(
        "cost to generate 1 million responses of 500 tokens with llama 3.1 8b on one L40S?", lang="en"
    )
    time, cost = reply.facts["time"], reply.facts["cost"]
    assert isinstance(time, dict) and time["tokens"] == 500_000_000 and 30 <= time["hours"] <= 180
    assert isinstance(cost, dict) and cost["total"]


def test_a_modded_board_is_priced_beside_its_stock_card() -> None:
    """fq-12: '4090 48G魔改版和原版价格差多少' names one card and 'the original': the FAQ compares the modded
    board with the stock card it is built from (data/cards.toml base), not the article's A100 pair."""
    reply = answer("4090 48G魔改版和原版价格差多少，值不值", lang="zh")
    assert reply.facts["faq"] == "vram_price"
    assert "RTX 4090 24GB" in reply.html and "RTX 4090 48GB (modded)" in reply.html
    assert "A100" not in reply.html
