"""A card count a serving engine cannot split the model over: vLLM and SGLang take a tensor-parallel size that
divides the attention heads (DeepSeek-V2-Lite has 16), so '6 cards' does not start as asked, and the answer
says so rather than printing a 6-way layout as if it ran. A card alias that reads like a size ('910B', the
Ascend 910B) after a count names the card, never a 910-billion-parameter model of the family before it."""

from __future__ import annotations

import pytest

from bot.answer import answer
from bot.render import html_to_terminal
from core.parser import parse
from core.registry import load_registry

WARNING_EN = "Tensor parallelism needs a card count that divides the model's attention heads"
WARNING_ZH = "张量并行要求卡数能整除模型的注意力头数"


@pytest.mark.parametrize(
    ("text", "card", "gpus"),
    [
        ("serve deepseek v2 lite on 6 910B with vllm, 8k context", "ascend-910b3", 6),
        ("serve deepseek v2 lite on 910B", "ascend-910b3", None),
        ("serve deepseek v2 lite on 6 H100", "h100-sxm", 6),
        ("用6张910B部署deepseek v2 lite", "ascend-910b3", 6),
    ],
)
def test_a_card_after_the_model_is_no_size_of_it(text: str, card: str, gpus: int | None) -> None:
    parsed = parse(text)
    assert parsed.query is not None and parsed.unknown_model is None, text
    assert (parsed.query.model, parsed.query.params_b) == ("deepseek-v2-lite", None), text
    assert (parsed.cards[:1], parsed.query.gpus) == ([card], gpus), text


def test_the_tensor_parallel_sizes_follow_the_heads() -> None:
    lite = next(m for m in load_registry().models if m.id == "deepseek-v2-lite")
    assert lite.heads == 16
    assert [size for size in range(1, 9) if lite.tensor_parallel_ok(size)] == [1, 2, 4, 8]


@pytest.mark.parametrize(
    ("text", "lang", "warned"),
    [
        ("serve deepseek v2 lite on 6 H100 with vllm", "en", True),
        ("serve deepseek v2 lite on 4 H100 with vllm", "en", False),
        ("用6张H100部署deepseek v2 lite，sglang", "zh", True),
        ("用8张H100部署deepseek v2 lite，sglang", "zh", False),
        ("run deepseek v2 lite on 6 3090s with llama.cpp", "en", False),  # layers split: any count runs
    ],
)
def test_an_uneven_tensor_parallel_count_is_said(text: str, lang: str, warned: bool) -> None:
    shown = html_to_terminal(answer(text, lang=lang).html)
    assert ((WARNING_EN if lang == "en" else WARNING_ZH) in shown) is warned, shown
