"""Each memory term as a small named formula, with the source it comes from.

core/estimator/memory.py only composes these: which terms are alive at the peak, on how many cards. Every
function here is one term, and its docstring names where the formula comes from. Sources (full citations
in ../shared/reference/estimators.md, section numbers below are that file's):
- Weights by dtype: EleutherAI "Transformer Math 101"; QLoRA §3 (NF4, double quantization);
  llama.cpp tools/quantize/README.md (GGUF bits per weight).
- Training states: ZeRO paper §3.1 (2Ψ + 2Ψ + 12Ψ), HF model_memory_anatomy (estimators.md §2.2);
  ZeRO Fig. 1 / Table 1 sharding (estimators.md §2.6).
- KV cache: PagedAttention paper §3 (2·L·k·d·s·b·bytes); llm-d capacity planner for MLA (§2.4).
- Activations: Korthikanti et al. 2022 structure (§2.3), coefficients fitted to the peaks measured in
  data/measured/memory.csv (data/calibration.toml).
- Runtime: HF model_memory_anatomy, llm-d empirical results, vLLM's profile run (§2.5, §3.3).
- The article's rule of thumb shown beside the estimate: its lines 11 and 14 (calibration.toml [folk_rule]).
"""

from __future__ import annotations

import math
from typing import Literal

from core.catalog import Card
from core.estimator.calibration import (
    ActivationCoefficients,
    Calibration,
    FolkRuleConstants,
    VllmConstants,
    Zero3Buffers,
)
from core.estimator.result import FolkRule
from core.query import KvCacheDtype, Method, Optimizer, Precision, Task
from core.registry import ModelArch
from core.units import GIB

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
    # Q4_0: blocks of 32 weights, 16 bytes of 4-bit values + one fp16 scale = 18 bytes (4.5 bits;
    # ggml-common.h block_q4_0); llama.cpp's LLaMA-7B Q4_0 is 3.56 GiB for 6.74B weights (PR #2917).
    Precision.Q4_0: 4.5 / 8,
    Precision.Q3_K: 3.91 / 8,
    Precision.Q2_K: 3.16 / 8,
}

GGUF = frozenset(
    {
        Precision.Q8_0,
        Precision.Q6_K,
        Precision.Q5_K_M,
        Precision.Q4_K_M,
        Precision.Q4_0,
        Precision.Q3_K,
        Precision.Q2_K,
    }
)
# Formats that quantize only the blocks' nn.Linear layers; embeddings, lm_head and norms stay 16-bit
# (bitsandbytes' llm_int8_skip_modules default, GPTQ/AWQ/fp8 checkpoints keep lm_head in 16-bit).
LINEAR_ONLY = frozenset({Precision.FP8, Precision.INT8, Precision.INT4, Precision.NF4})


def activation_dtype_bytes(precision: Precision) -> int:
    """Activations and KV run in 16-bit for every quantized format; fp32 only when the weights are fp32."""
    return 4 if precision is Precision.FP32 else 2


# Bytes per KV element for each KV cache dtype: fp8 one byte (vLLM/SGLang fp8_e4m3, TensorRT-LLM fp8 KV);
# llama.cpp's q8_0 and q4_0 blocks of 32 values with one fp16 scale: 34 and 18 bytes (8.5 and 4.5 bits;
# jobs-and-market.md §1.1: 53% and 28% of f16).
KV_BYTES: dict[KvCacheDtype, float] = {
    KvCacheDtype.BF16: 2.0,
    KvCacheDtype.FP16: 2.0,
    KvCacheDtype.FP8: 1.0,
    KvCacheDtype.Q8_0: 8.5 / 8,
    KvCacheDtype.Q4_0: 4.5 / 8,
}


def kv_dtype_bytes(precision: Precision, kv_cache_dtype: KvCacheDtype | None) -> float:
    """Bytes per cached key or value: the asked KV dtype, else the activations' dtype (16-bit, or fp32)."""
    if kv_cache_dtype is not None:
        return KV_BYTES[kv_cache_dtype]
    return activation_dtype_bytes(precision)


