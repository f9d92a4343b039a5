"""GRPO's colocated rollout engine as the trainers lay it out, and card counts against published practice.

verl's hybrid engine (free_cache_engine: True) and OpenRLHF's (--vllm.enable_sleep) put vLLM to sleep while
the policy trains (sleep level 1: its weights go to host RAM, its KV cache is freed), so a card's peak is the
larger of the update step and the rollout phase, not their sum; TRL's colocated engine keeps its memory
(vllm_enable_sleep_mode is False by default). Adding the sleeping engine to the update step once made
"用verl做grpo训练qwen2.5-7b 需要什么卡 几张" list 112 × RTX 4090: every card held the update's activations,
logits and buffers plus the engine's 7 GiB, leaving almost nothing of 24 GB for the shards.

Published counts (verl docs/perf/device_tuning.rst, "Hardware Resource Needed for RL", MIN configurations,
which also offload parameters and optimizer states): Qwen2-7B GRPO on 2 × H800, Qwen2-14B on 4 × H800,
Qwen2-70B on 32 × H800 / H20, Qwen2.5-7B GRPO-LoRA on 1 × H100. gpufit's counts without offload must be no
more than the published minimum.
"""

from __future__ import annotations

import pytest

from bot.answer import answer
from core.advisor.needed import advise_cards_needed
from core.catalog import load_catalog
from core.estimator import estimate
from core.jobs import rl
from core.query import Algorithm, Currency, Method, Query, Task
from core.registry import ModelArch, load_registry
from core.units import GIB


def _arch(name: str) -> ModelArch:
    return load_registry().get(name)


def _grpo(runtime: str, model: str = "qwen2.5-7b", gpus: int = 2, **extra: object) -> Query:
    return Query(
        task=Task.FINETUNE,
        method=Method.FULL,
        model=model,
        runtime=runtime,
        algorithm=Algorithm.GRPO,
        card="a100-80gb-sxm",
        gpus=gpus,
        **extra,
    )


def test_verl_rollout_sleeps_during_the_update_and_trl_keeps_it() -> None:
    verl = estimate(_grpo("verl", gpus=16))
    trl = estimate(_grpo("trl", gpus=16))
    assert rl.rollout_sleeps(verl.query) and not rl.rollout_sleeps(trl.query)
    # verl's update peak holds no rollout KV cache; TRL's holds the engine's weights and KV cache beside it
    assert verl.peak_phase in ("backward", "optimizer_step") and verl.breakdown.kv_cache == 0
    assert trl.breakdown.kv_cache > 0
    model = _arch("qwen2.5-7b")
    rollout = next(m for m in rl.extra_models(trl.query, model, 16, 16.0) if m.role == "rollout")
    assert trl.breakdown.weights >= rollout.weights_bytes


def test_the_rollout_phase_is_the_peak_when_generation_outweighs_the_update() -> None:
    """Many long generations: the awake engine's KV cache beside the kept shards is the larger phase, and it
    holds no activations or gradients (the update ended with zero_grad)."""
    est = estimate(_grpo("verl", gpus=8, num_generations=64, completion_tokens=8192, seq=512))
    if est.peak_phase == "rollout":
        assert est.breakdown.activations == 0 and est.breakdown.gradients == 0
        assert est.breakdown.kv_cache > 0
    sleeping = estimate(_grpo("verl", gpus=8))
    kept = estimate(_grpo("trl", gpus=8))
    # the same job without the engine in the update step never needs more
    assert sleeping.breakdown.total <= kept.breakdown.total + 8 * GIB


def test_verl_rollout_tensor_parallelism_grows_with_the_cards_of_a_node() -> None:
    """verl's tuning scripts run 14B and 32B at rollout TP 4 on 4 cards, 7B at TP 2 on 2 (examples/tuning)."""
    model = _arch("qwen2.5-72b")
    query = _grpo("verl", model="qwen2.5-72b", gpus=32)
    rollout = next(m for m in rl.extra_models(query, model, 32, 16.0) if m.role == "rollout")
    half = 2 * model.total_params
    assert rollout.weights_bytes == pytest.approx(half / 8, rel=0.01)  # TP 8: 64 heads, 8 KV heads
    small = _arch("qwen2.5-7b")
    two = next(m for m in rl.extra_models(_grpo("verl", gpus=2), small, 2, 16.0) if m.role == "rollout")
    assert two.weights_bytes == pytest.approx(2 * small.total_params / 2, rel=0.01)


