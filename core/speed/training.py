"""How fast a model trains: FLOPs per token over the cards' tensor peak × utilisation, plus the time the
parallelism and the method add that computation does not hide, and wall hours.

Utilisation is the card segment's MFU under Megatron-Core (data/speed.toml [mfu]) × the training framework's
share of it (Hugging Face Trainer, PyTorch-native FSDP, Megatron; [training.frameworks]) × the pipeline's
bubble (and an optimizer offloaded to host memory). On top of the compute come: QLoRA's dequantisation of the
4-bit base on every pass (per micro-batch, so short micro-batches pay more per token), tensor parallelism's
all-reduces per layer (Megatron overlaps a fitted share of them, PyTorch's vanilla TP none) and expert
parallelism's all-to-all (over NVLink, PCIe or the network), and data parallelism's gathers and reductions
over the links the job crosses (NVLink or PCIe inside a node; between nodes the node's NICs together, one
NCCL ring per NIC), each exposed by its fitted share. FP8 runs the linear layers' GEMMs faster on cards with
FP8 tensor cores (attention stays BF16); a card held under its board power (when a source says so) clocks
lower. An eager Hugging Face stack launches a LoRA / QLoRA micro-batch's kernels from Python (and DeepSpeed
ZeRO-3 runs its fetch hooks on every module) while the GPU works: at a few hundred tokens a micro-batch the
host, not the GPU, sets the pace. `TrainingJob` holds the job's shape; `tokens_per_s_per_gpu` is the one
formula both the answers (`training_speed`) and the published-figure check (core/speed/published.py) use.
A cluster pretraining answer runs as such clusters pretrain, Megatron-LM / NeMo's 3D parallelism (tensor
parallel inside each NVLink node, pipeline and data parallel across the nodes: `pretraining_layout`), not
ZeRO-3 flat over every card across the network; the answer says the layout it assumed.
Each term's formula and source: core/speed/terms.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.estimator import Estimate, resolve_model, terms
from core.layout import TrainingLayout, layout_of, pretraining_layout
from core.query import Method, Precision, Query, Task
from core.registry import ModelArch, load_registry
from core.speed import terms as speed_terms
from core.speed.constants import LinkConstants, SpeedConstants, load_speed_constants
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
    # the 3D layout the time assumes (a cluster pretraining answer); None: ZeRO-3 / FSDP over all the cards
    layout: TrainingLayout | None = None


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


def attention_width(model: ModelArch) -> float:
    """One head's FLOPs per causal (query, key) pair over 2: the score product's width (d_qk) plus the
    value product's (d_v), 2·d where keys and values share the head width; multi-head latent attention
    computes its scores over qk_nope + qk_rope and its values over v_head_dim (the same widths as
    core/speed/inference.py's prefill)."""
    if model.is_mla and model.v_head_dim:
        return float(model.qk_nope_head_dim + model.qk_rope_head_dim + model.v_head_dim)
    return 2.0 * model.dim_head


def attention_flops_per_token(model: ModelArch, seq: int, method: Method, recompute: bool) -> float:
    """Causal attention's score and value products per trained token: 2·L·h·d·s forward (half of the full
    4·L·h·d·s; Megatron-LM's model-FLOPs count, Narayanan et al. 2021 appendix), then the backward and +1
    forward to recompute. The backward is the FLOPs the kernel runs, not the model's 2× the forward: a
    flash kernel keeps no scores, so its backward computes Q·Kᵀ again before dV, dP, dQ and dK, 2.5× the
    forward (data/speed.toml attention_backward_passes; FlashAttention's benchmark_flash_attention.py counts
    it so). Attention has no weights, so LoRA's backward through it is the full one (every layer holds
    adapters below it); freeze tuning's stops at the first trained block (one pass counted, as before).
    Multi-head latent attention (DeepSeek-V2 / V3) trains as multi-head attention over up-projected keys
    of qk_nope + qk_rope = 192 and values of v_head_dim = 128 per head (DeepSeek-V2 report §2.1;
    config.json), not hidden / heads (40 for V2, 56 for V3): the scores' and the values' widths
    (attention_width)."""
    layers = model.decoder_layers or model.layers
    forward = layers * model.heads * attention_width(model) * seq
    backward = 1.0 if method is Method.FREEZE else load_speed_constants().training.attention_backward_passes
    passes = 1.0 + backward
    if recompute:
        passes += 1.0
    return forward * passes


def expert_share(model: ModelArch) -> float:
    """Share of a token's active parameters that sit in its routed experts."""
    if not model.is_moe or not model.active_params:
        return 0.0
    return min(1.0, model.moe_layers * model.experts_active * model.expert_params / model.active_params)


@dataclass(frozen=True)
class TrainingJob:
    """A training job's shape on its cards; everything `tokens_per_s_per_gpu` needs except the constants."""

    card: Card
    gpus: int
    precision: Precision
    method: Method
    flops_per_token: float  # all of it: the linear layers' and causal attention's
    framework: str = "hf-trainer"  # data/speed.toml [training.frameworks]
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    expert_parallel: int = 1
    virtual_stages: int = 1
    # a zero-bubble schedule (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", ICLR, arXiv 2401.10241:
    # the backward split into its input and weight halves, the weight half scheduled into the bubble;
    # DeepSeek's HAI-LLM and DualPipe): the pipeline keeps no idle share
    zero_bubble: bool = False
    micro_batches: float = 1.0  # micro-batches per pipeline per step (GBS / (MBS · data-parallel ranks))
    hidden: int = 0
    layers: int = 0
    recompute: bool = False
    experts_active: int = 0
    moe_layers: int = 0
    expert_width: int = 0  # an expert's FFN width (moe_intermediate)
    expert_flops_share: float = 0.0  # share of the active FLOPs that run in expert GEMMs
    cpu_offload: bool = False
    power_limit_w: int | None = None  # a stated board-power cap (published setups only)
    dequantised_params: float = 0.0  # QLoRA: 4-bit base weights each card dequantises per micro-batch
    communication_bytes: float = 0.0  # data-parallel bytes each card sends per micro-batch over its own link
    network_bytes: float = 0.0  # ... and over its share of the network between nodes
    # the two are hops of one ring spanning the nodes (flat ZeRO-3 / FSDP), which run at once, not one after
    # the other (inside the node, then across: hierarchical reductions)
    one_ring: bool = False
    tokens_per_card_step: float = 1.0  # tokens in one card's micro-batch
    attention_flops_per_token: float = 0.0  # the share of flops_per_token in attention's score/value products
    tp_overlapped: bool = False  # the run overlaps its tensor-parallel collectives (PyTorch async TP)
    # Megatron's userbuffer overlap of its tensor-parallel collectives with the GEMMs (--tp-comm-overlap; the
    # fitted tp_exposed is for runs with it, as Megatron-Bridge's and NeMo's recipes set it); False: a source
    # whose scripts leave it off (only the backward's asynchronous collectives hidden)
    tp_comm_overlap: bool = True
    # the network between nodes a source states, Gb/s per node (its NICs together), shared by the node's
    # cards; None: [link] internode_gb_s (one 400 Gb/s NIC per GPU, a DGX H100)
    network_gbit_s_per_node: float | None = None
    # the run's attention kernel is FlashAttention-2 (True) or not (False) where its source says; None: the
    # framework's (TrainingConstants.attention_share)
    flash_attention_2: bool | None = None
    optimizer_bytes: float = 0.0  # weights, gradients and states one card's optimizer step updates
    tokens_per_optimizer_step: float = 1.0  # one card's tokens per optimizer step (all its micro-batches)
    zero3_hooks: bool = False  # DeepSpeed ZeRO-3: each module's shards fetched and released from Python hooks


def utilisation(c: SpeedConstants, job: TrainingJob) -> float:
    """The MFU the job's GEMMs reach: the segment's under Megatron-Core, × the framework's share, less the
    pipeline bubble (none under a zero-bubble schedule) and an offloaded optimizer."""
    t = c.training
    mfu = c.mfu.for_card(job.card) * t.framework_factor(job.framework)
    if not job.zero_bubble:
        mfu *= speed_terms.pipeline_bubble_factor(
            job.pipeline_parallel, job.micro_batches, job.virtual_stages
        )
    if job.cpu_offload:
        mfu *= t.cpu_offload_factor
    return mfu


def peak_flops(c: SpeedConstants, job: TrainingJob) -> float:
    """The tensor peak the job's GEMMs run against: FP8 where the card has it, lowered by a power cap."""
    peak = speed_terms.tensor_peak_flops(job.card, job.precision, c.training.fp8_gain)
    return peak * speed_terms.power_cap_factor(job.card, job.power_limit_w, c.training.power_exponent)


def compute_s_per_token(c: SpeedConstants, job: TrainingJob, mfu: float | None = None) -> float:
    """One card's GEMM and attention time per trained token: the linear layers at the job's tensor peak
    (narrow experts' grouped GEMMs slower), causal attention's score and value products at the 16-bit one:
    FP8 recipes convert the linear layers only (Transformer Engine's fp8_autocast, torchao's float8 training)
    and keep attention in BF16; FlashAttention-2 (PyTorch-native and Hugging Face stacks) keeps a smaller
    share of a Hopper card's peak than cuDNN's fused attention does (TrainingConstants.attention_share)."""
    expert = speed_terms.expert_gemm_factor(job.expert_width, c.training.expert_width_half)
    share = job.expert_flops_share
    mfu = utilisation(c, job) if mfu is None else mfu
    attention = job.attention_flops_per_token
    linear = (job.flops_per_token - attention) * ((1 - share) + share / expert) / (peak_flops(c, job) * mfu)
    if not attention:
        return linear
    bf16 = speed_terms.tensor_peak_flops(job.card, Precision.BF16, 1.0)
    bf16 *= speed_terms.power_cap_factor(job.card, job.power_limit_w, c.training.power_exponent)
    share = c.training.attention_share(job.framework, job.card.id, job.flash_attention_2)
    return linear + attention / (bf16 * mfu * share)


def elementwise_s_per_token(c: SpeedConstants, job: TrainingJob) -> float:
    """The memory-bound elementwise kernels an eager stack runs unfused around its GEMMs (RMSNorm in fp32,
    rotary embeddings, SiLU x up, residual adds, casts), at the card's bandwidth, not its tensor peak: the
    forward's bytes, twice them in the backward, once more to recompute. They take a larger share of the step
    on a card with more FLOPs per byte (an L40S or H100 against an RTX 3090): "while tensor contractions
    account for 99.80% of flop, they are only 61.0% of the runtime" (Ivanov et al. 2021, "Data Movement Is All
    You Need", MLSys, BERT in PyTorch). Stacks that fuse them (Megatron's Transformer Engine, torch.compile)
    list none (TrainingConstants.elementwise_bytes_for)."""
    per_hidden = c.training.elementwise_bytes_for(job.framework)
    if not per_hidden or not job.layers or not job.hidden:
        return 0.0
    passes = 3.0 + (1.0 if job.recompute else 0.0)
    bandwidth = job.card.bandwidth_gb_s * 1e9 * c.bandwidth_efficiency(job.card)
    return job.layers * job.hidden * per_hidden * passes / bandwidth


def optimizer_s_per_token(c: SpeedConstants, job: TrainingJob) -> float:
    """The optimizer step: a memory-bound pass (PyTorch's foreach AdamW runs each update as its own kernel)
    over the weights, gradients and states it updates, once per optimizer step, shared by that step's
    tokens: nothing for LoRA's adapters or a large batch, a real cost for a full fine-tune of a few hundred
    tokens a step (data/speed.toml optimizer_step_passes)."""
    passes = c.training.optimizer_passes_for(job.framework)
    if not job.optimizer_bytes or not passes:
        return 0.0
    bandwidth = job.card.bandwidth_gb_s * 1e9 * c.bandwidth_efficiency(job.card)
    seconds = job.optimizer_bytes * passes / bandwidth
    return seconds / max(job.tokens_per_optimizer_step, 1.0)


def job_link(c: SpeedConstants, job: TrainingJob) -> LinkConstants:
    """The links a job's collectives cross: [link], with the network between nodes the job states (its node's
    Gb/s shared by the node's cards, never more than [link] internode_gb_s), as an answer whose question names
    its network runs (_with_network)."""
    if job.network_gbit_s_per_node is None:
        return c.link
    per_card = job.network_gbit_s_per_node / 8 / c.link.gpus_per_node
    return c.link.model_copy(update={"internode_gb_s": min(per_card, c.link.internode_gb_s)})


def exposed_s_per_token(c: SpeedConstants, job: TrainingJob) -> float:
    """What the method and the model parallelism add per token that the GEMMs do not hide: QLoRA's
    dequantisation, an eager stack's unfused elementwise kernels, the optimizer step, the exposed share of
    the tensor-parallel all-reduces and of the expert all-to-all."""
    t = c.training
    seconds = elementwise_s_per_token(c, job) + optimizer_s_per_token(c, job)
    if job.dequantised_params:
        seconds += speed_terms.qlora_dequant_s(
            job.card, c, job.dequantised_params, t.qlora_dequant_bytes_per_param
        ) / max(job.tokens_per_card_step, 1.0)
    if job.tensor_parallel > 1:
        exposed = t.tp_exposed_for(job.framework, job.tp_overlapped)
        if not job.tp_comm_overlap:
            exposed = max(
                exposed,
                speed_terms.tensor_parallel_exposed_without_overlap(
                    job.recompute, t.tp_backward_exposed_without_overlap
                ),
            )
        seconds += exposed * speed_terms.tensor_parallel_train_s_per_token(
            job.card, job_link(c, job), job.layers, job.hidden, job.tensor_parallel, recompute=job.recompute
        )
    if job.expert_parallel > 1 and job.moe_layers:
        a2a = speed_terms.expert_all_to_all_bytes(
            job.hidden, job.experts_active, job.moe_layers, job.expert_parallel
        )
        link_s = speed_terms.expert_link_bytes_s(job.card, job_link(c, job), job.expert_parallel)
        seconds += a2a / link_s * t.moe_a2a_exposed
    return seconds


def data_parallel_s_per_token(c: SpeedConstants, job: TrainingJob) -> float:
    """The data-parallel collectives' time per token: inside the node over the card's link (NVLink, PCIe),
    across nodes over its share of the network. A hierarchical reduction runs its phases one after the other
    (the sum); a ring spanning the nodes (flat sharding) moves its data through every hop at once, pipelined
    in chunks, so its slowest hop sets the pace: NCCL splits the data over one ring per NIC (channels), each
    ring crossing the network once, so the time is max(bytes / the card's link, its share / its NIC's)."""
    if not job.communication_bytes and not job.network_bytes:
        return 0.0
    link = job_link(c, job)
    inside = job.communication_bytes / speed_terms.link_one_way_bytes_s(job.card, link)
    across = job.network_bytes / speed_terms.network_bytes_s(job.card, link)
    seconds = max(inside, across) if job.one_ring else inside + across
    return seconds / max(job.tokens_per_card_step, 1.0)


def launch_s_per_micro_batch(c: SpeedConstants, job: TrainingJob) -> float:
    """The host's time to launch one micro-batch: an eager stack (Hugging Face's modeling code with PEFT's
    adapters) issues every layer's kernels from Python in the forward, again in the recompute, and the
    autograd engine issues the backward's (counted as one pass more); DeepSpeed ZeRO-3 adds its fetch and
    release hooks on every module of every layer in each pass ("ZeRO3 launches too many all_gathers",
    deepspeedai/DeepSpeed issue 5047; the host overhead of its per-module hooks, PR 6649 and 6694).
    Per micro-batch, whatever its tokens: a few hundred tokens a micro-batch leave the GPU waiting on it
    (Qwen's profile: Qwen-7B LoRA 1.2 s a step of 8 x 256 tokens, 2.8 s for 8 x 1,024). Counted for LoRA and
    QLoRA, whose rows fit it (PEFT wraps every adapted linear layer in Python modules of its own: dropout,
    A, B, scaling, the add); a full fine-tune launches fewer kernels from Python and no fitted figure of one
    has micro-batches short enough to tell its cost, so none is counted there."""
    if job.method not in (Method.LORA, Method.QLORA):
        return 0.0
    per_layer = c.training.launch_s_per_layer_for(job.framework)
    if job.zero3_hooks:
        per_layer += c.training.zero3_hook_s_per_layer
    if not per_layer or not job.layers:
        return 0.0
    passes = 2.0 + (1.0 if job.recompute else 0.0)
    return job.layers * passes * per_layer


@dataclass(frozen=True)
class StepTimes:
    """One card's seconds per trained token, by term, and the utilisation its GEMMs reach."""

    mfu: float
    compute_s: float
    exposed_s: float
    data_parallel_s: float
    launch_s: float = 0.0  # the host's time to launch one micro-batch (not per token)
    tokens: float = 1.0  # one card's tokens in a micro-batch

    def gpu_per_token_s(self, dp_exposed: float) -> float:
        """The data-parallel collectives overlap the step: the longer of the two sets the pace and
        `dp_exposed` of the shorter is not hidden."""
        work = self.compute_s + self.exposed_s
        return max(work, self.data_parallel_s) + dp_exposed * min(work, self.data_parallel_s)

    def per_token_s(self, dp_exposed: float, launch_serial_share: float = 0.0) -> float:
        """The GPU's time per token, and the host's launches running ahead of it: per micro-batch the
        longer of the two sets the pace and `launch_serial_share` of the shorter is not hidden (the same
        form as an eager runtime's decode step, core/speed/terms.py step_s)."""
        gpu = self.gpu_per_token_s(dp_exposed)
        if not self.launch_s:
            return gpu
        gpu_s = gpu * self.tokens
        step = max(gpu_s, self.launch_s) + launch_serial_share * min(gpu_s, self.launch_s)
        return step / self.tokens


def step_times(c: SpeedConstants, job: TrainingJob) -> StepTimes:
    mfu = utilisation(c, job)
    return StepTimes(
        mfu=mfu,
        compute_s=compute_s_per_token(c, job, mfu),
        exposed_s=exposed_s_per_token(c, job),
        data_parallel_s=data_parallel_s_per_token(c, job),
        launch_s=launch_s_per_micro_batch(c, job),
        tokens=max(job.tokens_per_card_step, 1.0),
    )


def tokens_per_s_per_gpu(c: SpeedConstants, job: TrainingJob) -> float:
    """Trained tokens/s on one card: the compute and what the parallelism exposes, overlapped with the
    data-parallel collectives (StepTimes.per_token_s)."""
    t = c.training
    return 1.0 / step_times(c, job).per_token_s(t.dp_exposed, t.launch_serial_share)


def _communication_bytes_per_micro_batch(
    estimate: Estimate, model: ModelArch, gpus: int, c: SpeedConstants
) -> tuple[float, float]:
    """Bytes each card sends per micro-batch (inside its node, across nodes): ZeRO-3 gathers the weights
    twice and reduce-scatters the gradients every micro-batch over all the ranks, the same sharding the
    memory estimate divides the states by (core/estimator/terms.py zero_shard: over every card): DeepSpeed's
    default (zero_hpz_partition_size 1: ZeRO++'s hierarchical partitioning is off unless set, Wang et al.
    2023) and FSDP's FULL_SHARD, so past one node every gather and reduce-scatter crosses the network
    (each node's NICs carrying their share of the ring). Without ZeRO-3 the gradients are all-reduced once
    per optimizer step of `gradient_accumulation` micro-batches (data/speed.toml), hierarchically."""
    if gpus <= 1:
        return 0.0, 0.0
    query = estimate.query
    precision = query.precision or Precision.BF16
    trainable = estimate.trainable_params or estimate.params
    grad_bytes = 2.0 * trainable if (query.method or Method.FULL) is Method.FULL else 4.0 * trainable
    base = Precision.NF4 if query.method is Method.QLORA else precision
    return speed_terms.data_parallel_traffic(
        gpus,
        c.link.gpus_per_node,
        sharded=(query.zero_stage or 0) >= 3,
        flat=True,
        weight_bytes=terms.weight_bytes(model, base),
        grad_bytes=grad_bytes,
        micro_batches=c.training.gradient_accumulation,
    )


def _layout_traffic(
    estimate: Estimate, layout: TrainingLayout, seq: int, c: SpeedConstants
) -> tuple[float, float, float, float]:
    """A 3D layout's data-parallel bytes per micro-batch (inside the node, across nodes), its micro-batches
    per pipeline per step and one replica's tokens per optimizer step, as the published Megatron rows count
    them (core/speed/published.py): a pretraining step of pretrain_batch_tokens, each tensor x pipeline
    shard's gradients reduce-scattered and its weights all-gathered over its data-parallel ranks once per
    step (the distributed optimizer), hierarchically."""
    query = estimate.query
    shards = layout.tensor_parallel * layout.pipeline_parallel
    replicas = layout.data_parallel
    global_batch = c.training.pretrain_batch_sequences(seq)
    micro_batches = global_batch / max((query.batch or 1) * replicas, 1)
    node = c.link.gpus_per_node
    inside, across = speed_terms.data_parallel_traffic(
        replicas,
        max(1, node // min(layout.tensor_parallel, node)),
        sharded=False,
        flat=True,
        weight_bytes=2.0 * estimate.params / shards,
        grad_bytes=2.0 * (estimate.trainable_params or estimate.params) / shards,
        micro_batches=micro_batches,
    )
    tokens_per_step = max(global_batch, (query.batch or 1) * replicas) * seq / replicas
    return inside, across, micro_batches, tokens_per_step


def optimizer_step_bytes(estimate: Estimate) -> float:
    """The bytes one card's optimizer step updates, as the memory estimate holds them (after sharding): the
    trained weights (all of them in a full fine-tune, the adapters for LoRA), their gradients and the
    optimizer's states."""
    b = estimate.breakdown
    method = estimate.query.method or Method.FULL
    if method in (Method.LORA, Method.QLORA):
        trained = float(b.adapters)
    else:
        share = estimate.trainable_params / estimate.params if estimate.params else 1.0
        trained = b.weights * min(1.0, share)
    return trained + b.gradients + b.optimizer


_SPEEDS: IdentityMemo[TrainingSpeed] = IdentityMemo()
_NETWORKS: dict[tuple[int, float], tuple[SpeedConstants, SpeedConstants]] = {}


def _with_network(c: SpeedConstants, query: Query, card: Card) -> SpeedConstants:
    """The constants with the network between nodes: plain Ethernet at its stated speed per node (or [link]
    ethernet_node_gbit_s), shared by the node's cards, instead of one 400 Gb/s NIC per card, when the question
    names Ethernet, or names no network for cards without NVLink (consumer cards: the cluster answer assumes
    PCIe and Ethernet for them, core/advisor/cluster.py). InfiniBand, or nothing said for NVLink cards, keeps
    [link] internode_gb_s."""
    network = query.network or (None if card.has_nvlink else "ethernet")
    if network != "ethernet":
        return c
    gbit = query.network_gbit_s or c.link.ethernet_node_gbit_s
    key = (id(c), gbit)
    found = _NETWORKS.get(key)
    if found is None or found[0] is not c:
        per_card = gbit / 8 / c.link.gpus_per_node
        link = c.link.model_copy(update={"internode_gb_s": min(per_card, c.link.internode_gb_s)})
        found = _NETWORKS[key] = (c, c.model_copy(update={"link": link}))
    return found[1]


def training_speed(estimate: Estimate, card: Card, gpus: int, tokens: float | None) -> TrainingSpeed:
    """Tokens/s over `gpus` data-parallel cards (each runs its own micro-batch) and the hours for `tokens`.
    Remembered per (model, card, constants), the query and the parameter counts (core/speed/memo.py)."""
    c = _with_network(load_speed_constants(), estimate.query, card)
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
    recompute = bool(query.grad_checkpointing)
    flops = training_flops_per_token(query, estimate.active_params, estimate.trainable_params)
    attention = attention_flops_per_token(model, seq, method, recompute)
    flops += attention
    tokens_per_card_step = (query.batch or 1) * seq
    # the layout the memory estimate put in the job (core/layout.py), else the one this count would run in
    layout = (
        layout_of(query, gpus)
        if query.card == card.id and (query.gpus or 1) == gpus
        else layout_of(query, gpus) or pretraining_layout(query, model, card, gpus, c)
    )
    if layout is None:
        node_bytes, network_bytes = _communication_bytes_per_micro_batch(estimate, model, gpus, c)
        framework = c.training.framework_of(query.runtime)
        micro_batches = 1.0
        tokens_per_optimizer_step = float(tokens_per_card_step * c.training.gradient_accumulation)
    else:
        framework = layout.framework
        node_bytes, network_bytes, micro_batches, tokens_per_optimizer_step = _layout_traffic(
            estimate, layout, seq, c
        )
    # the states the optimizer steps are sharded over every card either way (ZeRO-3's, or the distributed
    # optimizer over the data-parallel ranks of each tensor x pipeline shard)
    optimizer = optimizer_step_bytes(estimate)
    job = TrainingJob(
        card=card,
        gpus=gpus,
        precision=query.precision or Precision.BF16,
        method=method,
        flops_per_token=flops,
        framework=framework,
        tensor_parallel=layout.tensor_parallel if layout else 1,
        pipeline_parallel=layout.pipeline_parallel if layout else 1,
        micro_batches=micro_batches,
        hidden=model.hidden,
        layers=model.decoder_layers or model.layers,
        recompute=recompute,
        dequantised_params=float(estimate.params) if method is Method.QLORA else 0.0,
        communication_bytes=node_bytes,
        network_bytes=network_bytes,
        one_ring=layout is None and (query.zero_stage or 0) >= 3,
        tokens_per_card_step=tokens_per_card_step,
        attention_flops_per_token=attention,
        # a MoE's routed experts run as grouped GEMMs, slower the narrower they are (the term fitted to
        # Megatron-Bridge's MoE rows); an answer's cards each hold every expert (no expert parallelism)
        experts_active=model.experts_active if model.is_moe else 0,
        moe_layers=model.moe_layers,
        expert_width=model.moe_intermediate if model.is_moe else 0,
        expert_flops_share=expert_share(model),
        optimizer_bytes=optimizer,
        tokens_per_optimizer_step=tokens_per_optimizer_step,
        # Hugging Face stacks run ZeRO-3 through DeepSpeed (LLaMA-Factory's ds_z3_config.json)
        zero3_hooks=layout is None
        and (query.zero_stage or 0) >= 3
        and gpus > 1
        and framework == "hf-trainer",
    )
    times = step_times(c, job)
    per_gpu = 1.0 / times.per_token_s(c.training.dp_exposed, c.training.launch_serial_share)
    compute_s = tokens_per_card_step * times.compute_s
    communication_s = tokens_per_card_step * times.data_parallel_s
    if method is Method.QLORA:
        notes.append("qlora_dequant")
    if job.precision is Precision.FP8 and card.fp8_tflops:
        notes.append("fp8_tensor_cores")
    if gpus > 1 and not card.has_nvlink:
        notes.append("no_nvlink")
    if communication_s > compute_s and (not card.has_nvlink or gpus > c.link.gpus_per_node):
        notes.append("communication_bound")
    if query.grad_checkpointing:
        notes.append("recompute")
    tokens_per_s = gpus * per_gpu
    hours = tokens / tokens_per_s / 3600 if tokens else None
    return TrainingSpeed(
        tokens_per_s=tokens_per_s,
        training_hours=hours,
        gpu_hours=hours * gpus if hours is not None else None,
        mfu=times.mfu,
        flops_per_token=flops,
        step_s=tokens_per_card_step / per_gpu,
        communication_s=communication_s,
        band=band_for(c, "training", card, training=True),
        calibrated_on=calibrated_on("training", card, training=True, framework=job.framework),
        notes=notes,
        layout=layout,
    )


def is_training(query: Query) -> bool:
    return query.task is not Task.INFERENCE