def weight_bytes(model: ModelArch, precision: Precision) -> int:
    """All parameters at rest in their storage format (every MoE expert is resident)."""
    per = BYTES_PER_WEIGHT[precision]
    if model.checkpoint_bytes and model.native_precision == precision.value:
        return model.checkpoint_bytes  # a quantised checkpoint served as released: its real bytes
    if precision in LINEAR_ONLY:
        # the layers an FP8 checkpoint keeps in 16-bit as its maker released it (Llama 3.1 405B FP8)
        kept = model.fp8_16bit_params if precision is Precision.FP8 else 0
        rest = model.total_params - model.linear_params + kept
        return int((model.linear_params - kept) * per + rest * 2)
    return int(model.total_params * per)


def logit_bytes(positions: int, model: ModelArch, bytes_per_vocab: float) -> float:
    """The logits of `positions` token positions: positions × vocab × bytes per entry.

    Bytes per entry are what the runtime really holds per logit (bf16 logits, their fp32 upcast in the
    loss and its gradient in training; generate()'s last-position copy; vLLM's fp32 profile logits),
    fitted in data/calibration.toml to data/measured/memory.csv and llm-d's vLLM logs (estimators.md §2.3:
    "the logits spike, often the single largest tensor").
    """
    return positions * model.vocab * bytes_per_vocab


def fused_loss_chunk_tokens(model: ModelArch, tokens: int) -> int:
    """Token positions whose logits a fused linear cross-entropy holds at once (Liger, and Unsloth's chunked
    loss alike): Liger's chunk is next_power_of_2(ceil(tokens / ceil(vocab / hidden))) — the logits of one
    chunk about the size of the chunk's hidden states (liger_kernel/ops/fused_linear_cross_entropy.py)."""
    per_chunk = math.ceil(tokens / math.ceil(model.vocab / max(model.hidden, 1)))
    return min(tokens, 1 << max(0, math.ceil(math.log2(max(1, per_chunk)))))


def fused_loss_weight_grad_bytes(model: ModelArch, weight_bytes: float) -> float:
    """lm_head's weight gradient, which a fused linear cross-entropy computes in the forward pass and which
    stays alive through the whole backward (vocab × hidden in the weight's dtype; none for a frozen head, as
    in LoRA; Liger's forward: grad_weight = zeros_like(weight))."""
    return model.vocab * model.hidden * weight_bytes


def fused_loss_input_bytes(model: ModelArch, tokens: int, input_bytes: float) -> float:
    """The fused loss's input side: the shifted copy of the final hidden states it reads and their gradient
    (tokens × hidden each; Liger's transformers patch passes hidden_states[..., :-1, :].contiguous(), its
    forward fills grad_input = zeros_like(_input)); freed as the backward leaves the final norm."""
    return 2 * tokens * model.hidden * input_bytes


def kv_dtype_factor(kv_cache_dtype: KvCacheDtype | None) -> float:
    """Bytes of the asked KV cache against the 16-bit one (1.0 when not said)."""
    return kv_dtype_bytes(Precision.BF16, kv_cache_dtype) / 2.0


def kv_bytes_per_token(model: ModelArch, kv_dtype_bytes: float, *, compressed_mla: bool) -> int:
    """KV cache per token, all layers: 2·L·k·d·bytes (PagedAttention §3).

    MLA: vLLM keeps the compressed latent L·(kv_lora_rank + rope) (llm-d capacity planner); transformers'
    DeepSeek code caches the decompressed per-head keys and values. Sliding-window layers are not capped
    here: at the default contexts the window is rarely reached, and capping would under-count.
    """
    layers = model.decoder_layers or model.layers
    if model.is_mla:
        if compressed_mla:
            return int(layers * (model.kv_lora_rank + model.qk_rope_head_dim) * kv_dtype_bytes)
        key = model.heads * (model.qk_nope_head_dim + model.qk_rope_head_dim)
        return int(layers * (key + model.heads * model.v_head_dim) * kv_dtype_bytes)
    return int(2 * layers * model.n_kv_heads * model.dim_head * kv_dtype_bytes)


def kv_share_per_card(model: ModelArch, gpus: int, *, compressed_mla: bool) -> float:
    """The share of the KV cache one of `gpus` tensor-parallel cards holds: its KV heads (at least one).

    Tensor parallelism splits the KV heads over the ranks; with more ranks than KV heads each rank keeps
    a replica of one head (vLLM's num_kv_heads // tp, at least 1; estimators.md §2.4). MLA's compressed
    latent is a single head that every card needs whole, so under vLLM's tensor parallelism each card holds
    the full latent cache (vLLM MLA backend; SGLang's data-parallel attention is what splits it).
    """
    if model.is_mla and compressed_mla:
        return 1.0
    return max(1, math.ceil(model.n_kv_heads / gpus)) / model.n_kv_heads


