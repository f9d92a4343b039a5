"""config.json files read into model descriptions: parameter counts against published totals, attention kinds,
vision towers, quantised checkpoints, and what an unrecognised architecture still gives.

The configs under tests/fixtures/hub/ are the released config.json files (see the README there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.estimator import terms
from core.model_config import UnreadableConfigError, model_from_config
from core.query import Precision

HUB = Path(__file__).parent / "fixtures" / "hub"

# Published totals (billions) from each model card / paper.
PUBLISHED = {
    "Qwen/Qwen3-Next-80B-A3B-Instruct": 80.0,
    "zai-org/GLM-4.5": 355.0,
    "zai-org/GLM-4.5-Air": 106.0,
    "zai-org/GLM-4.6": 355.0,
    "deepseek-ai/DeepSeek-V3.1": 671.0,
    "deepseek-ai/DeepSeek-V3.2-Exp": 671.0,
    "moonshotai/Kimi-K2-Instruct": 1000.0,
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": 109.0,
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct": 400.0,
    "meta-llama/Llama-3.2-11B-Vision-Instruct": 10.67,
    "Qwen/Qwen2.5-VL-3B-Instruct": 3.75,
    "Qwen/Qwen2.5-VL-7B-Instruct": 8.29,
    "Qwen/Qwen2.5-VL-32B-Instruct": 33.5,
    "Qwen/Qwen2.5-VL-72B-Instruct": 73.4,
    "Qwen/Qwen3-VL-8B-Instruct": 8.77,
    "Qwen/Qwen3-VL-32B-Instruct": 33.4,
    "Qwen/Qwen3-VL-30B-A3B-Instruct": 31.1,
    "Qwen/Qwen3-VL-235B-A22B-Instruct": 236.0,
    "OpenGVLab/InternVL3-8B": 7.94,
    "openai/gpt-oss-20b": 20.9,
    "google/gemma-2-9b": 9.24,
    "google/gemma-3-27b-it": 27.4,
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503": 24.0,
    "MiniMaxAI/MiniMax-M1-80k": 456.0,
    "MiniMaxAI/MiniMax-M2": 230.0,
    "internlm/internlm3-8b-instruct": 8.8,
    "BAAI/bge-m3": 0.568,
    "huggyllama/llama-7b": 6.74,
    "Qwen/Qwen2.5-7B-Instruct-AWQ": 7.62,
}


def config(repo: str) -> dict[str, Any]:
    return json.loads((HUB / repo / "config.json").read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize("repo", sorted(PUBLISHED))
def test_parameter_count_from_config_matches_published(repo: str) -> None:
    model = model_from_config(config(repo), repo_id=repo)
    assert abs(model.total_params / 1e9 / PUBLISHED[repo] - 1) < 0.035, model.total_params
    assert model.unknown_terms == []
    assert model.origin == "hub" and model.hf_repo == repo


def test_moe_names_give_total_and_active() -> None:
    scout = model_from_config(config("meta-llama/Llama-4-Scout-17B-16E-Instruct"))
    assert scout.experts == 16 and scout.experts_active == 1 and scout.shared_experts == 1
    assert 16e9 < scout.active_params < 19e9  # '17B' is the active count, not the total
    maverick = model_from_config(config("meta-llama/Llama-4-Maverick-17B-128E-Instruct"))
    assert maverick.dense_layers == 24  # MoE every other layer


def test_mla_shared_experts_and_first_dense_layers() -> None:
    kimi = model_from_config(config("moonshotai/Kimi-K2-Instruct"))
    assert kimi.is_mla and kimi.kv_lora_rank == 512 and kimi.dense_layers == 1 and kimi.shared_experts == 1
    assert kimi.family == "kimi"
    mla_token = terms.kv_bytes_per_token(kimi, 2, compressed_mla=True)
    assert mla_token == 61 * (512 + 64) * 2


def test_linear_attention_state_does_not_grow_with_context() -> None:
    nxt = model_from_config(config("Qwen/Qwen3-Next-80B-A3B-Instruct"))
    assert nxt.linear_attention == "gated_deltanet" and nxt.linear_attention_layers == 36
    assert nxt.full_attention_layers == 12
    short = terms.kv_bytes_per_sequence(nxt, 2, 1000, compressed_mla=False)
    long = terms.kv_bytes_per_sequence(nxt, 2, 2000, compressed_mla=False)
    per_token_full_layers = 12 * 2 * 2 * 256 * 2
    assert long - short == 1000 * per_token_full_layers  # only the 12 softmax layers grow
    assert short > 1000 * per_token_full_layers  # the fixed state is there from the first token
    minimax = model_from_config(config("MiniMaxAI/MiniMax-M1-80k"))
    assert minimax.linear_attention == "lightning" and minimax.linear_attention_layers == 70


def test_sliding_and_chunked_layers_stop_growing_at_their_window() -> None:
    gemma = model_from_config(config("google/gemma-3-27b-it"))
    assert gemma.sliding_window == 1024 and gemma.sliding_layers == 52 and gemma.full_attention_layers == 10
    per_layer_token = 2 * 16 * 128 * 2
    at_128k = terms.kv_bytes_per_sequence(gemma, 2, 131072, compressed_mla=False)
    assert at_128k == per_layer_token * (10 * 131072 + 52 * 1024)
    scout = model_from_config(config("meta-llama/Llama-4-Scout-17B-16E-Instruct"))
    assert scout.attention_chunk == 8192 and scout.chunked_layers == 36
    oss = model_from_config(config("openai/gpt-oss-20b"))
    assert oss.sliding_window == 128 and oss.sliding_layers == 12
    qwen = model_from_config(config("Qwen/Qwen2.5-VL-7B-Instruct"))
    assert qwen.sliding_window == 0  # use_sliding_window false: the configured window is not used


def test_vision_tower_and_image_tokens() -> None:
    qwen = model_from_config(config("Qwen/Qwen2.5-VL-7B-Instruct"))
    assert 0.6e9 < qwen.vision_params < 0.75e9 and qwen.image_tokens == (1024 // 28) ** 2
    gemma = model_from_config(config("google/gemma-3-27b-it"))
    assert gemma.image_tokens == 256
    internvl = model_from_config(config("OpenGVLab/InternVL3-8B"))
    assert internvl.image_tokens == 256 and internvl.vocab == 151674


def test_quantised_checkpoints_store_their_real_bytes() -> None:
    awq = model_from_config(config("Qwen/Qwen2.5-7B-Instruct-AWQ"))
    assert awq.quant_method == "awq" and awq.native_precision == "int4"
    oss = model_from_config(config("openai/gpt-oss-20b"))
    assert oss.quant_method == "mxfp4"
    assert abs(terms.weight_bytes(oss, Precision.INT4) / 13.76e9 - 1) < 0.05  # the release's 13.8 GB
    assert terms.weight_bytes(oss, Precision.BF16) > 40e9  # asked in bf16: every weight at 2 bytes
    # Safetensors counts of a GPTQ checkpoint: packed int32 words, fp16 scales and the unquantised rest.
    counts = {"I32": 819_000_000, "F16": 1_200_000_000}
    gptq = model_from_config(
        config("Qwen/Qwen2.5-7B-Instruct-AWQ") | {"quantization_config": {"quant_method": "gptq", "bits": 4}},
        parameters_by_dtype=counts,
    )
    assert gptq.checkpoint_bytes == 819_000_000 * 4 + 1_200_000_000 * 2
    assert terms.weight_bytes(gptq, Precision.INT4) == gptq.checkpoint_bytes
    fp8 = model_from_config(config("deepseek-ai/DeepSeek-V3.1"))
    assert fp8.native_precision == "fp8"


def test_safetensors_total_is_the_published_count_and_a_misread_shape_is_flagged() -> None:
    repo = "huggyllama/llama-7b"
    exact = model_from_config(config(repo), parameters_by_dtype={"F16": 6_738_415_616})
    assert exact.params_b == pytest.approx(6.738, abs=1e-3) and exact.unknown_terms == []
    wrong = model_from_config(config(repo), parameters_by_dtype={"F16": 13_000_000_000})
    assert any(term.startswith("architecture") for term in wrong.unknown_terms)


def test_unrecognised_architecture_still_estimates_from_the_parameter_count() -> None:
    mamba = config("state-spaces/mamba-2.8b-hf")
    with pytest.raises(UnreadableConfigError):
        model_from_config(mamba, repo_id="state-spaces/mamba-2.8b-hf")
    model = model_from_config(
        mamba, repo_id="state-spaces/mamba-2.8b-hf", parameters_by_dtype={"F32": 2_768_345_600}
    )
    assert not model.verified and model.name == "state-spaces/mamba-2.8b-hf"
    assert abs(model.total_params / 2.768e9 - 1) < 0.15
    assert "kv_cache: unrecognised architecture (mamba)" in model.unknown_terms
    assert model.native_precision == "fp32"
