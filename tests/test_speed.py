"""Speed estimates against published figures (estimators.md §3.4), each within a factor of 1.5.

Rows checked:
- 70–72 torchtune training tokens/s (bs 2 × 2048 packed): 4090 full / LoRA / QLoRA, 8× A100 70B full and
  LoRA, 405B QLoRA. Queries are as a user would type them (no gradient checkpointing stated).
- 76–78 pretraining GPU-hours: Llama 2 7B/13B/34B/70B (2T tokens, A100-80GB), Llama 3.1 70B/405B
  (15.6T tokens, H100), DeepSeek-V3 (37B active, 14.8T tokens, H800).
- 73–75 llama.cpp decode: LLaMA-7B / Llama-2-7B on an M2 Ultra (800 GB/s); row 75 (Llama-3.1-8B, hardware
  not stated) is consistent with the same machine and is checked under that assumption.

Known misses (asserted within 2×, not 1.5×, and listed in the report):
- torchtune A6000 rows (8B full 2,579 and LoRA 4,699 tok/s): they imply 80% and 97% of the A6000's dense
  BF16 peak (154.8 TFLOPS) at 6ND / 4ND, above what dense GEMMs reach on GA102; we predict 1,606 and
  2,397 (ratios 1.61 and 1.96). Either the README's setup differs from its note or the peak it ran at does.
- Llama 3.1 8B pretraining (row 77): 1.46M H100-hours imply ~15% MFU at 6ND over 15.6T tokens (the 70B
  implies 27%, the 405B 35%); at our datacenter MFU 0.38 we predict 0.56M (2.6× fewer). The published
  figure likely includes cluster time a small model cannot use efficiently; asserted within 3×.
- Row 73 is also the data the decode constants were fitted to (data/speed.toml), so it checks the fit, not
  the method; rows 74–75 are the out-of-sample checks.
"""

from __future__ import annotations

import pytest

from core.catalog import Card, Segment, load_catalog
from core.estimator import estimate
from core.query import Method, Precision, Query, Runtime, Task
from core.registry import load_registry
from core.speed import (
    TrainingSpeed,
    decode_weight_bytes,
    inference_speed,
    load_speed_constants,
    training_flops_per_token,
    training_speed,
)

FACTOR = 1.5

M2_ULTRA = Card(
    id="m2-ultra",
    name="Apple M2 Ultra (test fixture)",
    vendor="Apple",
    memory_gib=192,
    memory_type="LPDDR5",
    bandwidth_gb_s=800,
    bf16_tflops=27.2,
    segment=Segment.WORKSTATION,
    source="Apple M2 Ultra spec: 800 GB/s unified memory bandwidth (llama.cpp PR #2917 hardware)",
)


def _within(predicted: float, published: float, factor: float = FACTOR) -> bool:
    return published / factor <= predicted <= published * factor


def _train(model: str, card: str, method: Method, gpus: int) -> TrainingSpeed:
    # The MFU in data/speed.toml was derived from these rows counting no recompute (6N / 4N per token), so
    # they are compared the same way; gpufit's own default turns gradient checkpointing on.
    query = Query(
        task=Task.FINETUNE,
        method=method,
        model=model,
        card=card,
        gpus=gpus,
        batch=2,
        seq=2048,
        grad_checkpointing=False,
    )
    result = estimate(query)
    return training_speed(result, load_catalog().get(card), gpus, query.tokens)


@pytest.mark.parametrize(
    ("model", "card", "method", "gpus", "published"),
    [
        ("llama-3.1-8b", "rtx-4090", Method.FULL, 1, 1650),
        ("llama-3.1-8b", "rtx-4090", Method.LORA, 1, 3083),
        ("llama-3.1-8b", "rtx-4090", Method.QLORA, 1, 2413),
        ("llama-3.1-70b", "a100-80gb-sxm", Method.FULL, 8, 1568),
        ("llama-3.1-70b", "a100-80gb-sxm", Method.LORA, 8, 3497),
        ("llama-3.1-405b", "a100-80gb-sxm", Method.QLORA, 8, 653),
    ],
)
def test_torchtune_training_tokens_per_s(
    model: str, card: str, method: Method, gpus: int, published: float
) -> None:
    speed = _train(model, card, method, gpus)
    assert _within(speed.tokens_per_s, published), (speed.tokens_per_s, published)


@pytest.mark.parametrize(("method", "published"), [(Method.FULL, 2579), (Method.LORA, 4699)])
def test_torchtune_a6000_known_miss(method: Method, published: float) -> None:
    speed = _train("llama-3.1-8b", "rtx-a6000", method, 1)
    assert not _within(speed.tokens_per_s, published)  # documented miss; see the module docstring
    assert _within(speed.tokens_per_s, published, 2.0)


@pytest.mark.parametrize(
    ("model", "card", "tokens", "published_gpu_hours"),
    [
        ("llama-2-7b", "a100-80gb-sxm", 2e12, 184_320),
        ("llama-2-13b", "a100-80gb-sxm", 2e12, 368_640),
        ("34", "a100-80gb-sxm", 2e12, 1_038_336),
        ("llama-2-70b", "a100-80gb-sxm", 2e12, 1_720_320),
        ("llama-3.1-70b", "h100-sxm", 15.6e12, 7_000_000),
        ("llama-3.1-405b", "h100-sxm", 15.6e12, 30_840_000),
        ("deepseek-v3", "h800-sxm", 14.8e12, 2_664_000),
    ],
)
def test_pretraining_gpu_hours(model: str, card: str, tokens: float, published_gpu_hours: float) -> None:
    named = {"params_b": 34.0} if model == "34" else {"model": model}
    query = Query(task=Task.PRETRAIN, card=card, gpus=2048, batch=1, seq=4096, tokens=tokens, **named)
    speed = training_speed(estimate(query), load_catalog().get(card), 2048, tokens)
    assert speed.gpu_hours is not None
    assert _within(speed.gpu_hours, published_gpu_hours), (speed.gpu_hours, published_gpu_hours)


