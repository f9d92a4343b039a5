"""Memory follows the parallel layout the time assumes (core/layout.py): a multi-node pretraining answer
sized as Megatron-LM / NeMo run it — weights and gradients over t·p, the distributed optimizer's states over
d as well, activations of Korthikanti et al. 2022 eq. 1-4 divided by t, the first 1F1B stage's p
micro-batches — not ZeRO-3 / FSDP over all the cards with full activations."""

from __future__ import annotations

from typing import Any

import pytest

from bot.answer import answer
from core.catalog import load_catalog
from core.estimator import estimate, terms
from core.layout import layout_of
from core.query import Method, Query, Task
from core.registry import load_registry
from core.speed import training_speed
from core.units import GIB

PRETRAIN = {"task": Task.PRETRAIN, "method": Method.FULL}
QWEN_72B_32_H800 = {"model": "qwen2.5-72b", "card": "h800-sxm", "gpus": 32, "nodes": 4, **PRETRAIN}


def _gpt3_175b() -> Any:
    """GPT-3 175B's shape (Korthikanti et al. 2022 Table 3: a=96, h=12288, L=96, 4h GeLU MLP)."""
    base = load_registry().get("qwen2.5-72b")
    return base.model_copy(
        update={
            "layers": 96,
            "hidden": 12288,
            "intermediate": 4 * 12288,
            "heads": 96,
            "kv_heads": 96,
            "head_dim": None,
            "mlp": "plain",
            "decoder_layers": 0,
        }
    )


def test_the_layer_count_is_korthikanti_s_34_for_gpt3_s_shape_less_its_dropout_masks() -> None:
    """§4.1: 34·s·b·h for GPT's layer, of which 2 are 1-byte dropout masks (none at dropout 0), plus
    5·a·s/h of stored attention scores; a Llama-style gated GQA layer comes to about the same 34."""
    gpt3 = _gpt3_175b()
    assert terms.megatron_layer_activation_coefficient(gpt3, 2048, attention_scores=False) == 32.0
    with_scores = terms.megatron_layer_activation_coefficient(gpt3, 2048, attention_scores=True)
    assert with_scores == pytest.approx(32.0 + 5 * 96 * 2048 / 12288)
    qwen = load_registry().get("qwen2.5-72b")
    assert terms.megatron_layer_activation_coefficient(qwen, 2048, attention_scores=False) == pytest.approx(
        34.2, abs=0.1
    )


def test_gpt3_175b_activations_on_tp8_pp8_match_the_paper_s_formula() -> None:
    """Korthikanti eq. 4 (TP + SP) on the first 1F1B stage of GPT-3 175B, t = 8, p = 8, s = 2048, b = 1:
    s·b·h·L·(34 + 5·a·s/h)/t ≈ 34.4 GB with the scores stored (here 32 + 80), 10.3 GB without them
    (selective recomputation, Table 2; here 32: 9.7 GB) — the first stage holds L layers' worth."""
    gpt3 = _gpt3_175b()
    first, last = terms.megatron_activation_bytes(gpt3, 2048, 1, 8, 8, recompute=False, attention_scores=True)
    assert first == pytest.approx(2048 * 12288 * 96 * (32 + 80) / 8)
    assert last == pytest.approx(first / 8)
    selective, _ = terms.megatron_activation_bytes(
        gpt3, 2048, 1, 8, 8, recompute=False, attention_scores=False
    )
    assert selective / 1e9 == pytest.approx(9.66, abs=0.05)
    full, _ = terms.megatron_activation_bytes(gpt3, 2048, 1, 8, 8, recompute=True, attention_scores=False)
    assert full == pytest.approx(2048 * 12288 * 96 * 2 / 8 + 2048 * 12288 * 32 / 8)


def test_megatron_states_are_6_bytes_a_parameter_per_shard_and_12_over_the_data_parallel_ranks() -> None:
    weights, gradients, optimizer = terms.megatron_state_bytes(
        72e9, 8, 2, 2, replicated_bytes_per_param=6.0, sharded_bytes_per_param=12.0
    )
    assert (weights, gradients, optimizer) == (2 * 72e9 / 16, 4 * 72e9 / 16, 12 * 72e9 / 32)


def test_the_72b_on_32_h800_is_sized_in_the_layout_its_time_assumes() -> None:
    """Before: ZeRO-3 over 32 cards with 92 GiB of unsplit activations, ❌ 129 GiB a card, beside a time for
    TP 8 × PP 2 × DP 2. Now both assume that layout: ≈ 61 GiB, it fits."""
    est = estimate(Query.model_validate(QWEN_72B_32_H800))
    layout = layout_of(est.query)
    assert layout is not None and (
        layout.tensor_parallel,
        layout.pipeline_parallel,
        layout.data_parallel,
    ) == (
        8,
        2,
        2,
    )
    b = est.breakdown
    params = est.params
    assert b.weights == pytest.approx(2 * params / 16, rel=1e-6)
    assert b.gradients == pytest.approx(4 * params / 16, rel=1e-6)
    assert b.optimizer == pytest.approx(12 * params / 32, rel=1e-6)
    assert 4 * GIB < b.activations < 7 * GIB
    assert 50 * GIB < est.total_bytes < 70 * GIB
    speed = training_speed(est, load_catalog().get("h800-sxm"), 32, 5e10)
    assert speed.layout == layout


