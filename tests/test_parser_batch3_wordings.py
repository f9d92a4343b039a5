"""Wordings the third answer corpus (tests/corpus/answers_batch3.toml) found gpufit misreading, each checked
with sibling phrasings so the rule is tested, not the one sentence that exposed it."""

from __future__ import annotations

import pytest

from core.data_amount import data_tokens
from core.parser import Intent, parse
from core.speed import load_speed_constants


@pytest.mark.parametrize(
    ("text", "chars"),
    [
        ("10w条数据，每条大概2000字中文，qlora训qwen2.5-14b，一张4090", 2000),
        ("5万条样本 平均每条800字 lora qwen2.5-7b 4090 多久", 800),
        ("2万条对话，每条约3千字，全参 qwen2.5-1.5b a100", 3000),
    ],
)
def test_a_sample_given_in_chinese_characters_becomes_tokens(text: str, chars: int) -> None:
    parsed = parse(text)
    assert parsed.query is not None
    assert parsed.query.sample_chars == chars
    data = load_speed_constants().data
    counted = data_tokens(parsed.query)
    assert counted is not None and counted.sample_chars == chars
    assert counted.sample_tokens == round(chars * data.bytes_per_zh_character / data.bytes_per_token_zh)


def test_bytes_are_not_characters() -> None:
    parsed = parse("1万条数据 每条2000字节 lora qwen2.5-7b 4090")
    assert parsed.query is not None and parsed.query.sample_chars is None


def test_tokens_said_win_over_characters() -> None:
    parsed = parse("1万条数据 每条2000字 2k token lora qwen2.5-7b 4090")
    assert parsed.query is not None
    counted = data_tokens(parsed.query)
    assert counted is not None and counted.sample_chars is None and counted.sample_tokens == 2048


@pytest.mark.parametrize(
    ("text", "faq"),
    [
        ("租的A10 24G能不能扩成48G显存", "vram_upgrade"),
        ("4090能改成48g吗", "vram_upgrade"),
        ("how come a 48GB L40S rents for twice what a 24GB 4090 does?", "vram_price"),
        ("why does an 80GB A100 rent for double the price of the 40GB one?", "vram_price"),
    ],
)
def test_faq_wordings(text: str, faq: str) -> None:
    parsed = parse(text)
    assert (parsed.intent, parsed.faq) == (Intent.FAQ, faq)


@pytest.mark.parametrize(
    "text", ["interlm2.5-7b 用A10部署", "internml2.5 20b 推理 4090", "intern lm2.5-7b on an L4"]
)
def test_internlm_typos(text: str) -> None:
    parsed = parse(text)
    assert parsed.query is not None and (parsed.query.model or "").startswith("internlm2.5")


@pytest.mark.parametrize(
    "text",
    ["Can you recommend a good book on machine learning?", "推荐几本深度学习的书", "any good novels lately?"],
)
def test_books_are_out_of_scope(text: str) -> None:
    assert parse(text).intent is Intent.OUT_OF_SCOPE


def test_a_student_still_gets_the_learning_scenario() -> None:
    parsed = parse("I'm a student learning LLMs, which GPU should I rent?")
    assert (parsed.intent, parsed.scenario) == (Intent.SCENARIO, "learning")


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("a30适合部署7b模型吗", Intent.CARD_ADVICE),
        ("L4适不适合跑13b左右的模型", Intent.CARD_ADVICE),
        ("a30适合跑个7b模型吗", Intent.FIT),
        ("a30能跑7b模型吗", Intent.FIT),
    ],
)
def test_a_size_class_in_chinese_is_card_advice(text: str, intent: Intent) -> None:
    assert parse(text).intent is intent