def test_llama_31_8b_gpu_hours_known_miss() -> None:
    """Meta's 1.46M H100-hours for Llama 3.1 8B imply ~15% MFU (6ND, 15.6T tokens); we predict 0.56M."""
    query = Query(
        task=Task.PRETRAIN,
        model="llama-3.1-8b",
        card="h100-sxm",
        gpus=2048,
        batch=1,
        seq=4096,
        tokens=15.6e12,
    )
    speed = training_speed(estimate(query), load_catalog().get("h100-sxm"), 2048, 15.6e12)
    assert speed.gpu_hours is not None
    assert not _within(speed.gpu_hours, 1_460_000)
    assert _within(speed.gpu_hours, 1_460_000, 3.0)


@pytest.mark.parametrize(
    ("model", "precision", "published"),
    [
        ("llama-2-7b", Precision.Q8_0, 62.05),  # row 73 (fitted)
        ("llama-2-7b", Precision.FP16, 41.35),  # row 74
        ("llama-2-7b", Precision.Q8_0, 61.53),  # row 74
        ("llama-2-7b", Precision.Q6_K, 67.42),  # row 74
        ("llama-3.1-8b", Precision.FP16, 29.17),  # row 75
        ("llama-3.1-8b", Precision.Q8_0, 50.93),  # row 75
        ("llama-3.1-8b", Precision.Q4_K_M, 71.93),  # row 75
    ],
)
def test_llama_cpp_decode(model: str, precision: Precision, published: float) -> None:
    result = estimate(Query(model=model, precision=precision, seq=128))
    speed = inference_speed(result, M2_ULTRA, 1)
    assert _within(speed.decode_tokens_per_s, published), (speed.decode_tokens_per_s, published)


def test_flops_rules() -> None:
    query = Query(task=Task.FINETUNE, method=Method.FULL, grad_checkpointing=False).with_defaults()
    assert training_flops_per_token(query, 10, 10) == 60
    gc = query.model_copy(update={"grad_checkpointing": True})
    assert training_flops_per_token(gc, 10, 10) == 80  # x 4/3
    lora = Query(task=Task.FINETUNE, method=Method.LORA, grad_checkpointing=False).with_defaults()
    assert training_flops_per_token(lora, 10, 0) == 40


def test_moe_decode_reads_active_experts_only() -> None:
    model = load_registry().get("mixtral-8x7b")
    one = decode_weight_bytes(model, Precision.BF16, 1)
    many = decode_weight_bytes(model, Precision.BF16, 256)
    assert one < 0.35 * 2 * model.total_params
    assert many > 0.95 * 2 * (model.total_params - model.embedding_params)


def test_tensor_parallel_speeds_up_and_pcie_costs_more() -> None:
    catalog = load_catalog()
    base = Query(model="llama-3.1-70b", runtime=Runtime.VLLM, precision=Precision.INT4, batch=1)
    h100 = [
        inference_speed(
            estimate(base.model_copy(update={"card": "h100-sxm", "gpus": n})), catalog.get("h100-sxm"), n
        )
        for n in (1, 4)
    ]
    # The fixed per-layer cost (fitted on llama.cpp) does not shrink with cards, so the gain is modest.
    assert h100[1].decode_tokens_per_s > 1.2 * h100[0].decode_tokens_per_s
    assert h100[1].parallelism == "tensor"
    pcie = inference_speed(
        estimate(base.model_copy(update={"card": "rtx-4090", "gpus": 4})), catalog.get("rtx-4090"), 4
    )
    assert "no_nvlink" in pcie.notes


def test_transformers_multi_card_is_sequential() -> None:
    catalog = load_catalog()
    q = Query(model="llama-3.1-8b", card="rtx-4090")
    one = inference_speed(estimate(q), catalog.get("rtx-4090"), 1)
    two = inference_speed(estimate(q.model_copy(update={"gpus": 2})), catalog.get("rtx-4090"), 2)
    assert two.parallelism == "pipeline"
    assert two.decode_tokens_per_s == pytest.approx(one.decode_tokens_per_s)


def test_batch_raises_aggregate_not_per_sequence() -> None:
    catalog = load_catalog()
    q = Query(model="llama-3.1-8b", card="h100-sxm", batch=32)
    speed = inference_speed(estimate(q), catalog.get("h100-sxm"), 1)
    assert speed.aggregate_tokens_per_s > 10 * speed.decode_tokens_per_s / 2
    assert speed.ttft_s > 0


def test_pcie_training_is_communication_bound() -> None:
    query = Query(
        task=Task.FINETUNE, method=Method.FULL, model="llama-3.1-8b", card="rtx-4090", gpus=8, batch=1
    )
    catalog = load_catalog()
    eight = training_speed(estimate(query), catalog.get("rtx-4090"), 8, None)
    assert "communication_bound" in eight.notes and "no_nvlink" in eight.notes
    h100 = training_speed(
        estimate(query.model_copy(update={"card": "h100-sxm"})), catalog.get("h100-sxm"), 8, None
    )
    assert "communication_bound" not in h100.notes


def test_constants_have_sources() -> None:
    constants = load_speed_constants()
    assert constants.decode.source and constants.mfu.source and constants.link.source
    assert 0 < constants.mfu.datacenter < 1
