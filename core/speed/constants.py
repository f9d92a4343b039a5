"""The speed model's constants (data/speed.toml), typed: per-runtime terms, achieved bandwidth per card
family, collectives, training utilisation, and the data-amount rules. Each value carries its source; the
fitted ones are refitted to data/measured/speed.csv by tools/fit_speed.py."""

from __future__ import annotations

import re
import tomllib
from functools import cache, cached_property

from pydantic import BaseModel, ConfigDict

from core.catalog import Card, Segment
from core.paths import DATA_DIR


class RuntimeSpeed(BaseModel):
    """What one runtime adds to the hardware's time, per decode step and per prefill.

    These are the per-runtime values of issue 17's runtime profiles; they live here until data/runtimes.toml
    holds them (the shape is the same, one table per runtime)."""

    model_config = ConfigDict(frozen=True)

    launch_s_per_layer: (
        float  # fixed cost per layer per decode step: kernel launches, sync (CUDA graphs cut it)
    )
    moe_s_per_layer: float = 0.0  # extra per MoE layer per step: router, top-k, grouped-GEMM dispatch
    moe_token_s: float = 0.0  # per token per MoE layer: permuting tokens to their experts and back
    # Releases from moe_kernels_from on run a MoE layer of any architecture but DeepSeek-V3's (multi-head
    # latent attention with DeepSeekMoE: DeepSeek-V2/V3/R1, Kimi K2) at these costs instead of the two above,
    # which a runtime's fitted figures may measure on DeepSeek-V3 and older releases only
    # (inference.runtime_for). None: the two above for every model and release.
    moe_kernels_from: str | None = None
    current_moe_s_per_layer: float | None = None
    current_moe_token_s: float | None = None
    # per linear-attention layer (Gated DeltaNet: Qwen3-Next) per decode step: its many small recurrent-state
    # kernels (convolution, norms, the delta rule) that a softmax layer does not launch
    linear_attention_s_per_layer: float = 0.0
    step_s: float = 0.0  # per step: scheduler, sampling, detokenisation
    seq_s: float = 0.0  # per running sequence per step: the scheduler's and sampler's per-request work
    bandwidth_factor: float = 1.0  # this runtime's share of the card's achieved decode bandwidth
    kv_read_factor: float = (
        1.0  # scales the passes over the held KV a step makes (terms.kv_passes: transformers' copies)
    )
    expands_kv_groups: bool = False  # copies the KV (torch.cat) and repeats it per query head (repeat_kv)
    # Releases before this one decode grouped-query attention without a GQA-aware kernel (TensorRT-LLM before
    # its new XQA kernel): each query head's thread block loads its KV head again, so a step touches the KV
    # 1 + (group - 1) x legacy_gqa_reread_share times (the share of the re-reads that miss L2). None: every
    # release reads it once.
    legacy_gqa_before: str | None = None
    legacy_gqa_reread_share: float = 0.0
    # Releases from legacy_gqa_before up to xqa_any_group_from run the GQA-aware kernel only for these
    # query heads per KV head (TensorRT-LLM's precompiled XQA kernels: 1, 8, 16); other groups decode the
    # legacy way.
    xqa_groups: tuple[int, ...] = ()
    xqa_any_group_from: str | None = None
    # Releases before this one launch every kernel of a decode step one by one (no CUDA graph): each layer
    # costs launch_s_per_layer; later ones graph the step, saving graphs_saving_s_per_layer each (llama.cpp).
    graphs_before: str | None = None
    graphs_saving_s_per_layer: float = 0.0
    # Card architectures on which no release captures the step in a CUDA graph (terms.captures_graphs):
    # llama.cpp's CUDA backend turns graphs off below compute capability 8.0 (Ampere)
    graphs_unsupported_architectures: tuple[str, ...] = ()
    # Releases before graph_context_cap_before capture decode in CUDA graphs only while every sequence's
    # context is at most graph_max_context tokens (vLLM V0's max_seq_len_to_capture, 8192 by default: "When a
    # sequence has context length larger than this, we fall back to eager mode"); an eager step adds
    # eager_s_per_layer per layer (Python launching each kernel). None: no such cap (vLLM's V1 engine, the
    # default since 0.8).
    graph_max_context: int | None = None
    # Releases before this one capture no CUDA graph at all: every decode step is eager, eager_s_per_layer a
    # layer on top (vLLM before PR #1926, "Optimize model execution with CUDA graph", merged 2023-12-17)
    eager_before: str | None = None
    graph_context_cap_before: str | None = None
    eager_s_per_layer: float = 0.0
    prefill_mfu: float = 0.5  # share of the tensor peak a prompt's prefill reaches
    prefill_fixed_s: float = 0.0  # per request's prefill: scheduling, the first step's own fixed cost
    launch_overlaps: bool = False  # eager runtimes: the CPU launches kernels while the GPU runs earlier ones
    launch_serial_share: float = 0.0  # eager runtimes: share of the shorter of launches / GPU work not hidden
    max_num_seqs: int | None = None  # sequences one replica runs at once (None: no cap of its own)
    # the KV pool as a share of the memory free once the engine is loaded (TensorRT-LLM); None: of the card
    kv_free_memory_share: float | None = None
    continuous_batching: bool = False
    # The scheduler gives a request KV pages as its tokens arrive and preempts when the pool runs out (vLLM's
    # PagedAttention block manager, SGLang's token-ratio admission), so a full pool holds sequences at their
    # present length, I + O/2 on average over their lives, not at their final I + O (TensorRT-LLM's default
    # GUARANTEED_NO_EVICT scheduler reserves the final length): terms.resident_sequences
    kv_on_demand: bool = False
    # Continuous batching that runs arriving prompts in the decode steps (vLLM's chunked prefill,
    # TensorRT-LLM's in-flight batching), or in prefill batches of their own of up to prefill_chunk_tokens
    # tokens while the running requests wait (SGLang unless --enable-mixed-chunk): inference.serving_step_s
    mixes_prefill: bool = True
    prefill_chunk_tokens: int = 8192
    # (card memory GiB below which, the chunk there): SGLang picks a smaller chunk on small cards, a larger
    # one on the largest (terms.prefill_chunk_tokens)
    prefill_chunk_by_memory: list[tuple[float, int]] = []
    tensor_parallel: bool = False  # several cards split each layer (else they split the layers)
    # its prefill GEMMs accumulate in FP16 (llama.cpp's cuBLAS path, CUBLAS_COMPUTE_16F; its int8 MMQ kernels
    # likewise run at full rate), which GeForce cards run at twice their listed FP32-accumulate rate
    fp16_accumulate: bool = False
    source: str


