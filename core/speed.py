"""How fast a job runs on a card: decode and prefill for inference, tokens/s and wall time for training.

Decode is bandwidth-bound (bytes read per step over bandwidth × efficiency, plus a fixed per-layer cost),
prefill and training are compute-bound (FLOPs over dense 16-bit peak × MFU); multi-card jobs add their
collectives over the cards' link. The constants live in data/speed.toml with their sources; the formulas
are estimators.md §2.7. Results are estimates for planning, not benchmarks: the answer says what it assumed.
"""

from __future__ import annotations

import tomllib
from functools import cache

from pydantic import BaseModel, ConfigDict

from core.catalog import Card, Segment
from core.estimator import Estimate, resolve_model, terms
from core.paths import DATA_DIR
from core.query import Method, Precision, Query, Task
from core.registry import ModelArch, load_registry
from core.runtimes import runtime_profile


class DecodeConstants(BaseModel):
    model_config = ConfigDict(frozen=True)

    bandwidth_efficiency: float
    overhead_s_per_layer: float
    source: str


class MfuConstants(BaseModel):
    model_config = ConfigDict(frozen=True)

    datacenter: float
    workstation: float
    consumer: float
    source: str

    def for_card(self, card: Card) -> float:
        return {
            Segment.DATACENTER: self.datacenter,
            Segment.WORKSTATION: self.workstation,
            Segment.CONSUMER: self.consumer,
        }[card.segment]


class TrainingConstants(BaseModel):
    model_config = ConfigDict(frozen=True)

    qlora_throughput_factor: float
    qlora_source: str
    forward_flops_per_param: float
    backward_input_flops_per_param: float
    backward_weight_flops_per_param: float
    flops_source: str


class LinkConstants(BaseModel):
    model_config = ConfigDict(frozen=True)

    collective_efficiency: float
    allreduce_latency_s_nvlink: float
    allreduce_latency_s_pcie: float
    source: str


class DataConstants(BaseModel):
    """How an amount of data the user gave (samples, a file size) becomes training tokens."""

    model_config = ConfigDict(frozen=True)

    bytes_per_token_en: float
    bytes_per_token_zh: float
    bytes_per_zh_character: float
    sample_tokens: int
    sample_epochs: float
    source: str