def test_a_named_zero_stage_keeps_zero3_memory() -> None:
    est = estimate(Query.model_validate({**QWEN_72B_32_H800, "zero_stage": 3}))
    assert layout_of(est.query) is None
    assert est.total_bytes > 100 * GIB  # full activations on each card


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("continued pretraining qwen2.5-72b 50B tokens 4 nodes × 8 H800 400G IB", "the memory above assumes"),
        (
            "4机32卡 h800 ib 400g，continued pretrain qwen2.5-72b 50B token 要多久",
            "上面的显存也按这个布局计算",
        ),
    ],
)
def test_the_answer_says_the_memory_follows_the_layout(text: str, said: str) -> None:
    reply = answer(text)
    facts: dict[str, Any] = dict(reply.to_json()["answer"])
    assert facts["verdict"] == "fits"
    assert facts["layout"] == {
        "framework": "megatron",
        "tensor_parallel": 8,
        "pipeline_parallel": 2,
        "data_parallel": 2,
        "said": False,
    }
    assert facts["layout"]["tensor_parallel"] == facts["cluster"]["layout"]["tensor_parallel"]
    assert said in reply.html
    assert "ZeRO-3" not in reply.html


# -- layouts the question names (core/parser/jobs.py, core/layout.py resolve_named) --------------------------


@pytest.mark.parametrize(
    ("text", "tp", "pp", "dp"),
    [
        ("pretrain llama 3 70b on 64 H100 with TP8 PP4", 8, 4, None),
        ("pretrain llama 3 70b on 64 H100 tp=4 pp=2", 4, 2, None),
        ("pretrain llama 3 70b on 32 H100, TP 2 × PP 4", 2, 4, None),
        ("在64张H100上预训练llama 3 70b，张量并行8 流水线并行4", 8, 4, None),
        ("预训练 llama 3 70b 64张h100 张量并行度为4 数据并行16", 4, None, 16),
        ("pretrain llama 3 70b on 16 H100 --tensor-parallel-size 4", 4, None, None),
        (
            "pretrain llama 3 70b --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 on 64 H100",
            8,
            4,
            None,
        ),
        ("pretrain llama 3 8b DP 16 on H100", None, None, 16),
        ("serve qwen2.5-72b with vllm -tp 2 on A100", 2, None, None),
    ],
)
def test_a_named_layout_is_read_in_both_languages(
    text: str, tp: int | None, pp: int | None, dp: int | None
) -> None:
    from core.parser import parse

    q = parse(text).query
    assert q is not None
    assert (q.tensor_parallel, q.pipeline_parallel, q.data_parallel) == (tp, pp, dp)


def test_the_named_tp8_pp4_is_the_layout_memory_and_time_assume() -> None:
    """Before: ❌ 112 GiB a card, ZeRO-3's, the TP 8 × PP 4 asked ignored. Now: 64 / (8·4) = 2 data-parallel
    copies, the 70.6B's states over 32 shards, ≈ 33 GiB, and the time for the same layout."""
    reply = answer("pretrain llama 3 70b on 64 H100 with TP8 PP4")
    facts: dict[str, Any] = dict(reply.to_json()["answer"])
    layout = {"framework": "megatron", "tensor_parallel": 8, "pipeline_parallel": 4, "data_parallel": 2}
    assert facts["layout"] == layout | {"said": True}
    assert facts["cluster"]["layout"] == layout
    assert facts["layout_problem"] is None
    assert facts["verdict"] == "fits"
    assert 28 * GIB < facts["total_bytes"] < 38 * GIB
    assert "Layout as you named it (Megatron-LM / NeMo): tensor parallel 8 × 4 pipeline stages" in reply.html


def test_a_named_layout_without_a_count_spans_its_cards() -> None:
    est = estimate(
        Query.model_validate(
            {
                "model": "llama-3-70b",
                "card": "h100-sxm",
                "tensor_parallel": 8,
                "pipeline_parallel": 4,
                **PRETRAIN,
            }
        )
    )
    assert est.query.gpus == 32
    layout = layout_of(est.query)
    assert layout is not None and layout.data_parallel == 1 and layout.said


@pytest.mark.parametrize(
    ("text", "reason", "said"),
    [
        ("pretrain llama 3 70b on 64 H100 with TP16 PP4", "node", "wider than one 8-card node"),
        ("pretrain llama 3 70b on 64 H100 tp 3", "cards", "needs a multiple of 3 cards, but the job has 64"),
        (
            "在64张H100上预训练llama 3 70b，张量并行8 流水线并行4 数据并行4",
            "cards",
            "需要 128 张卡，而这个任务是 64 张",
        ),
        (
            "pretrain qwen2.5-72b on 48 H100 tp 6 pp 8",
            "heads",
            "does not divide the model's 64 attention heads",
        ),
    ],
)
def test_a_layout_that_cannot_run_is_answered_with_why(text: str, reason: str, said: str) -> None:
    reply = answer(text)
    facts: dict[str, Any] = dict(reply.to_json()["answer"])
    assert facts["layout_problem"]["reason"] == reason
    assert said in reply.html
    assert facts["layout"] is None or facts["layout"]["said"] is False  # the figures' layout, never as asked


def test_a_fix_keeps_the_named_layout() -> None:
    """TP 8 × PP 2 on 16 H100 (DP 1) holds 12 bytes a parameter of optimizer over 16 shards: 85 GiB. More
    cards add data-parallel copies under the same TP × PP; LoRA or offloads, only ZeRO's, are no fix here."""
    reply = answer("pretrain llama 3 70b on 16 H100 TP8 PP2")
    facts: dict[str, Any] = dict(reply.to_json()["answer"])
    assert facts["verdict"] == "no"
    assert facts["fixes"]
    for fix in facts["fixes"]:
        assert "lora" not in fix["changes"] and "offloaded_checkpointing" not in fix["changes"]