class BandwidthFamily(BaseModel):
    """Share of a card family's nominal memory bandwidth that decode's weight and KV reads reach."""

    model_config = ConfigDict(frozen=True)

    match: str  # regular expression over the card id
    efficiency: float
    source: str


class FormatKernels(BaseModel):
    """Decode bandwidth of a weight format's kernels relative to 16-bit GEMV (dequantisation costs)."""

    model_config = ConfigDict(frozen=True)

    fp8: float
    int8: float
    int4: float
    gguf_k: float  # Q6_K, Q5_K_M, Q4_K_M, Q3_K, Q2_K: super-blocks with 6-bit scales
    gguf_legacy: float  # Q8_0, Q4_0: one scale per 32 weights
    diffusion_fp8: float = 1.0  # diffusers' FP8 recipe (torchao float8 + torch.compile) over bf16, per step
    source: str
    # an engine's own 4-bit GEMV kernels (data/runtimes.toml int4_kernels): (rows in the step, share of 16-bit
    # GEMV bandwidth) points, rows ascending (terms.own_kernel_share)
    int4_kernels: dict[str, tuple[tuple[int, float], ...]] = {}


class MfuConstants(BaseModel):
    """Training utilisation on one card of each segment, before parallelism and scale."""

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

    qlora_throughput_factor: float  # image / video jobs' 4-bit weights (core/vision/speed.py); not training's
    qlora_dequant_bytes_per_param: float  # QLoRA: bytes moved per base weight per micro-batch (dequantising)
    qlora_source: str
    forward_flops_per_param: float
    backward_input_flops_per_param: float
    backward_weight_flops_per_param: float
    flops_source: str
    fp8_gain: float  # FP8 GEMMs' speed-up over BF16 that a whole training step keeps
    tp_exposed: float  # share of tensor parallelism's per-layer all-reduces that computation does not hide
    dp_exposed: float  # share of data parallelism's gathers / reductions that computation does not hide
    gradient_accumulation: int  # micro-batches per optimizer step an answer assumes (gradients reduced once)
    moe_a2a_exposed: float  # share of the expert all-to-all that computation does not hide
    expert_width_half: float  # expert FFN width at which grouped GEMMs reach half the dense utilisation
    cpu_offload_factor: float  # optimizer state offloaded to host memory (torchtune's 70B full fine-tune)
    goodput: float  # share of a whole pretraining run's GPU-hours spent in useful steps
    # tokens in one optimizer step of a pretraining run that states no batch (LLaMA's 4M)
    pretrain_batch_tokens: float = 4.0e6
    power_exponent: float  # a card held under its board power keeps (limit / TDP) ** this of its peak
    power_source: str
    parallel_source: str
    frameworks: dict[str, float]  # utilisation of each training framework against Megatron-Core's
    runtime_frameworks: dict[str, str]  # runtime profile id (data/runtimes.toml) -> its framework
    default_framework: str
    frameworks_source: str
    # a framework's own share of tensor parallelism's collectives left exposed (tp_exposed where unlisted)
    framework_tp_exposed: dict[str, float] = {}
    # a Megatron run without its userbuffer overlap (--tp-comm-overlap off): the share of the backward's
    # tensor-parallel collectives its layers do not run behind a GEMM (the forward's are all exposed;
    # core/speed/terms.py tensor_parallel_exposed_without_overlap)
    tp_backward_exposed_without_overlap: float = 1.0
    # attention kernels: the share of the GEMMs' utilisation FlashAttention-2 keeps on full-rate Hopper cards,
    # the frameworks that run it there, and those cards (a regex over card ids)
    fa2_hopper_attention_share: float = 1.0
    fa2_frameworks: tuple[str, ...] = ()
    fa2_hopper_cards: str = ""
    # causal attention's backward in forward passes' FLOPs (FlashAttention recomputes the scores: 2.5)
    attention_backward_passes: float = 2.0
    # torchtitan's per-op selective activation checkpointing: share of the linear layers' forward recomputed
    selective_op_recompute_share: float = 0.0
    # the optimizer step: passes over the bytes it updates (weights, gradients, states), once per step
    optimizer_step_passes: float = 0.0
    framework_optimizer_step_passes: dict[str, float] = {}  # frameworks whose optimizer is fused
    # unfused elementwise kernels (eager stacks): bytes per hidden element per layer in one forward pass
    framework_elementwise_bytes: dict[str, float] = {}
    # eager stacks' host side: seconds of CPU to launch one layer's kernels for one pass (forward,
    # recompute, backward), the share of the shorter of that and the GPU's work a micro-batch does not hide,
    # and DeepSpeed ZeRO-3's fetch / release hooks per layer per pass on top
    framework_launch_s_per_layer: dict[str, float] = {}
    launch_serial_share: float = 0.0
    zero3_hook_s_per_layer: float = 0.0

    # the layout a cluster pretraining answer assumes (core/speed/training.py pretraining_layout): Megatron's
    # bytes per parameter replicated on each data-parallel rank and sharded over them, and the share of a
    # card those states may take (the rest: activations, buffers, the CUDA context)
    layout_replicated_bytes_per_param: float = 6.0
    layout_sharded_bytes_per_param: float = 12.0
    layout_states_share: float = 0.75
    layout_source: str = ""

    def pretrain_batch_sequences(self, seq: int) -> float:
        """Sequences of `seq` tokens in one optimizer step of a pretraining run that states no batch."""
        return max(self.pretrain_batch_tokens / max(seq, 1), 1.0)

    def launch_s_per_layer_for(self, framework: str) -> float:
        """CPU seconds an eager stack spends launching one layer's kernels for one pass (none listed for
        stacks whose micro-batches no fitted figure makes short enough to tell)."""
        return self.framework_launch_s_per_layer.get(framework, 0.0)

    def optimizer_passes_for(self, framework: str) -> float:
        """Passes the optimizer step makes over the bytes it updates: PyTorch's foreach AdamW's, or a
        framework's own fused optimizer's."""
        return self.framework_optimizer_step_passes.get(framework, self.optimizer_step_passes)

    def elementwise_bytes_for(self, framework: str) -> float:
        """Bytes per hidden element per layer that a forward pass's unfused elementwise kernels move (norms,
        rotary, activations, residual adds, casts): none listed for stacks that fuse them (Megatron's
        Transformer Engine, torch.compile), whose cost the [mfu] values already hold."""
        return self.framework_elementwise_bytes.get(framework, 0.0)

    def attention_share(self, framework: str, card_id: str, flash_attention_2: bool | None = None) -> float:
        """How much of the GEMMs' utilisation a job's causal attention reaches: all of it, except where a
        framework runs FlashAttention-2 on a full-rate Hopper card, whose tensor-core instructions (wgmma,
        TMA) FA2 does not use. `flash_attention_2` is a run's own kernel where its source says which (a
        legacy Megatron model's --use-flash-attn calls the flash-attn package), else the framework's."""
        hopper = bool(self.fa2_hopper_cards) and re.match(self.fa2_hopper_cards, card_id) is not None
        fa2 = framework in self.fa2_frameworks if flash_attention_2 is None else flash_attention_2
        return self.fa2_hopper_attention_share if hopper and fa2 else 1.0

    def tp_exposed_for(self, framework: str, overlapped: bool) -> float:
        """Megatron overlaps its tensor-parallel collectives with the GEMMs (tp_exposed, fitted); a framework
        listed here does not, unless the run says it overlaps them (PyTorch's async TP)."""
        return self.tp_exposed if overlapped else self.framework_tp_exposed.get(framework, self.tp_exposed)

    def framework_of(self, runtime: str | None) -> str:
        """The framework a runtime profile trains with (Hugging Face Trainer when the profile has none)."""
        return self.runtime_frameworks.get(runtime or "", self.default_framework)

    def framework_factor(self, framework: str) -> float:
        return self.frameworks.get(framework, self.frameworks[self.default_framework])


