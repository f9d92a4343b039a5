"""A serving engine a little short of its share of the card is offered the larger share first: vLLM's
--gpu-memory-utilization 0.95 (its first default, vllm-project/vllm#1018) runs Qwen2.5-72B on 2 × H100,
which at the default 0.9 does not start (the profile run's sampler peak, data/calibration.toml [vllm]). The
same job, no quality or speed cost; a share the question states is kept."""

from __future__ import annotations

from typing import Any

import pytest

from bot.answer import answer, apply_action
from core.query import Query


def _answer(question: str, lang: str = "en") -> tuple[dict[str, Any], Query | None]:
    reply = answer(question, lang=lang)
    return dict(reply.to_json()), reply.query


@pytest.mark.parametrize(
    ("question", "lang", "words"),
    [
        ("serve qwen2.5-72b on 2x h100", "en", "0.95 of the card for the engine (--gpu-memory-utilization)"),
        ("部署 qwen2.5-72b 两张h100", "zh", "引擎占卡比例提到 0.95（--gpu-memory-utilization）"),
    ],
)
def test_the_larger_share_is_the_first_fix_and_the_smallest_change(
    question: str, lang: str, words: str
) -> None:
    found, query = _answer(question, lang)
    body = found["answer"]
    assert body["verdict"] == "no"
    first = body["fixes"][0]
    assert first["kind"] == "engine_share" and first["count"] == 2 and first["verdict"] in ("fits", "tight")
    assert first["quality_cost"] == "none" and first["action"] == "gpu_memory_utilization=0.95"
    assert body["instead"]["fix"] == "engine_share" and body["instead"]["count"] == 2
    assert words in body["text"]
    assert query is not None


def test_pressing_it_answers_the_same_job_on_more_of_the_card() -> None:
    _, query = _answer("serve qwen2.5-72b on 2x h100")
    assert query is not None
    changed = apply_action(query, "gpu_memory_utilization=0.95")
    assert changed.gpu_memory_utilization == 0.95 and changed.gpus == 2
    from core.estimator import estimate

    result = estimate(changed)
    assert result.verdicts[-1].count == 2 and result.verdicts[-1].fits.value in ("fits", "tight")


def test_a_share_said_is_kept() -> None:
    body = _answer("serve qwen2.5-72b on 2x h100 with vllm --gpu-memory-utilization 0.9")[0]["answer"]
    assert not any(f["kind"] == "engine_share" for f in body["fixes"])


def test_no_share_for_an_engine_without_a_pool() -> None:
    body = _answer("run qwen2.5-72b with transformers on 2x h100")[0]["answer"]
    assert not any(f["kind"] == "engine_share" for f in body["fixes"])
