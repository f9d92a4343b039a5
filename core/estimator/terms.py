"""Each memory term as a small named formula, with the source it comes from.

Sources (full citations in ../shared/reference/estimators.md):
- Weights by dtype: EleutherAI "Transformer Math 101"; QLoRA §3 (NF4, double quantization);
  llama.cpp tools/quantize/README.md (GGUF bits per weight).
- Training states: ZeRO paper §3.1 (2Ψ + 2Ψ + 12Ψ), HF model_memory_anatomy; ZeRO §2.6 sharding.
- KV cache: PagedAttention paper §3 (2·L·k·d·s·b·bytes); llm-d capacity planner for MLA.
- Activations: Korthikanti et al. 2022 structure, coefficients fitted to measured peaks
  (data/calibration.toml).
"""

from __future__ import annotations

import math

from core.estimator.calibration import ActivationCoefficients
from core.query import Precision
from core.registry import ModelArch

# Bytes per weight for each storage format. GGUF bits per weight from llama.cpp's quantize README
# (Llama-3.1-8B table): Q8_0 8.50, Q6_K 6.56, Q5_K_M 5.70, Q4_K_M 4.89, Q3_K_M ~3.91 (Q3_K_S 3.64, _L 4.30),
# Q2_K 3.16. GPTQ/AWQ int4 with group size 128: 4 bits + fp16 scale and packed zero per group ≈ 4.16 bits.
# bitsandbytes NF4 with double quantization: 4 + 0.127 bits (QLoRA §3). int8 (LLM.int8 / fp8): 1 byte + a
# per-row scale (negligible).
BYTES_PER_WEIGHT: dict[Precision, float] = {
    Precision.FP32: 4.0,
    Precision.BF16: 2.0,
    Precision.FP16: 2.0,
    Precision.FP8: 1.0,
    Precision.INT8: 1.0,
    Precision.INT4: 4.16 / 8,
    Precision.NF4: 4.127 / 8,
    Precision.Q8_0: 8.50 / 8,
    Precision.Q6_K: 6.56 / 8,
    Precision.Q5_K_M: 5.70 / 8,
    Precision.Q4_K_M: 4.89 / 8,
    Precision.Q3_K: 3.91 / 8,
    Precision.Q2_K: 3.16 / 8,
}

GGUF = frozenset(
    {Precision.Q8_0, Precision.Q6_K, Precision.Q5_K_M, Precision.Q4_K_M, Precision.Q3_K, Precision.Q2_K}
)
# Formats that quantize only the blocks' nn.Linear layers; embeddings, lm_head and norms stay 16-bit
# (bitsandbytes' llm_int8_skip_modules default, GPTQ/AWQ/fp8 checkpoints keep lm_head in 16-bit).
LINEAR_ONLY = frozenset({Precision.FP8, Precision.INT8, Precision.INT4, Precision.NF4})


def activation_dtype_bytes(precision: Precision) -> int:
    """Activations and KV run in 16-bit for every quantized format; fp32 only when the weights are fp32."""
    return 4 if precision is Precision.FP32 else 2


def weight_bytes(model: ModelArch, precision: Precision) -> int:
    """All parameters at rest in their storage format (every MoE expert is resident)."""
    per = BYTES_PER_WEIGHT[precision]
    if precision in LINEAR_ONLY:
        rest = model.total_params - model.linear_params
        return int(model.linear_params * per + rest * 2)
    return int(model.total_params * per)


def kv_bytes_per_token(model: ModelArch, kv_dtype_bytes: int, *, compressed_mla: bool) -> int:
    """KV cache per token, all layers: 2·L·k·d·bytes (PagedAttention §3).

    MLA: vLLM keeps the compressed latent L·(kv_lora_rank + rope) (llm-d capacity planner); transformers'
    DeepSeek code caches the decompressed per-head keys and values. Sliding-window layers are not capped
    here: at the default contexts the window is rarely reached, and capping would under-count.
    """
    layers = model.decoder_layers or model.layers
    if model.is_mla:
        if compressed_mla:
            return layers * (model.kv_lora_rank + model.qk_rope_head_dim) * kv_dtype_bytes
        key = model.heads * (model.qk_nope_head_dim + model.qk_rope_head_dim)
        return layers * (key + model.heads * model.v_head_dim) * kv_dtype_bytes
    return 2 * layers * model.n_kv_heads * model.dim_head * kv_dtype_bytes


