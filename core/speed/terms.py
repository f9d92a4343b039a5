"""Each speed term as a small named formula, with where it comes from.

core/speed/inference.py and core/speed/training.py compose these; tools/fit_speed.py fits their constants
(data/speed.toml) to the published figures in data/measured/speed.csv. Sources (estimators.md §2.7 unless
said):
- Decode reads every weight it needs and each sequence's KV once per step: time = bytes / achieved bandwidth
  (roofline; llama.cpp PR #2917's straight line of time against bytes). Achieved bandwidth = nominal × the
  card family's efficiency × the runtime's and the weight format's kernels (fitted).
- Each kernel meets its own roofline, and a step runs them one after the other: the linear layers' GEMMs take
  the longer of reading the weights and computing 2·N FLOPs per token, attention the longer of reading the KV
  and computing the prompt tokens' scores, and the step is their sum (the per-operator roofline of Yuan et
  al. 2024, "LLM Inference Unveiled", arXiv 2402.16363, §3), not the larger of its total bytes and FLOPs: at
  saturation the GEMMs are compute-bound while attention still streams the cache, and one does not hide the
  other (TensorRT-LLM 0.17's saturation table: the same throughput with twice the sequences in FP8 KV).
- MoE decode reads the experts the batch routes to: E·(1 − (1 − k/E)^B) per layer (uniform routing); a prompt
  prefilled in a step reads those its own tokens route to (128 tokens touch nearly all of Mixtral's 8).
- TensorRT-LLM's KV pool is a share (`free_gpu_memory_fraction`, 0.9 by default) of the memory left free once
  the engine is loaded, not of the card (vLLM's gpu_memory_utilization): 70B in FP8 on an 80 GB card holds
  ~19 sequences of 2,000 tokens, not one.
- A fixed cost per layer per step (kernel launches; CUDA graphs in vLLM/SGLang/TensorRT-LLM cut it), per MoE
  layer (router, top-k, grouped GEMM), per step (scheduler, sampling) and per running sequence (fitted).
- Tensor parallelism: two all-reduces of the hidden state per layer per step (Megatron-LM, Shoeybi et al. 2019
  §3), each a latency plus bytes over the link (NCCL ring: 2·(n−1)/n of the message).
- The KV read at a step is the cache's length then: a generation of O tokens after a prompt of I reads on
  average I + O/2 tokens of KV per step, not I + O.
- Continuous batching (vLLM, SGLang, TensorRT-LLM in-flight batching): the prompts of arriving requests are
  prefilled in the same steps as the running decodes (chunked prefill), so each step also computes C·I/O
  prompt tokens at concurrency C; the step is bound by the slower of reading and computing. SGLang does not
  mix them (scheduler.py: `is_mixed_chunk` needs --enable-mixed-chunk, off by default): its prompts run in
  prefill batches of their own (up to chunked_prefill_size tokens, 2048 / 8192 / 16384 by the card's memory,
  server_args.py) while the running requests wait, so a step is the decode batch's time plus its share of
  those.
- Prefill and training are compute-bound: FLOPs over the tensor peak × utilisation; FP8 GEMMs on Hopper, Ada
  and Blackwell run at up to twice the BF16 rate (cards.toml fp8_tflops), of which a step keeps `fp8_gain`.
- Pipeline parallelism idles (p − 1) / (m·v) of each step (Narayanan et al. 2021, §2.2: the bubble of the
  interleaved 1F1B schedule with m micro-batches and v virtual stages); a zero-bubble schedule (Qi et al.
  2024, arXiv 2401.10241; DeepSeek's HAI-LLM, DualPipe) fills it with the backward's weight half.
- Grouped-query attention decoded without a GQA-aware kernel re-reads each KV head once per query head of
  its group (TensorRT-LLM before the XQA kernel: its 0.6.1 performance.md calls the GQA kernels experimental
  and off by default; the XQA blog of 2024-01-30 gives 2.4x the Llama-70B throughput): the KV bytes a step
  touches grow by a fitted factor, at most the group size (L2 serves part of the re-reads).
- Expert parallelism sends each routed token's hidden state to its k experts and back, forward and backward
  (DeepSeek-V3 report §3.2; GShard): bytes = 2·2·k·hidden·2 per token per MoE layer, over NVLink inside a node
  and the network between nodes.
- Training under tensor parallelism all-reduces each layer's hidden state 4 times per token (6 with recompute;
  Shoeybi et al. 2019 §3, Korthikanti et al. 2022): Megatron overlaps most of it with the GEMMs, PyTorch's
  vanilla TP none (torchtitan's async-TP benchmark: its overlap is 1.04-1.16x over the vanilla baseline);
  data parallelism's ZeRO-3 / FSDP gathers and gradient reductions (Rajbhandari et al. 2020; Zhao et al. 2023)
  cross NVLink or PCIe inside a node and the network (one 400 Gb/s NIC per GPU, DGX H100) between nodes, where
  a ring's traffic is split over the node's NICs (NCCL builds one ring per NIC).
- QLoRA dequantises every 4-bit base weight on each pass over it, once per micro-batch whatever its tokens
  (bitsandbytes / auto-gptq kernels: memory-bound, so bytes over the achieved bandwidth; fitted bytes).
- An eager stack's host launches a micro-batch's kernels layer by layer, pass by pass, while the GPU works;
  per micro-batch the longer of the two sets the pace and a share of the shorter shows (as in transformers'
  decode step); DeepSpeed ZeRO-3's per-module fetch / release hooks add host time per layer (DeepSpeed
  issue 5047, PR 6649 / 6694). Fitted to Qwen's LoRA profile at 256 to 8,192 tokens (core/speed/training.py).
- A card held under its TDP keeps (limit / TDP)^0.30 of its tensor peak (H100 NVL 835 TFLOPS at 400 W against
  the H100 SXM's 989 at 700 W, NVIDIA's datasheet).
"""

