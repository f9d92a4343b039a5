"""The layout a cluster pretraining answer's time assumes (core/speed/training.py pretraining_layout): as
teams pretrain on several 8-card NVLink nodes, Megatron-LM / NeMo's 3D parallelism (tensor parallel inside a
node, pipeline and data parallel across nodes; Narayanan et al. 2021, Takeaways #1-#2), not ZeRO-3 flat over
every card across the network; and the answer says which it assumed, in both languages."""

from __future__ import annotations

from typing import Any

import pytest

from bot.answer import answer
from core.catalog import load_catalog
from core.estimator import estimate
from core.layout import TrainingLayout, pretraining_layout
from core.query import Method, Query, Task
from core.registry import load_registry
from core.speed import load_speed_constants, training_speed


def _layout(text_fields: dict[str, object], card: str, gpus: int) -> TrainingLayout | None:
    query = Query.model_validate({"card": card, "gpus": gpus, **text_fields}).with_defaults()
    model = load_registry().get(str(query.model))
    return pretraining_layout(query, model, load_catalog().get(card), gpus, load_speed_constants())


PRETRAIN = {"task": Task.PRETRAIN, "method": Method.FULL}


def test_a_72b_on_four_8_card_nodes_runs_tensor_parallel_8_then_pipeline_stages() -> None:
    """6 bytes a parameter on each data-parallel rank (bf16 weights, fp32 gradients) and 12 sharded over them
    (Megatron's distributed optimizer): TP 8 alone leaves 82 GB a card for Qwen2.5-72B on 32 cards, over
    75% of 80 GB, so two pipeline stages."""
    layout = _layout({"model": "qwen2.5-72b", **PRETRAIN}, "h800-sxm", 32)
    assert layout == TrainingLayout(tensor_parallel=8, pipeline_parallel=2, data_parallel=2)


def test_a_model_that_fits_each_card_runs_data_parallel_only() -> None:
    layout = _layout({"model": "llama-3.1-8b", **PRETRAIN}, "h100-sxm", 64)
    assert layout == TrainingLayout(tensor_parallel=1, pipeline_parallel=1, data_parallel=64)


@pytest.mark.parametrize(
    ("fields", "card", "gpus"),
    [
        ({"model": "qwen2.5-72b", **PRETRAIN}, "h800-sxm", 8),  # one node
        ({"model": "qwen2.5-72b", **PRETRAIN}, "rtx-4090", 32),  # no NVLink
        ({"model": "qwen2.5-72b", "task": Task.FINETUNE, "method": Method.FULL}, "h800-sxm", 32),
        ({"model": "qwen2.5-72b", "task": Task.PRETRAIN, "method": Method.LORA}, "h800-sxm", 32),
        ({"model": "qwen2.5-72b", "zero_stage": 3, **PRETRAIN}, "h800-sxm", 32),  # ZeRO-3 named
        ({"model": "qwen2.5-72b", "runtime": "llama-factory", **PRETRAIN}, "h800-sxm", 32),  # a trainer named
    ],
)
def test_zero3_over_all_the_cards_stays_where_no_cluster_pretraining_layout_applies(
    fields: dict[str, object], card: str, gpus: int
) -> None:
    assert _layout(fields, card, gpus) is None


def test_the_3d_layout_trains_faster_than_zero3_across_the_network() -> None:
    """Megatron's TP 8 x PP 2 x DP 2 for a 72B on 32 H800 reduces each shard's gradients once per step of
    4M tokens; ZeRO-3 gathers every weight over InfiniBand on every micro-batch."""
    card = load_catalog().get("h800-sxm")
    query = Query.model_validate(
        {"model": "qwen2.5-72b", "card": "h800-sxm", "gpus": 32, "nodes": 4, **PRETRAIN}
    )
    three_d = training_speed(estimate(query), card, 32, 5e10)
    zero3 = training_speed(estimate(query.model_copy(update={"zero_stage": 3})), card, 32, 5e10)
    assert three_d.layout is not None and zero3.layout is None
    assert three_d.tokens_per_s > 1.3 * zero3.tokens_per_s


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "4机32卡 h800 ib 400g，continued pretrain qwen2.5-72b 50B token 要多久",
            "机内 NVLink 上张量并行 8，跨机 2 级流水线 × 2 路数据并行",
        ),
        (
            "continued pretraining of qwen2.5-72b on 50B tokens on 4 nodes x 8 H800 with 400G InfiniBand, "
            "how long?",
            "tensor parallel 8 inside each node over NVLink, 2 pipeline stages × 2 data-parallel copies",
        ),
    ],
)
def test_the_cluster_answer_says_the_layout_its_time_assumes(text: str, said: str) -> None:
    reply = answer(text)
    facts: dict[str, Any] = dict(reply.to_json()["answer"])
    cluster = facts["cluster"]
    assert cluster["layout"] == {
        "framework": "megatron",
        "tensor_parallel": 8,
        "pipeline_parallel": 2,
        "data_parallel": 2,
    }
    assert 350 <= cluster["hours"] <= 800
    assert said in reply.html
    assert "Megatron-LM / NeMo" in reply.html
