"""The models people rent GPUs for today are built in, found as people type them, and MoE names are read
for both numbers ('30B-A3B': 30 total, 3 active; '17B-16E': 17 active of an unknown total)."""

from __future__ import annotations

import pytest

from core.estimator import estimate
from core.parser.model_names import find_model
from core.parser.normalize import normalize
from core.parser.pipeline import parse
from core.query import Query, Runtime, Task
from core.registry import load_registry

REGISTRY = load_registry()


@pytest.mark.parametrize(
    ("typed", "model_id"),
    [
        ("GLM-4.5", "glm-4.5"),
        ("glm 4.5 air", "glm-4.5-air"),
        ("GLM-4.6", "glm-4.6"),
        ("Kimi K2", "kimi-k2"),
        ("kimi-k2-instruct-0905", "kimi-k2"),
        ("DeepSeek-V3.1", "deepseek-v3.1"),
        ("deepseek v3.2 exp", "deepseek-v3.2"),
        ("Qwen3-Next-80B-A3B-Instruct", "qwen3-next-80b-a3b"),
        ("千问3 next", "qwen3-next-80b-a3b"),
        ("Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b"),
        ("Qwen3-Coder-480B-A35B-Instruct", "qwen3-coder-480b-a35b"),
        ("qwen2.5-vl-7b", "qwen2.5-vl-7b"),
        ("Qwen3-VL-30B-A3B-Instruct", "qwen3-vl-30b-a3b"),
        ("Llama-4-Scout-17B-16E-Instruct", "llama-4-scout-17b-16e"),
        ("llama 4 maverick", "llama-4-maverick-17b-128e"),
        ("gemma-3-27b-it", "gemma-3-27b"),
        ("Mistral-Small-3.2-24B-Instruct-2506", "mistral-small-3.1-24b"),
        ("llama 65b", "llama-65b"),
        ("llama-30b", "llama-33b"),
        ("MiniMax-M2", "minimax-m2"),
        ("minimax m1", "minimax-m1"),
        ("internlm3-8b-instruct", "internlm3-8b"),
        ("书生internlm3", "internlm3-8b"),
        ("bge-m3", "bge-m3"),
        ("Qwen3-Embedding-8B", "qwen3-embedding-8b"),
        ("qwen3-reranker-4b", "qwen3-4b"),
        ("InternVL3-8B", "internvl3-8b"),
        ("Llama-3.2-11B-Vision-Instruct", "llama-3.2-11b-vision"),
    ],
)
def test_new_models_found_as_typed(typed: str, model_id: str) -> None:
    match = REGISTRY.resolve(typed)
    assert match is not None and match.model.id == model_id


@pytest.mark.parametrize(
    ("text", "model_id"),
    [
        ("can llama 4 17b-16e run on 2 h100", "llama-4-scout-17b-16e"),
        ("llama-4 17b 128e on 8 h100", "llama-4-maverick-17b-128e"),
        ("qwen3 30b a3b lora on a 4090", "qwen3-30b-a3b"),
    ],
)
def test_moe_names_pick_the_model_by_experts_or_active_count(text: str, model_id: str) -> None:
    mention = find_model(normalize(text))
    assert mention is not None and mention.model_id == model_id


def test_unknown_moe_name_reads_total_and_active() -> None:
    mention = find_model(normalize("can a 4090 run qwen9-72b-a14b"))
    assert mention is not None and mention.model_id is None
    assert mention.params_b == 72 and mention.active_params_b == 14


def test_unknown_expert_count_name_does_not_take_the_active_size_for_the_total() -> None:
    mention = find_model(normalize("llama 9 17b-16e on a100"))
    assert mention is not None and mention.model_id is None
    assert mention.params_b is None and mention.active_params_b == 17 and mention.experts == 16
    bare = parse("a 17B-16E model on a 4090")
    assert bare.query is None or bare.query.params_b is None
    total = parse("a 30B-A3B model on a 4090")
    assert total.query is not None and total.query.params_b == 30


def test_vl_model_weights_include_the_vision_tower() -> None:
    vl = estimate(Query(model="qwen2.5-vl-7b", task=Task.INFERENCE))
    text = estimate(Query(model="qwen2.5-7b", task=Task.INFERENCE))
    assert vl.breakdown.weights - text.breakdown.weights > 1.2e9  # ~0.68B parameters at 2 bytes


def test_long_context_kv_of_hybrid_models_stays_small() -> None:
    """Qwen3-Next at 256k: 12 softmax layers grow, 36 linear layers hold a fixed state."""
    nxt = estimate(Query(model="qwen3-next-80b-a3b", task=Task.INFERENCE, seq=262144))
    assert nxt.breakdown.kv_cache < 7e9  # 12 layers x 2 x 2 heads x 256 x 2 B x 262144 = 6.4 GB + state
    uncapped = 2 * 62 * 16 * 128 * 2 * 131072
    served = estimate(Query(model="gemma-3-27b", task=Task.INFERENCE, seq=131072, runtime=Runtime.VLLM))
    assert served.breakdown.kv_cache < 0.2 * uncapped  # 52 of 62 layers stop at their 1024-token window
    # transformers' prefill keeps a view of the whole prompt's KV in its sliding-window layers (measured)
    prefill = estimate(Query(model="gemma-3-27b", task=Task.INFERENCE, seq=131072))
    assert prefill.breakdown.kv_cache == uncapped


def test_vl_answers_say_what_an_image_costs_in_context() -> None:
    from bot.answer import answer
    from bot.render import html_to_terminal

    vl = html_to_terminal(answer("can qwen2.5-vl-7b run on a 4090", lang="en").html)
    assert f"about {(1024 // 28) ** 2:,} tokens of the context" in vl
    text_only = html_to_terminal(answer("can qwen2.5 7b run on a 4090", lang="en").html)
    assert "🖼" not in text_only