class SpeedConstants(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    decode: DecodeConstants
    mfu: MfuConstants
    training: TrainingConstants
    link: LinkConstants
    data: DataConstants


@cache
def load_speed_constants() -> SpeedConstants:
    with open(DATA_DIR / "speed.toml", "rb") as handle:
        return SpeedConstants.model_validate(tomllib.load(handle))


class InferenceSpeed(BaseModel):
    """Generation speed of one job: per sequence, for the whole batch, and the wait for the first token."""

    model_config = ConfigDict(frozen=True)

    decode_tokens_per_s: float
    aggregate_tokens_per_s: float
    batch: int
    ttft_s: float
    efficiency: float
    bound_fraction: float
    mfu: float
    parallelism: str
    bytes_per_step: int
    notes: list[str] = []


class TrainingSpeed(BaseModel):
    """Training throughput over all cards, and the wall-clock hours for `tokens` when given."""

    model_config = ConfigDict(frozen=True)

    tokens_per_s: float
    training_hours: float | None
    gpu_hours: float | None
    mfu: float
    flops_per_token: float
    step_s: float
    communication_s: float
    notes: list[str] = []


def _model(estimate: Estimate) -> ModelArch:
    return resolve_model(estimate.query, load_registry())


def tensor_tflops(card: Card, precision: Precision | None) -> float:
    """Dense tensor throughput the job's matmuls run at: fp8 where asked and supported, else 16-bit."""
    if precision is Precision.FP8 and card.fp8_tflops:
        return card.fp8_tflops
    return card.tensor_tflops


def _link_one_way_bytes_s(card: Card) -> float:
    """Card-to-card one-way bytes/s that collectives reach (interconnect_gb_s is bidirectional)."""
    link = load_speed_constants().link
    gb_s = card.interconnect_gb_s or 32.0
    return gb_s / 2 * 1e9 * link.collective_efficiency


def _allreduce_latency(card: Card) -> float:
    link = load_speed_constants().link
    return link.allreduce_latency_s_nvlink if card.has_nvlink else link.allreduce_latency_s_pcie


def decode_weight_bytes(model: ModelArch, precision: Precision, batch: int) -> float:
    """Weight bytes one decode step reads: all but the embedding table (one row is read); for MoE the
    dense part plus the experts that `batch` tokens route to (E·(1-(1-k/E)^B) of them per layer)."""
    total = terms.weight_bytes(model, precision)
    per_param = total / max(model.total_params, 1)
    embed_per = 2.0 if precision in terms.LINEAR_ONLY else per_param
    skipped = model.embedding_params * embed_per if not model.tied_embeddings else 0.0
    if not model.is_moe:
        return max(total - skipped, 0.0)
    expert_all = model.moe_layers * model.experts * model.expert_params
    touched = model.experts * (1 - (1 - model.experts_active / model.experts) ** max(batch, 1))
    expert_read = model.moe_layers * touched * model.expert_params
    dense = model.total_params - expert_all
    return max((dense + expert_read) * per_param - skipped, 0.0)


def inference_speed(estimate: Estimate, card: Card, gpus: int) -> InferenceSpeed:
    """Decode tokens/s per sequence and for the batch, and time to first token for a full-context prompt."""
    constants = load_speed_constants()
    query = estimate.query
    model = _model(estimate)
    precision = query.precision or Precision.BF16
    seq = query.seq or 2048
    gpus = max(gpus, 1)
    batch = query.batch or 1
    notes: list[str] = []
    engine = runtime_profile(query.runtime).speed
    if engine.continuous_batching and estimate.vllm is not None:
        # A serving engine decodes the sequences its KV pool holds at once (the rest queue).
        pool_batch = max(1, estimate.vllm.concurrent_sequences)
        if pool_batch != batch:
            notes.append("batch_from_vllm_pool")
        batch = pool_batch

    tensor_parallel = gpus > 1 and engine.tensor_parallel
    parallelism = "single" if gpus == 1 else ("tensor" if tensor_parallel else "pipeline")
    if gpus > 1 and not tensor_parallel:
        notes.append("layers_split_sequential")
    if gpus > 1 and not card.has_nvlink:
        notes.append("no_nvlink")
    split = gpus if tensor_parallel else 1
    efficiency = engine.decode_bandwidth_efficiency or constants.decode.bandwidth_efficiency
    bandwidth = card.bandwidth_gb_s * 1e9 * efficiency
    mfu = constants.mfu.for_card(card)
    peak = tensor_tflops(card, precision) * 1e12 * mfu
    kv_token = terms.kv_bytes_per_token(
        model,
        terms.activation_dtype_bytes(precision),
        compressed_mla=runtime_profile(query.runtime).memory.kv_compressed_mla,
    )
    layers = model.decoder_layers or model.layers

    # a fixed cost per layer per step: the engine's own (CUDA graphs make vLLM's small), else speed.toml's
    per_layer_s = engine.decode_overhead_s_per_layer
    if per_layer_s is None:
        per_layer_s = constants.decode.overhead_s_per_layer

    def step_seconds(b: int) -> tuple[float, float]:
        read = decode_weight_bytes(model, precision, b) + b * seq * kv_token
        memory_s = read / split / bandwidth
        compute_s = 2.0 * model.active_params * b / split / peak
        comm_s = 0.0
        if tensor_parallel:
            message = b * model.hidden * 2
            comm_s = 2 * layers * (_allreduce_latency(card) + message / _link_one_way_bytes_s(card))
        return max(memory_s, compute_s) + comm_s + layers * per_layer_s, read

    one_s, _ = step_seconds(1)
    batch_s, read = step_seconds(batch)
    bound_s = (
        (decode_weight_bytes(model, precision, 1) + seq * kv_token) / split / (card.bandwidth_gb_s * 1e9)
    )
    if query.precision in (Precision.INT8,) and engine.int8_kernels == "bitsandbytes":
        notes.append("bnb_int8_slow")

    # transformers prefills the whole batch of prompts in one call; a serving engine (vLLM) prefills each
    # request as it arrives, so its concurrency does not delay one prompt's first token.
    prompts = 1 if engine.continuous_batching else (query.batch or 1)
    prefill_tokens = prompts * seq
    attention = 2.0 * layers * model.heads * model.dim_head * seq * prefill_tokens
    prefill_flops = 2.0 * model.active_params * prefill_tokens + attention
    prefill_s = max(
        prefill_flops / split / peak, decode_weight_bytes(model, precision, prompts) / split / bandwidth
    )
    return InferenceSpeed(
        decode_tokens_per_s=1.0 / one_s,
        aggregate_tokens_per_s=batch / batch_s,
        batch=batch,
        ttft_s=prefill_s,
        efficiency=efficiency,
        bound_fraction=min(1.0, bound_s / one_s),
        mfu=mfu,
        parallelism=parallelism,
        bytes_per_step=int(read / split),
        notes=notes,
    )


def training_flops_per_token(query: Query, active_params: int, trainable_params: int) -> float:
    """FLOPs one trained token costs: 6N full, 4N LoRA/QLoRA, +2N with activation recompute."""
    t = load_speed_constants().training
    n = float(active_params)
    method = query.method or Method.FULL
    if method is Method.FULL:
        flops = (
            t.forward_flops_per_param + t.backward_input_flops_per_param + t.backward_weight_flops_per_param
        ) * n
    elif method is Method.FREEZE:
        # The backward pass stops at the first trained block.
        flops = (
            t.forward_flops_per_param * n
            + (t.backward_input_flops_per_param + t.backward_weight_flops_per_param) * trainable_params
        )
    else:
        flops = (t.forward_flops_per_param + t.backward_input_flops_per_param) * n
        flops += (t.backward_input_flops_per_param + t.backward_weight_flops_per_param) * trainable_params
    if query.grad_checkpointing and method is not Method.FREEZE:
        flops += t.forward_flops_per_param * n
    return flops


def _communication_bytes_per_step(estimate: Estimate, gpus: int) -> float:
    """Bytes each card sends per optimizer step: ZeRO-3 gathers the weights twice and reduce-scatters the
    gradients; plain data parallel all-reduces the gradients (≈2× their size); (N-1)/N of each."""
    if gpus <= 1:
        return 0.0
    query = estimate.query
    model = _model(estimate)
    precision = query.precision or Precision.BF16
    share = (gpus - 1) / gpus
    trainable = estimate.trainable_params or estimate.params
    grad_bytes = 2.0 * trainable if (query.method or Method.FULL) is Method.FULL else 4.0 * trainable
    base = Precision.NF4 if query.method is Method.QLORA else precision
    if (query.zero_stage or 0) >= 3:
        return share * (2 * terms.weight_bytes(model, base) + grad_bytes)
    return share * 2 * grad_bytes


def training_speed(estimate: Estimate, card: Card, gpus: int, tokens: float | None) -> TrainingSpeed:
    """Tokens/s over `gpus` cards (each runs its own micro-batch) and the hours for `tokens` tokens."""
    constants = load_speed_constants()
    query = estimate.query
    gpus = max(gpus, 1)
    notes: list[str] = []
    mfu = constants.mfu.for_card(card)
    flops_token = training_flops_per_token(query, estimate.active_params, estimate.trainable_params)
    peak = tensor_tflops(card, query.precision) * 1e12 * mfu
    if query.method is Method.QLORA:
        peak *= constants.training.qlora_throughput_factor
        notes.append("qlora_dequant")
    tokens_per_card_step = (query.batch or 1) * (query.seq or 2048)
    compute_s = tokens_per_card_step * flops_token / peak
    communication_s = _communication_bytes_per_step(estimate, gpus) / _link_one_way_bytes_s(card)
    # NVLink clusters' MFU (data/speed.toml) already includes their communication; over PCIe the
    # collectives can outlast the compute they overlap with, so the slower of the two sets the pace.
    step_s = compute_s if card.has_nvlink else max(compute_s, communication_s)
    if gpus > 1 and not card.has_nvlink:
        notes.append("no_nvlink")
    if communication_s > compute_s and not card.has_nvlink:
        notes.append("communication_bound")
    if query.grad_checkpointing:
        notes.append("recompute")
    tokens_per_s = gpus * tokens_per_card_step / step_s
    hours = tokens / tokens_per_s / 3600 if tokens else None
    return TrainingSpeed(
        tokens_per_s=tokens_per_s,
        training_hours=hours,
        gpu_hours=hours * gpus if hours is not None else None,
        mfu=mfu,
        flops_per_token=flops_token,
        step_s=step_s,
        communication_s=communication_s,
        notes=notes,
    )


def is_training(query: Query) -> bool:
    return query.task is not Task.INFERENCE
