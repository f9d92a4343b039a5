"""An RL or preference run reads as one in the text, not only in the JSON.

The title names the algorithm and the models it holds (policy, reference, rollout; 策略模型, 参考模型, rollout
in Chinese) are listed, in both languages, for "how many cards" answers too."""

from __future__ import annotations

import pytest

from bot.answer import answer


@pytest.mark.parametrize(
    ("question", "algorithm", "roles"),
    [
        ("用verl做grpo训练qwen2.5-7b 需要几张卡", "GRPO", ("策略模型", "参考模型", "rollout")),
        ("how many A100s for DPO full fine-tuning of qwen2.5 7b with llama-factory?", "DPO", ("policy",)),
    ],
)
def test_rl_cards_needed_text_names_the_algorithm_and_its_models(
    question: str, algorithm: str, roles: tuple[str, ...]
) -> None:
    reply = answer(question)
    assert reply.kind == "cards_needed"
    assert reply.facts["rl"] is not None
    first_line = reply.html.splitlines()[0]
    assert algorithm in first_line
    for role in roles:
        assert role in reply.html