class LinkConstants(BaseModel):
    model_config = ConfigDict(frozen=True)

    collective_efficiency: float
    # NCCL over PCIe (no NVLink): the bus bandwidth its all-reduce reaches of the link's one-way rate
    collective_efficiency_pcie: float = 0.77
    allreduce_latency_s_nvlink: float
    allreduce_latency_s_pcie: float
    internode_gb_s: float  # one GPU's share of the network between nodes (DGX H100: 400 Gb/s per GPU)
    ethernet_node_gbit_s: float  # a node's plain Ethernet when the question says Ethernet but not its speed
    gpus_per_node: int
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


class StackConstants(BaseModel):
    """What a card's software stack costs against CUDA's, beyond the card's own figures."""

    model_config = ConfigDict(frozen=True)

    # ROCm's fixed cost per MoE layer per step (its fused-MoE kernels), and of eager launches, / CUDA's
    rocm_per_layer_factor: float
    # ROCm's fixed cost per dense layer per step (HIP graph replay, the dense kernels' launches) / CUDA's
    rocm_dense_layer_factor: float = 1.0
    # the tensor FLOP/s ROCm's GEMMs reach on an AMD card, as a share of what the runtimes' fitted utilisation
    # (prefill_mfu, fitted on NVIDIA cards) takes of the nominal peak
    rocm_tensor_share: float = 1.0
    # GeForce cards run FP16 tensor GEMMs that accumulate in FP16 at this many times the FP32-accumulate rate
    # cards.toml lists for them (RuntimeSpeed.fp16_accumulate runtimes only; terms.fp16_accumulate_factor)
    geforce_fp16_accumulate_factor: float = 1.0
    source: str