def _counts(model: str, method: Method = Method.FULL) -> dict[str, int | None]:
    query = Query(task=Task.FINETUNE, method=method, model=model, runtime="verl", algorithm=Algorithm.GRPO)
    advice = advise_cards_needed(query, None, Currency.USD)
    return {o.card.id: (o.needed.count if o.needed else None) for o in advice.options}


@pytest.mark.parametrize(
    ("model", "method", "card", "published"),
    [
        ("qwen2.5-7b", Method.FULL, "h100-sxm", 2),  # Qwen2-7B GRPO, 2 × H800
        ("qwen2.5-7b", Method.LORA, "h100-sxm", 1),  # Qwen2.5-7B GRPO-LoRA, 1 × H100
        ("qwen2.5-14b", Method.FULL, "h100-sxm", 4),  # Qwen2-14B GRPO, 4 × H800
    ],
)
def test_verl_counts_on_80gb_cards_match_verls_published_minimums(
    model: str, method: Method, card: str, published: int
) -> None:
    query = Query(task=Task.FINETUNE, method=method, model=model, runtime="verl", algorithm=Algorithm.GRPO)
    h100 = load_catalog().by_id[card]
    advice = advise_cards_needed(query, h100, Currency.USD)
    assert advice.main.needed is not None
    assert advice.main.needed.count <= published


def test_verl_70b_count_is_a_few_nodes_not_dozens() -> None:
    """Qwen2-70B GRPO: 32 × H800 in verl's table (with offload); without it gpufit stays within 4 nodes."""
    query = Query(
        task=Task.FINETUNE, method=Method.FULL, model="qwen2.5-72b", runtime="verl", algorithm=Algorithm.GRPO
    )
    advice = advise_cards_needed(query, load_catalog().by_id["h100-sxm"], Currency.USD)
    assert advice.main.needed is not None and advice.main.needed.count <= 32
    assert not advice.main.poor_choice  # the largest usual card is not called a poor choice


def test_grpo_7b_on_24gb_cards_is_a_few_machines_and_called_a_poor_choice() -> None:
    counts = _counts("qwen2.5-7b")
    assert counts["a100-80gb-sxm"] == 2 and counts["l40s"] is not None and counts["l40s"] <= 4
    assert counts["rtx-4090"] is not None and counts["rtx-4090"] <= 16  # was 112
    query = Query(task=Task.FINETUNE, model="qwen2.5-7b", runtime="verl", algorithm=Algorithm.GRPO)
    advice = advise_cards_needed(query, None, Currency.USD)
    poor = {o.card.id for o in advice.options if o.poor_choice}
    assert "rtx-4090" in poor and "a100-80gb-sxm" not in poor and "l40s" not in poor
    named = advise_cards_needed(query, load_catalog().by_id["rtx-4090"], Currency.USD)
    assert named.main.poor_choice and named.better is not None
    assert named.better.needed is not None and named.better.needed.count <= 2
    assert named.main.floor_bytes > 0.5 * named.main.card.memory_bytes


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("用verl做grpo训练qwen2.5-7b 需要什么卡 几张", ("不划算", "休眠", "2 张 A100")),
        ("how many cards to train qwen2.5-7b with GRPO in verl", ("poor choice", "asleep", "2 × A100")),
        ("用verl做grpo训练qwen2.5-7b 要几张4090", ("不划算", "换成 2 张")),
        ("verl GRPO qwen2.5-7b, how many RTX 4090?", ("poor choice", "2 × H100")),
    ],
)
def test_the_answer_names_the_poor_choice_in_both_languages(question: str, words: tuple[str, ...]) -> None:
    reply = answer(question)
    assert reply.kind == "cards_needed"
    for word in words:
        assert word in reply.html, (word, reply.html)
    options = reply.facts["options"]
    assert isinstance(options, list)
    assert all("poor_choice" in o and "per_card_floor_bytes" in o for o in options)
    assert not any("112" in line for line in reply.html.splitlines() if "4090" in line)