from __future__ import annotations

import itertools
import math
import re

from core.catalog import Card, Segment
from core.query import Precision
from core.speed.constants import LinkConstants, RuntimeSpeed, SpeedConstants

GGUF_K = frozenset({Precision.Q6_K, Precision.Q5_K_M, Precision.Q4_K_M, Precision.Q3_K, Precision.Q2_K})
GGUF_LEGACY = frozenset({Precision.Q8_0, Precision.Q4_0})


def format_kernel_factor(constants: SpeedConstants, precision: Precision) -> float:
    """Decode bandwidth a weight format's kernels reach relative to 16-bit ones (dequantisation work)."""
    formats = constants.formats
    if precision is Precision.FP8:
        return formats.fp8
    if precision is Precision.INT8:
        return formats.int8
    if precision in (Precision.INT4, Precision.NF4):
        return formats.int4
    if precision in GGUF_K:
        return formats.gguf_k
    if precision in GGUF_LEGACY:
        return formats.gguf_legacy
    return 1.0


def own_kernel_share(points: tuple[tuple[int, float], ...], rows: float) -> float:
    """The share of 16-bit GEMV bandwidth an engine's own 4-bit kernel reaches at `rows` tokens in a step
    (data/speed.toml [formats.int4_kernels]: points read off a kernel benchmark), interpolated in log2(rows)
    between the listed points and held at the ends: such kernels keep up at batch 1 and fall off as the rows
    grow (Marlin's README benchmark of exllamav2's kernel: ~0.98 at 1 row, ~0.39 at 8)."""
    if rows <= points[0][0]:
        return points[0][1]
    for (low, low_share), (high, high_share) in itertools.pairwise(points):
        if rows <= high:
            t = (math.log2(rows) - math.log2(low)) / (math.log2(high) - math.log2(low))
            return low_share + t * (high_share - low_share)
    return points[-1][1]


def achieved_bandwidth(
    constants: SpeedConstants, card: Card, runtime: RuntimeSpeed, precision: Precision
) -> float:
    """Bytes/s that decode's reads reach on one card: nominal × card family × runtime × weight format."""
    return (
        card.bandwidth_gb_s
        * 1e9
        * constants.bandwidth_efficiency(card)
        * runtime.bandwidth_factor
        * format_kernel_factor(constants, precision)
    )


