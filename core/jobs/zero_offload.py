"""Training with system memory: DeepSpeed ZeRO-Offload / ZeRO-3 offload / ZeRO-Infinity, Unsloth's offloaded
checkpoints, and chunked (fused) cross-entropy that never holds the whole logits.

DeepSpeed's own estimators (deepspeed/runtime/zero/stage3.py `estimate_zero3_model_states_mem_needs`,
stage_1_and_2.py `estimate_zero2_model_states_mem_needs`, @edaa722), Ψ parameters, N cards, LL the largest
layer:
  ZeRO-2 + optimizer offload   GPU 2Ψ                 host Ψ·max(4N, 16)·1.5
  ZeRO-3 + optimizer offload   GPU 4·LL + 2Ψ/N        host Ψ·16·1.5
  ZeRO-3 + params + optimizer  GPU 4·LL               host Ψ·18·1.5   (NVMe instead of host: ZeRO-Infinity)
The 1.5 is DeepSpeed's `additional_buffer_factor` for pinned buffers; gpufit's host figure is Ψ × bytes
with it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.jobs.constants import load_job_constants
from core.query import Method, Offload, Query, Task
from core.registry import ModelArch

OFFLOADED = frozenset({Offload.OPTIMIZER, Offload.PARAMS, Offload.NVME})


def largest_layer_params(model: ModelArch) -> int:
    """LL in DeepSpeed's estimator: the embedding or one transformer block, whichever is larger."""
    embedding = model.vocab * model.hidden
    layers = model.decoder_layers or model.layers or 1
    block = max(0, model.total_params - embedding * (1 if model.tied_embeddings else 2)) // layers
    return max(embedding, block)


def gpu_states(query: Query, model: ModelArch, gpus: int) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes on one card for a full fine-tune with ZeRO offload."""
    c = load_job_constants().zero
    params = model.total_params
    gathered = c.gathered_bytes_per_param * largest_layer_params(model)
    stage = query.zero_stage or 0
    if query.offload in (Offload.PARAMS, Offload.NVME):
        return gathered, 0.0, 0.0
    # optimizer offloaded: the 16-bit weights stay (sharded under ZeRO-3), gradients stream to the host
    if stage >= 3:
        return gathered + 2.0 * params / max(gpus, 1), 0.0, 0.0
    return 2.0 * params, 0.0, 0.0


def host_bytes(query: Query, model: ModelArch) -> int:
    """System memory (or NVMe for ZeRO-Infinity) the offloaded states take, per node."""
    c = load_job_constants().zero
    params = model.total_params
    gpus = query.gpus or 1
    if query.offload in (Offload.PARAMS, Offload.NVME):
        per = c.host_bytes_params
    elif (query.zero_stage or 0) >= 3:
        per = c.host_bytes_optimizer
    else:
        per = max(4.0 * gpus, c.host_bytes_optimizer)
    return int(params * per * c.buffer_factor)


def step_offload_seconds(query: Query, model: ModelArch, host_bandwidth_bytes_s: float) -> float:
    """What offload adds to one optimizer step: the CPU Adam pass over the fp32 states at host bandwidth, and
    the 16-bit parameters in and gradients out over PCIe (parameters once more per forward and backward when
    they live on the host)."""
    c = load_job_constants()
    params = model.total_params / max(query.gpus or 1, 1)
    adam = params * c.zero.cpu_adam_bytes_per_param / host_bandwidth_bytes_s
    moves = 2 if query.offload is Offload.OPTIMIZER else 4
    pcie = params * 2.0 * moves / (c.host.pcie_gb_s * 1e9)
    return adam + pcie


def loss_chunk_tokens(query: Query) -> int | None:
    """Tokens whose logits are alive at once with a chunked / fused cross-entropy (Liger, Unsloth), or
    None."""
    if query.task is Task.INFERENCE:
        return None
    if query.chunked_loss:
        return load_job_constants().unsloth.loss_chunk_tokens
    return None


def checkpoint_bytes(model: ModelArch, tokens: int, checkpoint_hidden: float) -> float:
    """The blocks' checkpointed inputs, which offloaded checkpointing keeps in system RAM instead."""
    layers = model.decoder_layers or model.layers
    return layers * tokens * checkpoint_hidden * model.hidden


def uses_host_memory(query: Query) -> bool:
    return query.task is not Task.INFERENCE and query.method is Method.FULL and query.offload in OFFLOADED


class TrainingOffload(BaseModel):
    """The answer's `offload` for a training job."""

    model_config = ConfigDict(frozen=True)

    mode: Offload
    host_bytes: int
    device: str  # "cpu" | "nvme"
    step_seconds: float | None = None
