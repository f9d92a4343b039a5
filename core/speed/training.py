"""How fast a model trains: FLOPs per token over the cards' tensor peak × utilisation, and wall hours.

Utilisation starts from the card segment's single-job MFU (data/speed.toml [mfu]) and loses what the
parallelism costs: the pipeline bubble, tensor parallelism's all-reduces, expert parallelism's all-to-all,
QLoRA's dequantisation, an optimizer offloaded to host memory; FP8 runs the GEMMs faster on cards with FP8
tensor cores. `TrainingJob` holds the job's shape; `tokens_per_s_per_gpu` is the one formula both the answers
(`training_speed`) and the published-figure check (core/speed/published.py) use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.estimator import Estimate, resolve_model, terms
from core.query import Method, Precision, Query, Task
from core.registry import ModelArch, load_registry
from core.speed import terms as speed_terms
from core.speed.constants import SpeedConstants, load_speed_constants
from core.speed.memo import IdentityMemo


class TrainingSpeed(BaseModel):
    """Training throughput over all cards, and the wall-clock hours for `tokens` when given."""

    model_config = ConfigDict(frozen=True)
    kind: ClassVar[Literal["training"]] = "training"  # the answers' `speed.kind`

    tokens_per_s: float
    training_hours: float | None
    gpu_hours: float | None
    mfu: float
    flops_per_token: float
    step_s: float
    communication_s: float
    band: float = 0.3
    calibrated_on: list[str] = []
    notes: list[str] = []


def training_flops_per_token(query: Query, active_params: int, trainable_params: int) -> float:
    """FLOPs one trained token costs in its linear layers: 6N full, 4N LoRA/QLoRA, +2N with recompute."""
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


def attention_flops_per_token(model: ModelArch, seq: int, method: Method, recompute: bool) -> float:
    """Causal attention's score and value products per trained token: 2·L·h·d·s forward (half of the full
    4·L·h·d·s), ×3 with the backward (×2 for LoRA, no weight gradients there anyway), +1 forward to recompute
    (Megatron-LM's model-FLOPs count, Narayanan et al. 2021 appendix)."""
    layers = model.decoder_layers or model.layers
    forward = 2.0 * layers * model.heads * model.dim_head * seq
    passes = 3.0 if method is Method.FULL else 2.0
    if recompute:
        passes += 1.0
    return forward * passes


@dataclass(frozen=True)
class TrainingJob:
    """A training job's shape on its cards; everything `tokens_per_s_per_gpu` needs except the constants."""

    card: Card
    gpus: int
    precision: Precision
    method: Method
    flops_per_token: float
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    expert_parallel: int = 1
    virtual_stages: int = 1
    micro_batches: float = 1.0  # micro-batches per pipeline per step (GBS / (MBS · data-parallel ranks))
    hidden: int = 0
    experts_active: int = 0
    moe_layers: int = 0
    expert_width: int = 0  # an expert's FFN width (moe_intermediate)
    expert_flops_share: float = 0.0  # share of the active FLOPs that run in expert GEMMs
    cpu_offload: bool = False
    communication_bytes: float = 0.0  # data-parallel bytes per card per step (ZeRO / DDP)
    tokens_per_card_step: float = 1.0


def utilisation(c: SpeedConstants, job: TrainingJob) -> float:
    """The MFU the job reaches: the segment's, less the pipeline bubble and tensor parallelism's share,
    QLoRA's dequantisation and an offloaded optimizer."""
    t = c.training
    mfu = c.mfu.for_card(job.card)
    mfu *= speed_terms.pipeline_bubble_factor(job.pipeline_parallel, job.micro_batches, job.virtual_stages)
    mfu *= speed_terms.tensor_parallel_factor(job.tensor_parallel, t.tp_loss_per_doubling)
    if job.method is Method.QLORA:
        mfu *= t.qlora_throughput_factor
    if job.cpu_offload:
        mfu *= t.cpu_offload_factor
    return mfu


def tokens_per_s_per_gpu(c: SpeedConstants, job: TrainingJob) -> float:
    """Trained tokens/s on one card: compute at the utilised peak plus the exposed expert all-to-all; over
    PCIe the data-parallel collectives can outlast the compute they overlap with."""
    peak = speed_terms.tensor_peak_flops(job.card, job.precision, c.training.fp8_gain)
    expert = speed_terms.expert_gemm_factor(job.expert_width, c.training.expert_width_half)
    share = job.expert_flops_share
    compute_s = job.flops_per_token * ((1 - share) + share / expert) / (peak * utilisation(c, job))
    a2a = speed_terms.expert_all_to_all_bytes(
        job.hidden, job.experts_active, job.moe_layers, job.expert_parallel
    )
    a2a_s = (
        a2a
        / speed_terms.expert_link_bytes_s(job.card, c.link, job.expert_parallel)
        * c.training.moe_a2a_exposed
    )
    per_token = compute_s + a2a_s
    if not job.card.has_nvlink and job.communication_bytes:
        comm_per_token = (
            job.communication_bytes
            / speed_terms.link_one_way_bytes_s(job.card, c.link)
            / job.tokens_per_card_step
        )
        per_token = max(per_token, comm_per_token)
    return 1.0 / per_token


def _communication_bytes_per_step(estimate: Estimate, model: ModelArch, gpus: int) -> float:
    """Bytes each card sends per optimizer step: ZeRO-3 gathers the weights twice and reduce-scatters the
    gradients; plain data parallel all-reduces the gradients (≈2× their size); (N-1)/N of each."""
    if gpus <= 1:
        return 0.0
    query = estimate.query
    precision = query.precision or Precision.BF16
    share = (gpus - 1) / gpus
    trainable = estimate.trainable_params or estimate.params
    grad_bytes = 2.0 * trainable if (query.method or Method.FULL) is Method.FULL else 4.0 * trainable
    base = Precision.NF4 if query.method is Method.QLORA else precision
    if (query.zero_stage or 0) >= 3:
        return share * (2 * terms.weight_bytes(model, base) + grad_bytes)
    return share * 2 * grad_bytes


_SPEEDS: IdentityMemo[TrainingSpeed] = IdentityMemo()


def training_speed(estimate: Estimate, card: Card, gpus: int, tokens: float | None) -> TrainingSpeed:
    """Tokens/s over `gpus` data-parallel cards (each runs its own micro-batch) and the hours for `tokens`.
    Remembered per (model, card, constants), the query and the parameter counts (core/speed/memo.py)."""
    c = load_speed_constants()
    query = estimate.query
    model = resolve_model(query, load_registry())
    anchors = (model, card, c)
    fields = (gpus, tokens, query, estimate.params, estimate.active_params, estimate.trainable_params)
    speed = _SPEEDS.get(anchors, fields)
    if speed is None:
        speed = _SPEEDS.put(anchors, fields, _training_speed(estimate, card, gpus, tokens, c=c, model=model))
    return speed.model_copy(update={"notes": list(speed.notes), "calibrated_on": list(speed.calibrated_on)})


def _training_speed(
    estimate: Estimate, card: Card, gpus: int, tokens: float | None, *, c: SpeedConstants, model: ModelArch
) -> TrainingSpeed:
    from core.speed.calibration import band_for, calibrated_on

    query = estimate.query
    gpus = max(gpus, 1)
    method = query.method or Method.FULL
    seq = query.seq or 2048
    notes: list[str] = []
    flops = training_flops_per_token(query, estimate.active_params, estimate.trainable_params)
    flops += attention_flops_per_token(model, seq, method, bool(query.grad_checkpointing))
    tokens_per_card_step = (query.batch or 1) * seq
    job = TrainingJob(
        card=card,
        gpus=gpus,
        precision=query.precision or Precision.BF16,
        method=method,
        flops_per_token=flops,
        communication_bytes=_communication_bytes_per_step(estimate, model, gpus),
        tokens_per_card_step=tokens_per_card_step,
    )
    per_gpu = tokens_per_s_per_gpu(c, job)
    peak = speed_terms.tensor_peak_flops(card, job.precision, c.training.fp8_gain)
    compute_s = tokens_per_card_step * flops / (peak * utilisation(c, job))
    communication_s = (
        job.communication_bytes / speed_terms.link_one_way_bytes_s(card, c.link) if gpus > 1 else 0.0
    )
    if method is Method.QLORA:
        notes.append("qlora_dequant")
    if job.precision is Precision.FP8 and card.fp8_tflops:
        notes.append("fp8_tensor_cores")
    if gpus > 1 and not card.has_nvlink:
        notes.append("no_nvlink")
    if communication_s > compute_s and not card.has_nvlink:
        notes.append("communication_bound")
    if query.grad_checkpointing:
        notes.append("recompute")
    tokens_per_s = gpus * per_gpu
    hours = tokens / tokens_per_s / 3600 if tokens else None
    return TrainingSpeed(
        tokens_per_s=tokens_per_s,
        training_hours=hours,
        gpu_hours=hours * gpus if hours is not None else None,
        mfu=utilisation(c, job),
        flops_per_token=flops,
        step_s=tokens_per_card_step / per_gpu,
        communication_s=communication_s,
        band=band_for(c, "training", card, training=True),
        calibrated_on=calibrated_on("training", card, training=True),
        notes=notes,
    )


def is_training(query: Query) -> bool:
    return query.task is not Task.INFERENCE