def moe_experts_touched(experts: int, active: int, batch: int) -> float:
    """Experts per MoE layer that `batch` tokens route to, under uniform routing: E·(1 − (1 − k/E)^B)."""
    if experts <= 0:
        return 0.0
    return experts * (1 - (1 - active / experts) ** max(batch, 1))


def kv_passes(runtime: RuntimeSpeed, group: float) -> float:
    """Passes over the held KV cache a decode step makes, per layer, in units of the held (KV-head) bytes.

    A runtime with a paged, GQA-aware attention kernel reads it once. transformers' generate() (DynamicCache,
    `expands_kv_groups`) makes more, and only some of them scale with the query heads per KV head `group`:
    DynamicCache.update's torch.cat reads the old cache and writes the grown copy (2, held heads), repeat_kv
    reads that and writes it once per query head when group > 1 (1 + group; at group 1 it returns the tensor
    itself), and the attention kernel reads what repeat_kv wrote (group). transformers' modeling_qwen2.py
    Qwen2FlashAttention2 / Qwen2SdpaAttention.forward (4.38-4.46: update, then repeat_kv, then the kernel) and
    cache_utils.py DynamicCache.update (torch.cat); the runtime's kv_read_factor scales them all (copies and
    kernel at their own achieved bandwidth)."""
    if not runtime.expands_kv_groups:
        return 1.0
    repeat = 1.0 + group if group > 1 else 0.0
    return 2.0 + repeat + group


def legacy_gqa_read_factor(runtime: RuntimeSpeed, group: float) -> float:
    """KV bytes touched per KV byte held when a release decodes GQA without a GQA-aware kernel: each query
    head's thread block loads its KV head, so the group's other group - 1 heads re-read it, of which a fitted
    share misses L2: 1 + (group - 1) x share, between once and the group size."""
    share = min(max(runtime.legacy_gqa_reread_share, 0.0), 1.0)
    return 1.0 + (max(group, 1.0) - 1.0) * share


def decodes_gqa_legacy(runtime: RuntimeSpeed, version: str, group: int) -> bool:
    """Whether a release decodes a model of `group` query heads per KV head without the GQA-aware kernel:
    every release before legacy_gqa_before, and before xqa_any_group_from those whose group the precompiled
    kernels do not cover (TensorRT-LLM's DecoderXQAImplPrecompiled::shouldUse: "nbQHeadsPerKV != 16 &&
    nbQHeadsPerKV != 8 && nbQHeadsPerKV != 1" -> XQA is not used; the JIT path of 0.11 covers the rest). An
    unstated release is current."""
    if group <= 1:
        return False
    if release_before(version, runtime.legacy_gqa_before):
        return True
    return (
        bool(runtime.xqa_groups)
        and group not in runtime.xqa_groups
        and release_before(version, runtime.xqa_any_group_from)
    )


def release_before(version: str, bound: str | None) -> bool:
    """Whether a release ("0.6.1", "0.7a") is older than `bound` ("0.8"); an unstated release is current."""
    if not version or not bound:
        return False

    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(re.sub(r"\D.*", "", p) or 0) for p in text.split("."))

    return parts(version) < parts(bound)


def average_kv_tokens(prompt: int, output: int) -> float:
    """KV tokens a decode step reads on average over a generation: the prompt plus half the output."""
    return prompt + output / 2


