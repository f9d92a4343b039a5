"""GPU + system RAM as one budget for GGUF runtimes (llama.cpp, Ollama, LM Studio, KTransformers).

How llama.cpp places a model (tools/server/README.md @00dc805, common/fit code): `-ngl N` puts N repeating
layers on the GPU (their KV cache with them, `-kvo` default); `--fit on` (the default, and what Ollama ≥ 0.30
runs) fills the GPU "back to front with dense layers … for a MoE model, … with all MoE tensors in system
memory" first, leaving `--fit-target` (1024 MiB) free per device; the token embedding stays in host memory.
KTransformers and `-ot exps=CPU` / `--cpu-moe` keep every routed expert on the CPU.

Decode speed from the split, one token (bandwidth-bound), through the speed issue's calibrated decode model
(core/speed decode_step_s, its constants fitted in data/speed.toml):
  s/token = the card's step (its layers' weights and KV at the card family's achieved bandwidth, the
            runtime's fixed cost per layer) + bytes read in RAM (host layers' weights and KV) / the host's
            achieved bandwidth
where a MoE token reads only its routed experts (experts_active of experts per layer).
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.estimator import Estimate, terms
from core.jobs.constants import load_job_constants
from core.jobs.host import HostMemory, effective_bytes_s, host_memory
from core.query import Offload, Precision, Query, Task, offloads_to_host
from core.registry import ModelArch
from core.runtimes import runtime_profile
from core.speed import (
    DEFAULT_OUTPUT_TOKENS,
    decode_step_s,
    generation,
    load_speed_constants,
    runtime_name,
    with_own_kernels,
)
from core.speed import terms as speed_terms
from core.units import GIB, MIB

# System RAM the OS and the runtime keep for themselves besides the offloaded weights.
OS_RESERVE_BYTES = 4 * 10**9
CUDA_CONTEXT_BYTES = int(0.5 * GIB)


class InferenceOffload(BaseModel):
    """Where the weights and KV of one GGUF job go, and what that does to decode speed."""

    model_config = ConfigDict(frozen=True)

    runtime: str
    mode: Offload  # layers | experts
    layers: int
    gpu_layers: int
    gpu_bytes: int
    host_bytes: int
    host_memory_bytes: int | None
    host_fits: bool | None  # None: the user did not say how much RAM there is
    host_bandwidth_gb_s: float
    host_memory: str
    host_assumed: bool
    decode_tokens_per_s: float
    kv_cache_dtype: str = "auto"
    expert_layers_on_gpu: int = 0
    whole: bool = (
        False  # every layer fits on the cards (only the token embedding stays in RAM, as llama.cpp does)
    )
    # the same job as the engine's releases before `layer_split_before` split it: whole layers on the card,
    # the output layer and the rest in RAM (Ollama before 0.30); None where the engine never did otherwise
    layer_split: InferenceOffload | None = None
    layer_split_before: str | None = None
    # the engine's own setting that puts these layers on the card ("-ngl 20", Ollama's "num_gpu 20"); None
    # where the engine has none to quote (data/runtimes.toml gpu_layers_knob)
    gpu_layers_knob: str | None = None

    @property
    def runs(self) -> bool:
        return self.host_fits is not False


class WeightSplit(NamedTuple):
    """A GGUF model's weights as llama.cpp places them: the token embedding, the output layer and one
    repeating block, with the bytes per weight they were sized at (the offload split's and CPU runs')."""

    per_weight: float
    embedding: float
    output: float
    block: float


def weight_split(model: ModelArch, precision: Precision) -> WeightSplit:
    total = terms.weight_bytes(model, precision)
    per = total / max(model.total_params, 1)
    embedding = model.embedding_params * per
    output = (model.lm_head_params or model.embedding_params) * per
    block = (total - embedding - (0 if model.tied_embeddings else output)) / (
        model.decoder_layers or model.layers
    )
    return WeightSplit(per, embedding, output, block)


def layer_bytes_read_per_token(model: ModelArch, block_bytes: float, per_weight: float) -> float:
    """The bytes of one repeating layer a decoded token reads, wherever the layer sits (the card or system
    RAM): all of a dense layer, but of a MoE layer only the experts the router picks. ggml's MUL_MAT_ID
    groups the token's rows by expert id and multiplies those experts alone, on the CPU as on CUDA
    (ggml/src/ggml-cpu/ggml-cpu.c ggml_compute_forward_mul_mat_id: "row groups", n_ids = n_expert_used), so
    layers kept whole in RAM (-ngl, Ollama's num_gpu) cost their dense part plus experts_active / experts of
    their experts per token at the host's bandwidth, not the whole layer."""
    if not model.is_moe or not model.experts:
        return block_bytes
    layers = model.decoder_layers or model.layers
    experts_per_layer = model.experts * model.expert_params * per_weight * model.moe_layers / layers
    unread = experts_per_layer * (1 - model.experts_active / model.experts)
    return max(0.0, block_bytes - unread)


def decode_kv_tokens(seq: int) -> float:
    """The cached tokens a decode step reads on average over one stream's answer in a `seq`-token window
    (the offload split's and CPU runs'): the prompt plus half the answer."""
    output = min(DEFAULT_OUTPUT_TOKENS, max(seq // 2, 1))
    return speed_terms.average_kv_tokens(max(seq - output, 1), output)


def _compute_buffer(model: ModelArch) -> int:
    """The CUDA compute buffer llama.cpp keeps for a partial offload: a prompt batch through one layer and
    the output layer's logits for it (n_batch × vocab × 4 B), plus a base."""
    c = load_job_constants().llama_cpp
    return c.compute_buffer_base_mib * MIB + c.compute_buffer_batch_tokens * model.vocab * 4


def offload_plan(estimate: Estimate, model: ModelArch, card: Card, count: int) -> InferenceOffload | None:
    """The split when the job does not fit wholly on `count` × `card`, for runtimes that offload by
    themselves;
    None when it fits on the cards, or the runtime does not offload."""
    query = estimate.query
    if query.task is not Task.INFERENCE or not offloads_to_host(query.runtime) or card.vendor == "Apple":
        return None
    if query.offload is Offload.NONE:
        return None
    c = load_job_constants()
    precision = query.precision or Precision.Q4_K_M
    per, embedding, output, block_bytes = weight_split(model, precision)
    layers = model.decoder_layers or model.layers
    kv_total = terms.kv_cache_bytes(model, query.seq or 4096, 2, sequences=1, gpus=1, compressed_mla=True)
    kv_total = int(kv_total * terms.kv_dtype_factor(query.kv_cache_dtype))
    kv_layer = kv_total / layers
    budget: float = count * (card.memory_bytes - c.llama_cpp.fit_target_mib * MIB - CUDA_CONTEXT_BYTES)
    budget -= _compute_buffer(model) + output

    forced = query.offload is Offload.EXPERTS or runtime_profile(query.runtime).host_offload == "experts"
    experts_mode = model.is_moe and (forced or query.gpu_layers is None)
    if experts_mode:
        expert_layer = model.experts * model.expert_params * per
        dense_layer = block_bytes - (expert_layer * model.moe_layers / layers)
        room = budget - layers * (dense_layer + kv_layer)
        on_gpu = 0 if forced else max(0, min(model.moe_layers, int(room // expert_layer))) if room > 0 else 0
        if room < 0:
            return None  # even the dense part does not fit: not a split llama.cpp makes by itself
        if query.cpu_moe_layers is not None:
            # --n-cpu-moe N: the first N layers' experts in RAM, the rest's on the card (as many as fit: the
            # launch line gives the count used)
            fits_on_card = max(0, int(room // expert_layer))
            on_gpu = min(max(0, model.moe_layers - query.cpu_moe_layers), fits_on_card)
        on_gpu = min(model.moe_layers, on_gpu)
        host = (model.moe_layers - on_gpu) * expert_layer + embedding
        gpu = layers * (dense_layer + kv_layer) + on_gpu * expert_layer + output
        active = model.experts_active / model.experts
        gpu_read = layers * dense_layer + on_gpu * expert_layer * active + output
        host_read = (model.moe_layers - on_gpu) * expert_layer * active
        gpu_layers, mode = layers, Offload.EXPERTS
    else:
        fit = int(max(0.0, budget) // (block_bytes + kv_layer))
        gpu_layers = min(layers, query.gpu_layers if query.gpu_layers is not None else fit)
        on_gpu = 0
        host_layers = layers - gpu_layers
        host = host_layers * (block_bytes + kv_layer) + embedding
        gpu = gpu_layers * (block_bytes + kv_layer) + output
        read = layer_bytes_read_per_token(model, block_bytes, per)
        gpu_read, host_read = gpu_layers * read + output, host_layers * read
        mode = Offload.LAYERS
    memory = host_memory(query)
    seconds = _decode_s(
        model, card, query, precision, gpu_read=gpu_read, host_read=host_read, gpu_share=gpu_layers / layers
    )
    have = query.host_memory_bytes
    before = runtime_profile(query.runtime).layer_split_before

    def split(
        split_mode: Offload,
        on_card: int,
        gpu_bytes: float,
        host_bytes: float,
        step_s: float,
        *,
        expert_layers_on_gpu: int = 0,
        whole: bool = False,
        layer_split: InferenceOffload | None = None,
    ) -> InferenceOffload:
        """The split as an answer states it: the same host, KV dtype and layers for both schedulers."""
        knob = runtime_profile(query.runtime).gpu_layers_knob
        return InferenceOffload(
            runtime=query.runtime or "",
            mode=split_mode,
            layers=layers,
            gpu_layers=on_card,
            gpu_bytes=int(gpu_bytes),
            host_bytes=int(host_bytes),
            host_memory_bytes=have,
            host_fits=None if have is None else host_bytes + OS_RESERVE_BYTES <= have,
            host_bandwidth_gb_s=round(memory.peak_bytes_s / 1e9, 1),
            host_memory=memory.label,
            host_assumed=memory.assumed,
            decode_tokens_per_s=round(1.0 / step_s, 2),
            kv_cache_dtype=query.kv_cache_dtype.value if query.kv_cache_dtype else "auto",
            expert_layers_on_gpu=expert_layers_on_gpu,
            whole=whole,
            layer_split=layer_split,
            layer_split_before=before if layer_split is not None else None,
            gpu_layers_knob=(
                knob.format(ngl=on_card, gpu_fraction=f"{on_card / max(layers, 1):.2f}") if knob else None
            ),
        )

    older = None
    if before is not None and mode is Offload.EXPERTS and not forced:
        # its older scheduler: whole layers, the output layer in RAM with the rest (it is not on the card)
        fit = int(max(0.0, budget + output) // (block_bytes + kv_layer))
        old_layers = min(layers, fit)
        read = layer_bytes_read_per_token(model, block_bytes, per)
        old_host = (layers - old_layers) * (block_bytes + kv_layer) + embedding + output
        old_s = _decode_s(
            model,
            card,
            query,
            precision,
            gpu_read=old_layers * read,
            host_read=(layers - old_layers) * read + output,
            gpu_share=old_layers / layers,
        )
        older = split(Offload.LAYERS, old_layers, old_layers * (block_bytes + kv_layer), old_host, old_s)
    return split(
        mode,
        gpu_layers,
        gpu,
        host,
        seconds,
        expert_layers_on_gpu=on_gpu,
        whole=gpu_layers >= layers and (mode is Offload.LAYERS or on_gpu >= model.moe_layers),
        layer_split=older,
    )


def _decode_s(
    model: ModelArch,
    card: Card,
    query: Query,
    precision: Precision,
    *,
    gpu_read: float,
    host_read: float,
    gpu_share: float,
) -> float:
    """One decode step of the split through the speed issue's calibrated model (core/speed): the card's part
    (its weights and the KV of its layers) at the achieved bandwidth of the card's family under the runtime's
    speed terms, with the runtime's fixed costs per layer; the host's part (its weights and KV) at the host
    memory's achieved bandwidth (data/jobs.toml [host]), read after the card's."""
    constants = load_speed_constants()
    name = runtime_name(query.runtime, precision, card)
    kv_dtype = terms.kv_dtype_bytes(precision, query.kv_cache_dtype)
    g = generation(
        model, card, runtime=name, precision=precision, kv_dtype_bytes=kv_dtype, ranks=1, batches=(1,)
    )
    g = with_own_kernels(g, query.runtime)
    kv_tokens = decode_kv_tokens(query.seq or 4096)
    host_kv = kv_tokens * g.kv_bytes_per_token * (1 - gpu_share)
    on_card = replace(g, kv_bytes_per_token=g.kv_bytes_per_token * gpu_share, weight_bytes={1: gpu_read})
    memory = host_memory(query)
    return decode_step_s(
        constants,
        on_card,
        1,
        kv_tokens,
        host_bytes=host_read + host_kv,
        host_bytes_s=effective_bytes_s(memory),
    )


def host_memory_of(query: Query) -> HostMemory:
    return host_memory(query)