def kv_cache_bytes(
    model: ModelArch,
    seq: int,
    kv_dtype_bytes: float,
    *,
    sequences: int = 1,
    gpus: int,
    compressed_mla: bool,
    windowed: bool = True,
) -> int:
    """The KV cache of `sequences` sequences of `seq` tokens on one of `gpus` cards: each sequence's KV by
    layer kind (`kv_bytes_per_sequence`) × sequences × the card's share."""
    per_sequence = kv_bytes_per_sequence(
        model, kv_dtype_bytes, seq, compressed_mla=compressed_mla, windowed=windowed
    )
    return int(per_sequence * sequences * kv_share_per_card(model, gpus, compressed_mla=compressed_mla))


def kv_bytes_per_sequence(
    model: ModelArch, kv_dtype_bytes: float, seq: int, *, compressed_mla: bool, windowed: bool = True
) -> int:
    """KV cache of one sequence of `seq` tokens, by layer kind.

    `windowed=False` is transformers' prefill: its sliding-window cache layer keeps a slice (a view) of the
    whole prompt's keys and values, so their storage stays alive until the first decoded token replaces it
    (transformers DynamicSlidingWindowLayer.update; measured: Phi-3-mini and Mistral 7B v0.1 prefills hold
    the full prompt's KV). Serving engines free the blocks that leave the window.

    Full-attention layers grow with the context; sliding-window layers stop at the window and chunked
    layers (Llama 4) at the chunk (transformers' DynamicSlidingWindowLayer and vLLM's sliding-window manager
    keep only those tokens); linear-attention layers (Qwen3-Next, MiniMax) hold a fixed state whatever the
    context.
    """
    layers = model.decoder_layers or model.layers
    per_token_all = kv_bytes_per_token(model, kv_dtype_bytes, compressed_mla=compressed_mla)
    if model.is_mla or not layers:
        return per_token_all * seq
    per_layer_token = per_token_all // layers
    held = model.full_attention_layers * seq
    window = seq if not windowed else min(seq, model.sliding_window or seq)
    chunk = seq if not windowed else min(seq, model.attention_chunk or seq)
    held += model.sliding_layers * window + model.chunked_layers * chunk
    return int(per_layer_token * held + model.linear_state_values() * kv_dtype_bytes)


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
        + post_norm_coefficient(model, coeff) * model.hidden * model.post_norms
    )
    return int(tokens * per_token * (2 if fp32 else 1))


def post_norm_coefficient(model: ModelArch, coeff: ActivationCoefficients) -> float:
    """Bytes per token per hidden unit one extra (post-sublayer) norm saves, by how the model computes it:
    Gemma's RMSNorm (`extra_norm`) or a Llama-style one (`post_norm`, GLM-4-0414). calibration.toml."""
    return coeff.post_norm if model.post_norm_style == "llama" else coeff.extra_norm


def stored_activation_bytes(
    model: ModelArch,
    tokens: int,
    block: float,
    coeff: ActivationCoefficients,
    *,
    grad_checkpointing: bool,
    backpropagated_layers: int | None = None,
) -> float:
    """Activations saved for the backward pass, all blocks, given one block's `block` bytes.

    Without recomputation every block keeps its activations (Korthikanti et al. 2022, Table 2). With
    gradient checkpointing each block keeps only its input (checkpoint_hidden bytes per token per hidden
    unit, fitted in data/calibration.toml) and one block is recomputed at a time (Chen et al. 2016,
    "Training Deep Nets with Sublinear Memory Cost"). Freeze tuning backpropagates only through the
    trained top blocks, so only they keep activations.
    """
    if backpropagated_layers is not None:
        return backpropagated_layers * block
    layers = model.decoder_layers or model.layers
    if grad_checkpointing:
        return layers * tokens * coeff.checkpoint_hidden * model.hidden + block
    return layers * block