def kv_share_per_card(model: ModelArch, gpus: int, *, compressed_mla: bool) -> float:
    """The share of the KV cache one of `gpus` tensor-parallel cards holds: its KV heads (at least one).

    MLA's compressed latent is a single head that every card needs whole, so under vLLM's tensor
    parallelism each card holds the full latent cache (vLLM MLA backend; SGLang's data-parallel attention
    is what splits it).
    """
    if model.is_mla and compressed_mla:
        return 1.0
    return max(1, math.ceil(model.n_kv_heads / gpus)) / model.n_kv_heads


def mlp_width_per_token(model: ModelArch) -> int:
    """The MLP width one token passes through (MoE: its active experts plus any shared expert)."""
    if not model.is_moe:
        return model.intermediate
    shared = model.shared_expert_intermediate or model.shared_experts * model.moe_intermediate
    return model.experts_active * model.moe_intermediate + shared


def block_activation_bytes(
    model: ModelArch, tokens: int, coeff: ActivationCoefficients, *, fp32: bool = False
) -> int:
    """One block's activations for `tokens` tokens (bytes/token/width coefficients, calibration.toml).

    The coefficients were measured with 16-bit activations; an fp32 job holds the same tensors at twice
    the size.
    """
    q_width = model.heads * (
        model.qk_nope_head_dim + model.qk_rope_head_dim if model.is_mla else model.dim_head
    )
    kv_width = model.n_kv_heads * model.dim_head if not model.is_mla else model.heads * model.v_head_dim
    per_token = (
        coeff.hidden * model.hidden
        + coeff.intermediate * mlp_width_per_token(model)
        + coeff.q * q_width
        + coeff.kv * kv_width
    )
    return int(tokens * per_token * (2 if fp32 else 1))


def eager_scores_bytes(model: ModelArch, batch: int, seq: int, bytes_per_score: float) -> int:
    """One block's seq² attention scores where the model has no flash/SDPA path (0 otherwise)."""
    if model.attention != "eager":
        return 0
    return int(bytes_per_score * batch * model.heads * seq * seq)


def lora_trainable_params(model: ModelArch, rank: int, targets: str) -> int:
    """r·(d_in + d_out) per adapted matrix (LoRA paper; matches PEFT's count for Llama-3.2-3B q,v r=32)."""
    attn = model.layer_linear_shapes
    if targets == "q,v":
        chosen = [attn[0], attn[2]] if not model.is_mla else attn[:1]
        per_layer = sum(rank * (i + o) for i, o in chosen)
        return (model.decoder_layers or model.layers) * per_layer
    per_layer = sum(rank * (i + o) for i, o in attn)
    total = (model.decoder_layers or model.layers) * per_layer
    if targets == "all-linear":
        if model.is_moe:
            expert = sum(rank * (i + o) for i, o in model.mlp_linear_shapes(model.moe_intermediate))
            shared = model.shared_expert_intermediate or model.shared_experts * model.moe_intermediate
            shared_lora = sum(rank * (i + o) for i, o in model.mlp_linear_shapes(shared)) if shared else 0
            dense = sum(rank * (i + o) for i, o in model.mlp_linear_shapes(model.intermediate))
            total += model.moe_layers * (model.experts * expert + shared_lora) + model.dense_layers * dense
        else:
            dense = sum(rank * (i + o) for i, o in model.mlp_linear_shapes(model.intermediate))
            total += (model.decoder_layers or model.layers) * dense
    return total