def resident_sequences(
    pool_bytes: float, final_bytes_per_sequence: float, prompt: int, output: int, *, on_demand: bool
) -> int:
    """Sequences a full KV pool holds while requests of `prompt` + `output` tokens stream through it.

    A scheduler that reserves each request's final length (TensorRT-LLM's GUARANTEED_NO_EVICT capacity
    scheduler, its default) holds pool / (I + O) of them. One that allocates KV pages as tokens arrive and
    preempts when the pool runs out holds them at their present length: vLLM "allocates physical blocks on
    demand as new tokens are generated" and swaps or recomputes a request when none is free (Kwon et al.
    2023, PagedAttention, arXiv 2309.06180, §4.2 and §4.5); SGLang admits by a decaying new-token ratio and
    retracts decodes when memory runs short (python/sglang/srt/managers/schedule_policy.py, scheduler.py
    `retract_decode`). With the requests at every point of their lives, a sequence holds I + O/2 tokens on
    average (average_kv_tokens), so the pool holds (I + O) / (I + O/2) times as many."""
    if final_bytes_per_sequence <= 0:
        return 0
    per_sequence = final_bytes_per_sequence
    if on_demand and prompt + output > 0:
        per_sequence *= average_kv_tokens(prompt, output) / (prompt + output)
    return int(pool_bytes // per_sequence)


def link_one_way_bytes_s(card: Card, link: LinkConstants) -> float:
    """Card-to-card one-way bytes/s that collectives reach (interconnect_gb_s is bidirectional): NCCL's
    all-reduce bus bandwidth is a smaller share of a PCIe link than of NVLink (collective_efficiency_pcie)."""
    gb_s = card.interconnect_gb_s or 32.0
    share = link.collective_efficiency if card.has_nvlink else link.collective_efficiency_pcie
    return gb_s / 2 * 1e9 * share


def allreduce_s(card: Card, link: LinkConstants, message_bytes: float, ranks: int) -> float:
    """One all-reduce of `message_bytes` over `ranks` cards: a latency plus the ring's 2·(n−1)/n bytes."""
    if ranks <= 1:
        return 0.0
    latency = link.allreduce_latency_s_nvlink if card.has_nvlink else link.allreduce_latency_s_pcie
    return latency + 2 * (ranks - 1) / ranks * message_bytes / link_one_way_bytes_s(card, link)


def tensor_parallel_comm_s(
    card: Card, link: LinkConstants, layers: int, hidden: int, tokens: int, *, ranks: int
) -> float:
    """Two all-reduces of the hidden state (16-bit) per layer, for `tokens` tokens (Megatron-LM §3)."""
    return 2 * layers * allreduce_s(card, link, tokens * hidden * 2.0, ranks)


def moe_routing_s(runtime: RuntimeSpeed, moe_layers: int, tokens: float) -> float:
    """Moving `tokens` tokens to their experts and back in every MoE layer (top-k, permute, un-permute):
    work per token, so it grows with the batch and with the prompt tokens prefilled in a step (FITTED per
    runtime; vLLM's value comes from DeepSeek-V3 at concurrency 1 to 100)."""
    return moe_layers * tokens * runtime.moe_token_s


def prefill_chunk_tokens(runtime: RuntimeSpeed, card: Card) -> int:
    """Tokens one prefill batch holds on this card: the chunk of the first (memory bound, chunk) the card's
    memory is under, else the runtime's prefill_chunk_tokens (SGLang's server_args.py sizes
    chunked_prefill_size by the GPU's memory)."""
    for below_gib, chunk in runtime.prefill_chunk_by_memory:
        if card.memory_gib < below_gib:
            return chunk
    return runtime.prefill_chunk_tokens


def launch_s(
    runtime: RuntimeSpeed,
    layers: int,
    moe_layers: int,
    factor: float = 1.0,
    *,
    graphs: bool = True,
    dense_factor: float = 1.0,
) -> float:
    """Kernel launches and synchronisation of one decode step: per layer, and per MoE layer on top; `factor`
    is the card's software stack's cost per MoE layer against CUDA's (per_layer_factor, fitted on ROCm's MoE
    kernels), `dense_factor` its cost per layer of a captured step (dense_layer_factor).
    `graphs`: a release that captures the step in a CUDA graph saves the runtime's graphs_saving_s_per_layer
    per layer (llama.cpp since PR #6766, May 2024); False for releases before its graphs_before."""
    per_layer = runtime.launch_s_per_layer
    if graphs and runtime.graphs_before:
        per_layer = max(per_layer - runtime.graphs_saving_s_per_layer, 0.0)
    return layers * per_layer * dense_factor + moe_layers * runtime.moe_s_per_layer * factor


def captures_graphs(runtime: RuntimeSpeed, card: Card) -> bool:
    """Whether the runtime can capture a decode step in a CUDA graph on this card: llama.cpp's CUDA backend
    never does below compute capability 8.0 (ggml-cuda.cu: "if (ggml_cuda_info().devices[...].cc <
    GGML_CUDA_CC_AMPERE) { cuda_graph->disable_due_to_gpu_arch = true; ... disabling CUDA graphs due to GPU
    architecture"), in every release since graphs came (PR #6766) and in Ollama's vendored copy (v0.5.8 to
    2026), so a Tesla P40, V100, T4 or RTX 2080 Ti launches every kernel one by one whatever the build
    (data/speed.toml graphs_unsupported_architectures)."""
    return card.architecture not in runtime.graphs_unsupported_architectures


def eager_fallback_s(runtime: RuntimeSpeed, layers: int, factor: float = 1.0) -> float:
    """What a decode step costs on top of its CUDA-graph launches when it runs eager: vLLM's V0 engine
    (releases before 0.8) replays its captured graphs only while every sequence's context is at most
    max_seq_len_to_capture (8192 by default; vLLM's ModelConfig: "When a sequence has context length larger
    than this, we fall back to eager mode"), so a decode past 8k tokens launches each layer's kernels from
    Python: eager_s_per_layer per layer (FITTED to the Qwen2.5 speed benchmark's vLLM 0.6.3 rows at 30k and
    129k tokens), scaled like the other per-layer costs by the card's software stack."""
    return layers * runtime.eager_s_per_layer * factor


def per_layer_factor(constants: SpeedConstants, card: Card) -> float:
    """The fixed cost per MoE layer of the card's software stack against CUDA's (data/speed.toml [stacks])."""
    return constants.stacks.rocm_per_layer_factor if card.vendor == "AMD" else 1.0


def dense_layer_factor(constants: SpeedConstants, card: Card) -> float:
    """The fixed cost per layer (graph replay, launches) of the card's software stack against CUDA's
    (data/speed.toml [stacks] rocm_dense_layer_factor)."""
    return constants.stacks.rocm_dense_layer_factor if card.vendor == "AMD" else 1.0


def fp16_accumulate_factor(
    constants: SpeedConstants, card: Card, runtime: RuntimeSpeed, precision: Precision
) -> float:
    """How much faster than cards.toml's 16-bit tensor rate a runtime's prefill GEMMs run on the card: GeForce
    cards (NVIDIA's consumer segment) list FP16 with FP32 accumulate, half their FP16-accumulate rate, and a
    runtime that accumulates in FP16 (llama.cpp) gets the whole of it; BF16 has no 16-bit accumulate and FP8
    runs at its own rate."""
    if (
        not runtime.fp16_accumulate
        or card.vendor != "NVIDIA"
        or card.segment is not Segment.CONSUMER
        or precision in (Precision.BF16, Precision.FP8)
    ):
        return 1.0
    return constants.stacks.geforce_fp16_accumulate_factor


def tensor_share(constants: SpeedConstants, card: Card) -> float:
    """The share of the runtimes' fitted tensor utilisation the card's software stack's GEMMs reach
    (data/speed.toml [stacks] rocm_tensor_share; 1 on CUDA, where prefill_mfu was fitted)."""
    return constants.stacks.rocm_tensor_share if card.vendor == "AMD" else 1.0


def step_s(
    runtime: RuntimeSpeed,
    gpu_s: float,
    layers: int,
    moe_layers: int,
    sequences: int,
    *,
    factor: float = 1.0,
    graphs: bool = True,
    dense_factor: float = 1.0,
) -> float:
    """A decode step's wall time from its GPU time: CUDA-graph runtimes add their launch gaps to it; eager
    ones (transformers) launch from Python while the GPU works, so the slower of the two sets the pace. Then
    the scheduler's per-step and per-sequence work. Eager overlap is partial: launch_serial_share of the
    shorter of the two is added."""
    launches = launch_s(runtime, layers, moe_layers, factor, graphs=graphs, dense_factor=dense_factor)
    if runtime.launch_overlaps:
        # The CPU runs ahead of the GPU only between the step's syncs (the next token, the stopping check),
        # so a share of the shorter side is not hidden behind the longer one (FITTED per runtime).
        core = max(gpu_s, launches) + runtime.launch_serial_share * min(gpu_s, launches)
    else:
        core = gpu_s + launches
    return core + runtime.step_s + sequences * runtime.seq_s


def expert_gemm_factor(expert_width: int, width_half: float) -> float:
    """Utilisation a grouped expert GEMM keeps against a dense one: narrow experts (Qwen3-30B-A3B's 768) tile
    the tensor cores poorly; w / (w + w½) (FITTED to Megatron-Bridge's MoE rows)."""
    if expert_width <= 0:
        return 1.0
    return expert_width / (expert_width + width_half)


def tensor_peak_flops(card: Card, precision: Precision, fp8_gain: float) -> float:
    """Dense tensor FLOP/s a job's matmuls run at: FP8 on cards with FP8 tensor cores (Hopper, Ada, Blackwell;
    cards.toml fp8_tflops), of which a real step keeps `fp8_gain` over BF16; 16-bit otherwise."""
    peak = card.tensor_tflops * 1e12
    if precision is Precision.FP8 and card.fp8_tflops:
        return peak * min(fp8_gain, card.fp8_tflops / card.tensor_tflops)
    return peak


def pipeline_bubble_factor(stages: int, micro_batches: float, virtual_stages: int) -> float:
    """Share of a pipelined step spent computing: 1 / (1 + (p − 1) / (m·v)) (Narayanan et al. 2021 §2.2)."""
    if stages <= 1:
        return 1.0
    return 1.0 / (1.0 + (stages - 1) / (max(micro_batches, 1.0) * max(virtual_stages, 1)))


def expert_all_to_all_bytes(hidden: int, experts_active: int, moe_layers: int, ranks: int) -> float:
    """Bytes one trained token sends across cards for its experts: dispatch and combine, forward and backward,
    16-bit hidden states to each of its k experts, the (n−1)/n that leave the card."""
    if ranks <= 1 or moe_layers <= 0:
        return 0.0
    return 2 * 2 * experts_active * hidden * 2.0 * moe_layers * (ranks - 1) / ranks


def expert_link_bytes_s(card: Card, link: LinkConstants, ranks: int) -> float:
    """Where the expert group spans nodes the network sets the pace, else the cards' own link."""
    if ranks > link.gpus_per_node:
        return link.internode_gb_s * 1e9 * link.collective_efficiency
    return link_one_way_bytes_s(card, link)


def tensor_parallel_train_s_per_token(
    card: Card, link: LinkConstants, layers: int, hidden: int, ranks: int, *, recompute: bool
) -> float:
    """One card's time per trained token in tensor parallelism's collectives: each layer all-reduces (or,
    with sequence parallelism, reduce-scatters and all-gathers: the same bytes) the 16-bit hidden state twice
    in the forward and twice in the backward, twice more when the forward is recomputed (Shoeybi et al. 2019
    §3; Korthikanti et al. 2022), 2·(t−1)/t of it over the ring; the t cards of the group share each token,
    so per card of throughput the time is t× one card's. Inside a node over NVLink (PCIe without it), across
    nodes over the network."""
    if ranks <= 1 or layers <= 0:
        return 0.0
    passes = 6 if recompute else 4
    ring_bytes = 2 * (ranks - 1) / ranks * hidden * 2.0
    return ranks * passes * layers * ring_bytes / data_parallel_link_bytes_s(card, link, ranks)


def tensor_parallel_exposed_without_overlap(recompute: bool, backward_exposed: float) -> float:
    """Share of tensor parallelism's per-layer collectives (tensor_parallel_train_s_per_token's 4, 6 with
    recompute) a Megatron run leaves exposed without its userbuffer overlap (`--tp-comm-overlap`, off by
    default: Megatron-LM megatron/training/arguments.py, store_true). The forward's all-gathers before the
    column-parallel GEMMs and reduce-scatters after the row-parallel ones run between the GEMMs, as does the
    recompute's forward; in the backward a column-parallel layer launches its input all-gather behind the
    dgrad GEMM and its dgrad reduce-scatter behind the wgrad GEMM (`async_op=True`: Megatron-Core
    tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication, Transformer Engine
    module/linear.py "Overlap input AG with dgrad", "Overlap dgrad-RS/AR with wgrad"), while a row-parallel
    layer gathers its output gradient before its GEMMs: `backward_exposed` of the backward's collectives
    (data/speed.toml tp_backward_exposed_without_overlap). (2 + 2·[recompute] + 2·b) / (4 + 2·[recompute])."""
    forward = 4.0 if recompute else 2.0
    return (forward + 2.0 * backward_exposed) / (forward + 2.0)


def data_parallel_traffic(
    ranks: int,
    node: int,
    *,
    sharded: bool,
    flat: bool,
    weight_bytes: float,
    grad_bytes: float,
    micro_batches: float,
) -> tuple[float, float]:
    """Bytes one card sends per micro-batch in data parallelism's collectives: (over its own link inside the
    node, over its share of the network). Sharded (ZeRO-3 / FSDP) gathers the weights for the forward and
    the backward and reduce-scatters the gradients every micro-batch (Rajbhandari et al. 2020; Zhao et al.
    2023); `flat` shards over all the ranks, so past one node the gathers' rings cross the network too
    (each of the node's NICs carrying its share, NCCL's one ring per NIC); otherwise the
    shards stay inside a node (PyTorch HSDP, DeepSpeed ZeRO++'s hpZ, Wang et al. 2023) and only the sharded
    gradients are all-reduced across nodes, once per optimizer step of `micro_batches`. Unsharded (DDP,
    ZeRO-1/2, Megatron's distributed optimizer) all-reduces the gradients once per step, hierarchically
    (NCCL: inside the node over NVLink or PCIe, across nodes each card's 1/g share over its NIC). Each ring
    moves (n−1)/n of the data."""
    if ranks <= 1:
        return 0.0, 0.0
    inside = max(1, min(ranks, node))
    nodes = -(-ranks // inside)
    steps = max(micro_batches, 1.0)
    if sharded and flat:
        total = (ranks - 1) / ranks * (2 * weight_bytes + grad_bytes)
        # A ring over several nodes runs its hops inside a node over NVLink / PCIe and between nodes over the
        # NICs; NCCL builds one ring per NIC (channels), so each of a node's `inside` NICs carries 1/inside of
        # the ring's inter-node traffic: the node's NICs together, not one card's, set the network's pace
        # (NVIDIA/nccl issue 812: a DGX-A100's 8 x 200 Gb/s cards measure 192 GB/s all-reduce bus bandwidth).
        return (total, 0.0) if nodes == 1 else (total, total / inside)
    across = 2 * grad_bytes / inside * (nodes - 1) / nodes / steps
    if sharded:
        return (inside - 1) / inside * (2 * weight_bytes + grad_bytes), across
    return (inside - 1) / inside * 2 * grad_bytes / steps, across


def network_bytes_s(card: Card, link: LinkConstants) -> float:
    """One card's share of the network between nodes (one 400 Gb/s NIC per GPU on a DGX H100), never more
    than its own link."""
    return min(link.internode_gb_s * 1e9 * link.collective_efficiency, link_one_way_bytes_s(card, link))


def data_parallel_link_bytes_s(card: Card, link: LinkConstants, cards: int) -> float:
    """One card's bytes/s in a collective over `cards` cards: its own link (NVLink, PCIe) inside a node, its
    share of the network (one 400 Gb/s NIC per GPU on a DGX H100) once the group spans nodes."""
    if cards > link.gpus_per_node:
        return network_bytes_s(card, link)
    return link_one_way_bytes_s(card, link)


def qlora_dequant_s(card: Card, constants: SpeedConstants, params: float, bytes_per_param: float) -> float:
    """QLoRA's dequantisation of the 4-bit base per micro-batch: every weight is turned back into 16 bits on
    each pass over it (forward, recompute, backward), whatever the tokens in the micro-batch — a memory-bound
    kernel, so bytes over the card's achieved bandwidth (the decode family's)."""
    if params <= 0:
        return 0.0
    bandwidth = card.bandwidth_gb_s * 1e9 * constants.bandwidth_efficiency(card)
    return params * bytes_per_param / bandwidth


def power_cap_factor(card: Card, limit_w: int | None, exponent: float) -> float:
    """Share of the tensor peak a card keeps under a board-power limit below its TDP: (limit / TDP)^exponent
    (H100 NVL at 400 W keeps 835 of the H100 SXM's 989 dense TFLOPS at 700 W: exponent 0.30)."""
    if not limit_w or not card.tdp_w or limit_w >= card.tdp_w:
        return 1.0
    return float((limit_w / card.tdp_w) ** exponent)