def megatron_state_bytes(
    params: float,
    tensor_parallel: int,
    pipeline_parallel: int,
    data_parallel: int,
    *,
    replicated_bytes_per_param: float,
    sharded_bytes_per_param: float,
) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) on one card of a Megatron 3D layout with the distributed optimizer.

    Each card holds params / (t·p) of the model (Narayanan et al. 2021 §2: tensor parallelism splits every
    layer's matrices t ways, the pipeline gives each stage L / p layers). On it: bf16 weights (2 bytes) and
    fp32 main gradients (4) on every data-parallel rank, fp32 master weights and Adam's two moments (12)
    sharded over the d ranks: 6 + 12/d bytes a parameter (Megatron-LM docs/source/api-guide/
    dist_optimizer.md, the bf16-param / fp32-grad row; data/speed.toml layout_*).
    """
    shard = params / max(tensor_parallel * pipeline_parallel, 1)
    weights = 2.0 * shard
    gradients = (replicated_bytes_per_param - 2.0) * shard
    optimizer = sharded_bytes_per_param * shard / max(data_parallel, 1)
    return weights, gradients, optimizer


def megatron_layer_activation_coefficient(model: ModelArch, seq: int, *, attention_scores: bool) -> float:
    """Bytes one transformer layer saves for the backward per token per hidden unit (× s·b·h gives bytes),
    before tensor and sequence parallelism divide it by t.

    Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models") §4.1 counts,
    tensor by tensor in 16 bits: the two norms' inputs (4), the QKV projection's input (2), Q and K (4),
    V (2), the output projection's input (2), the MLP's first input (2), its activation's input (8 for a
    4h GeLU) and its second input (8), and 1-byte dropout masks (2): 34, plus 5·a·s/h for the stored
    attention scores (softmax, its dropout mask and output), eq. 1. The same count is taken for the
    model's own shape: Q and the attention output of width heads × head_dim, K and V of the KV heads'
    width (GQA), a gated MLP's three tensors of its width f (gate, up, their product: 6·f/h) or a plain one's
    two (4·f/h), a MoE's active experts' width; no dropout masks (modern pretraining runs dropout 0, which
    saves none) — 34.2 for Qwen2.5-72B, 33.5 for Llama-3-70B, 34 for GPT-3's shape with its dropout. The
    scores term only where attention is stored (`attention_scores`): selective recomputation recomputes
    it (Table 2) and Megatron-Core's flash / fused attention (its default) never saves it.
    """
    h = float(model.hidden)
    q_width = model.heads * (
        model.qk_nope_head_dim + model.qk_rope_head_dim if model.is_mla else model.dim_head
    )
    kv_width = model.n_kv_heads * model.dim_head if not model.is_mla else model.heads * model.v_head_dim
    out_width = model.heads * (model.v_head_dim if model.is_mla else model.dim_head)
    mlp = mlp_width_per_token(model) or 4 * model.hidden
    mlp_tensors = 3.0 if model.mlp == "gated" else 2.0
    per = (
        4.0  # the two norms' inputs
        + 2.0  # the QKV projection's input
        + 2.0 * q_width / h  # Q
        + 2.0 * 2.0 * kv_width / h  # K and V
        + 2.0 * out_width / h  # the output projection's input
        + 2.0  # the MLP's first input
        + 2.0 * mlp_tensors * mlp / h  # the MLP's intermediates
    )
    if attention_scores:
        per += 5.0 * model.heads * seq / h
    return per


def megatron_activation_bytes(
    model: ModelArch,
    seq: int,
    micro_batch: int,
    tensor_parallel: int,
    pipeline_parallel: int,
    *,
    recompute: bool,
    attention_scores: bool,
) -> tuple[float, float]:
    """Activations alive on the first and on the last pipeline stage of a Megatron layout at its peak.

    Tensor and sequence parallelism divide every layer's activations by t (Korthikanti et al. 2022 eq. 4:
    s·b·h·(34 + 5·a·s/h)/t). Under 1F1B the first stage runs p micro-batches forward before its first
    backward, so it holds p micro-batches of its L/p layers: L layers' worth, whatever p (§4.2.3;
    Narayanan et al. 2021 §2.2.1); the last stage holds one. Full recomputation keeps only each layer's
    input (2·s·b·h/t with sequence parallelism, Table 2) and recomputes one layer at a time.
    """
    layers = model.decoder_layers or model.layers
    p = max(pipeline_parallel, 1)
    tokens_h = float(seq) * micro_batch * model.hidden / max(tensor_parallel, 1)
    layer = tokens_h * megatron_layer_activation_coefficient(model, seq, attention_scores=attention_scores)
    stage_layers = math.ceil(layers / p)
    if recompute:
        first = layers * 2.0 * tokens_h + layer
        last = stage_layers * 2.0 * tokens_h + layer
    else:
        first = stage_layers * min(p, layers) * layer
        last = stage_layers * layer
    return first, last


def megatron_logit_bytes(model: ModelArch, seq: int, micro_batch: int, tensor_parallel: int) -> float:
    """The last stage's logits of one micro-batch: the output layer's 16-bit logits and the fp32 copy the
    vocab-parallel cross-entropy keeps for its backward, each split t ways over the vocabulary
    (Megatron-Core tensor_parallel/cross_entropy.py, VocabParallelCrossEntropy): 6·s·b·v/t bytes."""
    return 6.0 * seq * micro_batch * model.vocab / max(tensor_parallel, 1)


def eager_scores_bytes(
    model: ModelArch, batch: int, seq: int, bytes_per_score: float, queries: int | None = None
) -> int:
    """One block's attention scores where the model has no flash/SDPA path (0 otherwise): every query against
    every key, seq² at once; an engine that prefills in chunks (llama.cpp's n_ubatch) scores `queries` of them
    at a time against the whole context."""
    if model.attention != "eager":
        return 0
    rows = seq if queries is None else min(queries, seq)
    return int(bytes_per_score * batch * model.heads * rows * seq)


def sliding_window_mask_bytes(model: ModelArch, batch: int, seq: int) -> int:
    """The [batch, 1, seq, seq] bool mask a sliding-window model builds once the prompt outruns the window.

    SDPA's causal flag cannot express a window, so transformers materialises the mask once per forward and
    keeps it for every layer: 1 byte per (query, key) pair. SDPA's bf16 additive copy of it lives only inside
    one layer's attention, while the MLP's larger intermediates are not allocated, so it adds nothing to the
    block's peak (measured: Mistral 7B v0.1 and Gemma 3 1B at 16k tokens, data/measured/memory.csv). Eager
    models build their mask in the scores' own terms (`eager_scores_bytes`).
    """
    if not model.sliding_window or seq <= model.sliding_window or model.attention == "eager":
        return 0
    return batch * seq * seq


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


# -- training model states -------------------------------------------------------------------------------

ModelState = Literal["optimizer", "gradients", "weights"]

# The ZeRO stage from which each model state is partitioned over the data-parallel cards: stage 1 the
# optimizer states (P_os), stage 2 also the gradients (P_os+g), stage 3 also the parameters (P_os+g+p)
# (ZeRO paper Fig. 1 / Table 1, estimators.md §2.6). FSDP's SHARD_GRAD_OP is stage 2, FULL_SHARD stage 3.
ZERO_SHARDED_FROM_STAGE: dict[ModelState, int] = {"optimizer": 1, "gradients": 2, "weights": 3}

# LLaMA-Factory's freeze tuning trains the last `freeze_trainable_layers` blocks, 2 by default
# (LLaMA-Factory src/llamafactory/hparams/finetuning_args.py).
FREEZE_TRAINABLE_LAYERS = 2


def optimizer_bytes_per_param(optimizer: Optimizer, *, full_precision_states: bool) -> float:
    """Optimizer state per trained parameter.

    AdamW keeps m and v: 8 B in fp32 (ZeRO §3.1's K=12 less the fp32 master copy), 4 B in bf16 (pure
    bf16 training, LLaMA-Factory "pure_bf16"); 8-bit Adam 2 B (bitsandbytes; HF model_memory_anatomy,
    "2 bytes * number of parameters for 8-bit AdamW"); SGD with momentum one state (HF anatomy: 4 B).
    estimators.md §2.2.
    """
    state = 4.0 if full_precision_states else 2.0
    if optimizer is Optimizer.ADAMW:
        return 2 * state
    if optimizer is Optimizer.ADAMW_8BIT:
        return 2.0
    return state


def trained_weight_bytes_per_param(precision: Precision, *, master_weights: bool) -> float:
    """Bytes per parameter of a fully trained model's weights, and alike of their gradients.

    With fp32 master weights (PyTorch automatic mixed precision: the parameters stay fp32 and torch.autocast
    computes in 16 bit) weights and gradients are 4 B each, the "fp32 + AdamW" and HF-accounting rows of
    estimators.md §2.2. Pure 16-bit training keeps both in the training dtype (PyTorch gives .grad the
    parameter's dtype; LLaMA-Factory "pure_bf16").
    """
    if master_weights:
        return 4.0
    return BYTES_PER_WEIGHT.get(precision, 2.0)


def zero_shard(nbytes: float, state: ModelState, zero_stage: int, gpus: int) -> float:
    """One card's share of a model state under ZeRO stage `zero_stage` (or FSDP) over `gpus` cards.

    A state is divided by the card count from the stage that partitions it (ZERO_SHARDED_FROM_STAGE;
    ZeRO Table 1: ZeRO-1 2Ψ + 2Ψ + KΨ/N, ZeRO-2 2Ψ + (2+K)Ψ/N, ZeRO-3 (2+2+K)Ψ/N), else held whole.
    """
    if zero_stage >= ZERO_SHARDED_FROM_STAGE[state] and gpus > 1:
        return nbytes / gpus
    return nbytes


def adapter_bytes(trainable: int) -> float:
    """fp32 weights (and alike gradients) of the trained adapters or unfrozen blocks: 4 B per parameter.

    PEFT upcasts adapter weights to fp32 (autocast_adapter_dtype=True) and LLaMA-Factory upcasts the
    trainable parameters of freeze tuning (upcast_trainable_params); gradients take their dtype.
    """
    return 4.0 * trainable


def freeze_trained_layers(model: ModelArch) -> int:
    """Blocks freeze tuning trains: the last FREEZE_TRAINABLE_LAYERS (LLaMA-Factory), at most all."""
    return min(FREEZE_TRAINABLE_LAYERS, model.decoder_layers or model.layers)


def freeze_trainable_params(model: ModelArch) -> int:
    """Parameters freeze tuning trains: its trained blocks' share of the blocks' parameters."""
    layers = model.decoder_layers or model.layers
    return freeze_trained_layers(model) * (model.layer_params // max(layers, 1))


def autocast_weight_copy_bytes(model: ModelArch, *, grad_checkpointing: bool) -> int:
    """bf16 copies of fp32 weights that torch.autocast makes and saves for the backward pass.

    Under automatic mixed precision every linear layer's fp32 weight is cast to 16 bit in the forward pass
    and the cast copy is saved for the backward pass (torch.autocast casts per op; its weight cache lives
    until the autocast region exits). The lm_head's copy always lives (it is outside the checkpointed
    blocks); the blocks' linear weights only when the blocks are not recomputed. The `full` recipe of
    data/measured/memory.csv (fp32 parameters under bf16 autocast, tools/measure_memory.py) was fitted with
    this term in the estimate.
    """
    copies = model.vocab * model.hidden + (0 if grad_checkpointing else model.linear_params)
    return 2 * copies


def qlora_dequantization_bytes(model: ModelArch) -> int:
    """The one linear layer QLoRA dequantizes from NF4 to bf16 at a time, the largest MLP projection.

    QLoRA §3: "we dequantize the storage data type to the computation data type to perform the forward and
    backward pass"; bitsandbytes' Linear4bit calls dequantize_4bit on the layer's weight per matmul, so one
    bf16 weight (2 B per element) is alive at a time.
    """
    return 2 * max(i * o for i, o in model.mlp_linear_shapes(mlp_width_per_token(model)))


def zero3_buffer_bytes(
    params: int, trainable: int, buffers: Zero3Buffers, *, zero_stage: int, gpus: int
) -> float:
    """ZeRO-3's per-card buffers on top of the shards: gathered 16-bit parameters in flight and the fp32
    gradient reduce bucket, neither more than the model itself.

    DeepSpeed defaults stage3_max_live_parameters (1e9) and reduce_bucket_size (5e8), as counted by
    EleutherAI's calc_transformer_mem.py (estimators.md §2.6; values in data/calibration.toml [zero3]).
    Nothing is gathered on a single card.
    """
    if zero_stage < 3 or gpus <= 1:
        return 0.0
    live = min(buffers.live_parameters, params) * 2
    return live + min(buffers.reduce_bucket, trainable) * 4


def embedding_gradient_bytes(model: ModelArch, copies: float) -> float:
    """The dense fp32 V×h gradients of the embedding (and a tied lm_head) alive as the backward pass ends.

    PyTorch's nn.Embedding builds a dense gradient by default (sparse=False), and a tied lm_head adds its
    own before the two are summed: short-lived V×h copies that decide the peak of small-model,
    short-sequence jobs. `copies`, how many are alive together, is fitted to data/measured/memory.csv
    (calibration.toml embedding_grad_copies).
    """
    return copies * 4 * model.vocab * model.hidden


# -- runtime ------------------------------------------------------------------------------------------------


def vllm_profile_activation_bytes(vllm: VllmConstants) -> int:
    """vLLM's profile run, less its logits: a near-constant rest (reproduces llm-d's H100 logs within 4%,
    estimators.md §3.3; calibration.toml [vllm] profile_base_gib)."""
    return int(vllm.profile_base_gib * GIB)


def vllm_prefill_chunk_tokens(card: Card | None, vllm: VllmConstants) -> int:
    """The prefill chunk vLLM's OpenAI server profiles with by default on `card`.

    vllm/engine/arg_utils.py (default_max_num_batched_tokens): 8192 tokens on devices of 70 GiB or more
    whose device name does not contain "a100" (vLLM PR #17885: the larger chunk lowered A100 throughput),
    2048 on the others. The rule's numbers and names are in calibration.toml [vllm]; a card's device name
    (cards.toml cuda_device_name) is what the runtime reports. Without a card, the smaller chunk.
    """
    if card is None or card.memory_gib < vllm.large_card_gib:
        return vllm.max_num_batched_tokens
    device_name = (card.cuda_device_name or "").lower()
    if any(name.lower() in device_name for name in vllm.small_chunk_device_names):
        return vllm.max_num_batched_tokens
    return vllm.max_num_batched_tokens_large_card


def runtime_overhead_bytes(
    tracked: int, cal: Calibration, *, gpus: int, kind: Literal["allocator", "engine"]
) -> float:
    """What the process holds outside PyTorch's tracked tensors (`kind`: the runtime profile's `overhead`).

    CUDA context and kernels (HF model_memory_anatomy, gpu_poor; estimators.md §2.5). "engine" (vLLM, and
    SGLang in its stead): its non-torch memory, larger with tensor parallelism (llm-d empirical results).
    "allocator": the caching allocator's slack as a share of the tracked peak (ZeRO §3.2 fragmentation) and
    NCCL buffers when the job spans cards. Values in calibration.toml [runtime] and [vllm].
    """
    runtime = cal.runtime
    context = runtime.cuda_context_gib * GIB
    if kind == "engine":
        non_torch = cal.vllm.non_torch_tp_gib if gpus > 1 else cal.vllm.non_torch_gib
        return context + non_torch * GIB
    overhead = context + runtime.allocator_slack * tracked
    if gpus > 1:
        overhead += runtime.nccl_gib * GIB
    return overhead


# -- the article's rule of thumb ----------------------------------------------------------------------------


def folk_rule(
    model: ModelArch, precision: Precision, task: Task, method: Method | None, rule: FolkRuleConstants
) -> FolkRule:
    """The rule users know, shown beside the estimate: weights × 4–6 for training, × 1.2 margin.

    The article (000_aa0119c4cafec483.txt line 11) counts FP16 weights (2 B per parameter) for training and
    multiplies by 4–6; line 14 adds a 1.2 redundancy factor. Inference takes the weights in the asked format
    alone. Factors in calibration.toml [folk_rule].
    """
    per = BYTES_PER_WEIGHT[precision]
    if task is Task.INFERENCE:
        weights = int(model.total_params * per)
        factor = rule.inference_factor
        return FolkRule(weights_bytes=weights, low_factor=factor, high_factor=factor, margin=rule.margin)
    per = rule.training_bytes_per_param if method in (Method.FULL, None) else per
    return FolkRule(
        weights_bytes=int(model.total_params * per),
        low_factor=rule.training_low_factor,
        high_factor=rule.training_high_factor,
        margin=rule.margin,
    )
