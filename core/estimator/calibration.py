"""Loads the fitted constants of data/calibration.toml (the estimator holds no magic numbers itself)."""

from __future__ import annotations

import tomllib
from functools import cache

from pydantic import BaseModel, ConfigDict

from core.paths import DATA_DIR


class ActivationCoefficients(BaseModel):
    model_config = ConfigDict(frozen=True)

    hidden: float
    intermediate: float
    q: float
    kv: float
    checkpoint_hidden: float = 0.0
    logits_per_vocab: float
    embedding_grad_copies: float = 0.0
    # Per token per extra norm per hidden unit (Gemma 2/3 also normalise after attention and after the MLP).
    extra_norm: float = 0.0
    # The same for Llama-style post-norms (GLM-4-0414's sandwich norms; ModelArch.post_norm_style "llama").
    post_norm: float = 0.0


class RuntimeConstants(BaseModel):
    model_config = ConfigDict(frozen=True)

    cuda_context_gib: float
    allocator_slack: float
    nccl_gib: float


class VllmConstants(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_num_batched_tokens: int
    max_num_batched_tokens_large_card: int
    large_card_gib: float
    small_chunk_device_names: tuple[str, ...]
    max_num_seqs: int
    logits_bytes_per_vocab: float
    profile_base_gib: float
    non_torch_gib: float
    non_torch_tp_gib: float


class EagerAttention(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    inference: float
    training: float


class Zero3Buffers(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    live_parameters: float
    reduce_bucket: float


class FolkRuleConstants(BaseModel):
    """The article's rule of thumb: weights × 4–6 for training, × 1.2 margin (calibration.toml)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    training_bytes_per_param: float
    training_low_factor: float
    training_high_factor: float
    inference_factor: float
    margin: float


class LogProbConstants(BaseModel):
    """Preference / RL trainers' per-token log-probabilities (calibration.toml [log_probs])."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    bytes_per_vocab: float


class Calibration(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    source: str
    inference: ActivationCoefficients
    full: ActivationCoefficients
    full_bf16: ActivationCoefficients
    lora: ActivationCoefficients
    eager_attention: EagerAttention
    log_probs: LogProbConstants
    zero3: Zero3Buffers
    folk_rule: FolkRuleConstants
    runtime: RuntimeConstants
    vllm: VllmConstants


@cache
def load_calibration() -> Calibration:
    with open(DATA_DIR / "calibration.toml", "rb") as handle:
        return Calibration.model_validate(tomllib.load(handle))