class BandConstants(BaseModel):
    """How sure a speed figure is: the ± band an answer gives, from the fit's residuals by kind of job."""

    model_config = ConfigDict(frozen=True)

    calibrated: float  # runtime and card family both in the calibration table
    uncalibrated: float  # either one never measured
    training: float
    training_uncalibrated: float = 0.45  # a card family no training figure was fitted on
    source: str


class SpeedConstants(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    runtimes: dict[str, RuntimeSpeed]
    bandwidth: list[BandwidthFamily]
    bandwidth_default: float
    formats: FormatKernels
    mfu: MfuConstants
    training: TrainingConstants
    link: LinkConstants
    stacks: StackConstants
    data: DataConstants
    band: BandConstants

    def runtime(self, name: str) -> RuntimeSpeed:
        return self.runtimes[name]

    def family(self, card: Card) -> BandwidthFamily | None:
        """The card's chip family: the first whose pattern matches its id (remembered per card)."""
        families = self.derived_families
        try:
            return families[card.id]
        except KeyError:
            found = next((f for f in self.bandwidth if re.search(f.match, card.id)), None)
            families[card.id] = found
            return found

    # Values derived from these constants alone, remembered on them: per card id its [[bandwidth]] family,
    # per (term, runtime, precision, card) the achieved bandwidth and the prefill peak, so that a speed call
    # (and each trial of a fit, which builds new constants) computes each once. Not fields: never dumped.
    @cached_property
    def derived_families(self) -> dict[str, BandwidthFamily | None]:
        return {}

    @cached_property
    def derived(self) -> dict[tuple[object, ...], float]:
        return {}

    @cached_property
    def derived_runtimes(self) -> dict[tuple[str, bool, bool], RuntimeSpeed]:
        return {}

    def vision_utilisation(self, card: Card) -> float:
        """Image, video and speech jobs run in PyTorch (diffusers, ComfyUI, transformers): the segment's MFU
        under the PyTorch-native framework factor."""
        return self.mfu.for_card(card) * self.training.framework_factor("pytorch")

    def bandwidth_efficiency(self, card: Card) -> float:
        family = self.family(card)
        return family.efficiency if family else self.bandwidth_default


@cache
def load_speed_constants() -> SpeedConstants:
    with open(DATA_DIR / "speed.toml", "rb") as handle:
        return SpeedConstants.model_validate(tomllib.load(handle))
