"""Per-card peak memory of a job: which bytes are alive at the worst moment, component by component.

This module composes the named formulas of core/estimator/terms.py (each with its source): it decides which
terms are alive at the peak and how the cards share them, and holds no memory formula of its own.

Training peaks either early in the backward pass (all activations and the logits' gradients alive, the
optimizer state from the previous step still held) or as the backward pass ends and the optimizer steps
(weights, every gradient, optimizer state); the estimate takes the larger and reports the components alive
at that moment.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from core.catalog import Card, Catalog, load_catalog
from core.estimator import terms
from core.estimator.calibration import ActivationCoefficients, Calibration, load_calibration
from core.estimator.result import Breakdown, Estimate, Fit, FolkRule, Verdict, VllmPool
from core.jobs import rl, zero_offload
from core.jobs.defaults import cpu_defaults, device_defaults, on_cpu, runtime_defaults
from core.jobs.slots import serve_in_slots
from core.jobs.weight_offload import offloaded_weight_bytes
from core.layout import (
    LAYOUT_FIELDS,
    LayoutProblem,
    TrainingLayout,
    layout_of,
    may_choose_layout,
    named_cards,
    names_layout,
    pretraining_layout,
    resolve_named,
    with_layout,
)
from core.query import Method, Optimizer, Precision, Query, Task
from core.registry import ModelArch, Registry, load_registry
from core.runtimes import runtime_profile
from core.units import GIB


class UnknownModelError(ValueError):
    def __init__(self, name: str, suggestions: list[str]) -> None:
        super().__init__(name)
        self.name = name
        self.suggestions = suggestions


class UnknownCardError(ValueError):
    def __init__(self, name: str, suggestions: list[str]) -> None:
        super().__init__(name)
        self.name = name
        self.suggestions = suggestions


def resolve_model(query: Query, registry: Registry) -> ModelArch:
    if query.model:
        if query.model in registry.by_id:
            return registry.get(query.model)
        match = registry.resolve(query.model)
        if match is None:
            raise UnknownModelError(query.model, registry.closest(query.model))
        return match.model
    if query.params_b:
        return registry.representative(query.params_b)
    raise UnknownModelError("", [])


def resolve_card(query: Query, catalog: Catalog) -> Card | None:
    if not query.card:
        return None
    if query.card in catalog.by_id:
        return catalog.get(query.card)
    match = catalog.resolve(query.card)
    if match is None:
        raise UnknownCardError(query.card, catalog.closest(query.card))
    return match.card


def _coefficients(query: Query, calibration: Calibration) -> ActivationCoefficients:
    if query.task is Task.INFERENCE:
        return calibration.inference
    if query.method in (Method.FULL, None):
        return calibration.full if query.master_weights else calibration.full_bf16
    return calibration.lora


def _inference(
    query: Query, model: ModelArch, cal: Calibration, gpus: int
) -> tuple[Breakdown, str, VllmPool | None]:
    assert query.precision and query.batch and query.seq
    if query.bits_per_weight is not None:
        # EXL2 at its own width (exllamav2 convert: the layers' average bits per weight; the 6-bit head
        # offsets the 16-bit embeddings, which ExLlamaV2 keeps in system memory)
        weights = int(model.total_params * query.bits_per_weight / 8) // gpus
    else:
        weights = terms.weight_bytes(model, query.precision) // gpus
    # vLLM --cpu-offload-gb: that many GiB of each card's weights stay in host memory (jobs/weight_offload.py)
    weights -= offloaded_weight_bytes(query, weights)
    kv_dtype = terms.kv_dtype_bytes(query.precision, query.kv_cache_dtype)
    engine = runtime_profile(query.runtime).memory
    kv_cache = terms.kv_cache_bytes(
        model,
        query.seq,
        kv_dtype,
        sequences=query.batch,
        gpus=gpus,
        compressed_mla=engine.kv_compressed_mla,
        windowed=engine.kv_windowed,
    )
    if engine.layout == "kv_pool":
        # vLLM's profile run: one bounded prefill chunk through the model, fp32 logits for every token of it
        # plus a near-constant rest. The chunk without a card here; `_vllm_card_chunk_logits` adds what a
        # card's larger default chunk costs.
        chunk = terms.vllm_prefill_chunk_tokens(None, cal.vllm)
        activations = terms.vllm_profile_activation_bytes(cal.vllm)
        logits = int(terms.logit_bytes(chunk, model, cal.vllm.logits_bytes_per_vocab))
        breakdown = Breakdown(weights=weights, kv_cache=kv_cache, activations=activations, logits=logits)
        return breakdown, "vllm_profile", None
    # A prefill engine: the whole prompt at once (transformers), or in chunks of the engine's micro-batch
    # (llama.cpp's n_ubatch); layers split over cards, so a card holds one block's full transient; logits
    # only for the last position (generate()).
    tokens = query.batch * min(query.seq, engine.prefill_chunk_tokens or query.seq)
    fp32 = query.precision is Precision.FP32
    activations = terms.block_activation_bytes(model, tokens, cal.inference, fp32=fp32)
    activations += terms.eager_scores_bytes(
        model, query.batch, query.seq, cal.eager_attention.inference, queries=engine.prefill_chunk_tokens
    )
    activations += terms.sliding_window_mask_bytes(model, query.batch, query.seq)
    logits = int(terms.logit_bytes(query.batch, model, cal.inference.logits_per_vocab))
    return (
        Breakdown(weights=weights, kv_cache=kv_cache, activations=activations, logits=logits),
        "prefill",
        None,
    )


def _megatron(query: Query, model: ModelArch, layout: TrainingLayout) -> tuple[Breakdown, str, int]:
    """One card of a Megatron-LM / NeMo 3D layout (the one the time assumes, core/layout.py): its share of
    the model states under the distributed optimizer, and the activations of the busier of the first
    pipeline stage (p micro-batches in flight under 1F1B) and the last (one micro-batch, plus the logits),
    with tensor + sequence parallelism and flash attention (terms.megatron_*). Megatron keeps its weights,
    its contiguous fp32 gradient buffer and its optimizer shard allocated for the whole step, so they are
    all alive beside the activations at the peak."""
    assert query.batch and query.seq
    from core.speed.constants import load_speed_constants  # core.speed imports this module

    t = load_speed_constants().training
    tp, pp, dp = layout.tensor_parallel, layout.pipeline_parallel, layout.data_parallel
    weights, gradients, optimizer = terms.megatron_state_bytes(
        float(model.total_params),
        tp,
        pp,
        dp,
        replicated_bytes_per_param=t.layout_replicated_bytes_per_param,
        sharded_bytes_per_param=t.layout_sharded_bytes_per_param,
    )
    first, last = terms.megatron_activation_bytes(
        model,
        query.seq,
        query.batch,
        tp,
        pp,
        recompute=bool(query.grad_checkpointing),
        attention_scores=model.attention == "eager",
    )
    logits = terms.megatron_logit_bytes(model, query.seq, query.batch, tp)
    if pp == 1:
        activations, logits_alive = first, logits
    elif first >= last + logits:
        activations, logits_alive = first, 0.0
    else:
        activations, logits_alive = last, logits
    breakdown = Breakdown(
        weights=int(weights),
        activations=int(activations),
        logits=int(logits_alive),
        gradients=int(gradients),
        optimizer=int(optimizer),
    )
    return breakdown, "backward", model.total_params


def _training(query: Query, model: ModelArch, cal: Calibration, gpus: int) -> tuple[Breakdown, str, int]:
    assert query.precision and query.batch and query.seq and query.optimizer is not None
    layout = layout_of(query, gpus)
    if layout is not None:
        return _megatron(query, model, layout)
    asked = query  # the RL models besides the policy are sized from the job as asked
    # chosen + rejected; generations × (prompt + completion), as many as the update holds at once
    sequences, seq = rl.held_in_update(query)
    if (sequences, seq) != (query.batch, query.seq):
        query = query.model_copy(update={"batch": sequences, "seq": seq})
    assert query.precision and query.batch and query.seq and query.optimizer is not None
    method = query.method or Method.FULL
    coeff = _coefficients(query, cal)
    # Sequence parallelism (DeepSpeed Ulysses, ring attention) splits each sequence over `sp` cards: a card
    # holds the activations and logits of seq / sp tokens (Ulysses: "each GPU holds N/P of the sequence")
    sp = max(1, query.sequence_parallel or 1)
    tokens = query.batch * query.seq // sp
    params = model.total_params
    zero = query.zero_stage or 0

    # -- model states ------------------------------------------------------------------------------------
    if method is Method.FULL:
        trainable = params
        master = bool(query.master_weights)
        per_param = terms.trained_weight_bytes_per_param(query.precision, master_weights=master)
        weights = terms.zero_shard(per_param * params, "weights", zero, gpus)
        gradients = terms.zero_shard(per_param * params, "gradients", zero, gpus)
        states = terms.optimizer_bytes_per_param(query.optimizer, full_precision_states=master)
        optimizer = terms.zero_shard(states * params, "optimizer", zero, gpus)
        adapters = 0.0
        if query.offload in zero_offload.OFFLOADED:
            weights, gradients, optimizer = zero_offload.gpu_states(query, model, gpus)
    else:
        base_precision = Precision.NF4 if method is Method.QLORA else query.precision
        if method is Method.FREEZE:
            trainable = terms.freeze_trainable_params(model)
        else:
            trainable = terms.lora_trainable_params(
                model, query.lora_rank or 16, query.lora_targets or "all-linear"
            )
        weights = terms.zero_shard(terms.weight_bytes(model, base_precision), "weights", zero, gpus)
        adapters = terms.adapter_bytes(trainable)
        gradients = terms.adapter_bytes(trainable)
        # QLoRA's recipe pages 8-bit Adam states (QLoRA §3); LoRA uses the asked optimizer.
        opt = Optimizer.ADAMW_8BIT if method is Method.QLORA else query.optimizer
        states = terms.optimizer_bytes_per_param(opt, full_precision_states=True)
        optimizer = terms.zero_shard(states * trainable, "optimizer", zero, gpus)

    # -- activations and logits (per card: each card runs its own micro-batch) ----------------------------
    fp32 = query.precision is Precision.FP32
    block = float(terms.block_activation_bytes(model, tokens, coeff, fp32=fp32))
    block += terms.eager_scores_bytes(model, query.batch, query.seq, cal.eager_attention.training) / sp
    block += terms.sliding_window_mask_bytes(model, query.batch, query.seq)
    activations = terms.stored_activation_bytes(
        model,
        tokens,
        block,
        coeff,
        grad_checkpointing=bool(query.grad_checkpointing),
        backpropagated_layers=terms.freeze_trained_layers(model) if method is Method.FREEZE else None,
    )
    if query.offload_activations and query.grad_checkpointing:
        activations -= zero_offload.checkpoint_bytes(model, tokens, coeff.checkpoint_hidden)
    # logits: every token's, or only the completions' (GRPO / PPO), or one chunk's (a fused cross-entropy);
    # per entry what the loss holds (transformers' cross-entropy, or the RL trainers' per-token log-probs)
    positions = rl.logit_positions(asked) if asked.algorithm is not None else tokens
    chunk = zero_offload.loss_chunk_tokens(query)
    chunked = chunk is not None
    if chunk is not None and not runtime_profile(query.runtime).defaults.chunked_loss:
        # a fused cross-entropy asked of a plain runtime (Liger: transformers, TRL, LLaMA-Factory
        # enable_liger_kernel) chunks by Liger's rule; a framework's own chunked loss (Unsloth, torchtune)
        # keeps its chunk (data/jobs.toml)
        chunk = terms.fused_loss_chunk_tokens(model, positions)
    if chunk is not None:
        positions = min(positions, chunk)
    log_probs = asked.algorithm in rl.LOG_PROB_LOSSES
    per_vocab = cal.log_probs.bytes_per_vocab if log_probs else coeff.logits_per_vocab
    logits = terms.logit_bytes(positions, model, per_vocab)
    if chunked:
        master = bool(query.master_weights)
        head_grad = (
            terms.trained_weight_bytes_per_param(query.precision, master_weights=master)
            if method is Method.FULL
            else 0.0  # a frozen lm_head (LoRA) gets no weight gradient
        )
        activations += terms.fused_loss_weight_grad_bytes(model, head_grad)
        hidden_bytes = 4.0 if method is Method.FULL and master else 2.0  # fp32 final norm under autocast
        logits += terms.fused_loss_input_bytes(model, tokens, hidden_bytes)
        if query.grad_checkpointing:
            # The loss's chunk and input side live in the forward pass and are gone before the backward
            # recomputes the first block (whose activations `activations` counts): the larger of the two is
            # alive at the peak, not both (measured: full-chunked rows, data/measured/memory.csv).
            logits = max(0.0, logits - block)
    if method is Method.FULL and query.master_weights and query.offload not in zero_offload.OFFLOADED:
        copies: float = terms.autocast_weight_copy_bytes(
            model, grad_checkpointing=bool(query.grad_checkpointing)
        )
        if log_probs and query.grad_checkpointing:
            # A per-token log-prob loss peaks as the forward pass ends (its logits do not grow in the
            # backward), while autocast's cache still holds every block's 16-bit weight copy; the block
            # recomputed later in the backward is not alive then. The larger of the two counts.
            every = terms.autocast_weight_copy_bytes(model, grad_checkpointing=False)
            copies += max(0.0, every - copies - block)
        activations += terms.zero_shard(copies, "weights", zero, gpus)
    if method is Method.QLORA:
        activations += terms.qlora_dequantization_bytes(model)
    activations += terms.zero3_buffer_bytes(params, trainable, cal.zero3, zero_stage=zero, gpus=gpus)

    if method is Method.FULL and query.offload not in zero_offload.OFFLOADED:
        embedding = terms.embedding_gradient_bytes(model, coeff.embedding_grad_copies)
        gradients += terms.zero_shard(embedding, "gradients", zero, gpus)

    # -- the other models of preference / RL training (reference, critic, reward, rollout) --
    kv_cache = 0.0
    asleep: list[rl.RlModel] = []  # a colocated engine that sleeps during the update: its own phase
    if query.algorithm is not None:
        per_param = (weights + gradients + optimizer) / max(params, 1) * (gpus if zero >= 3 else 1)
        for other in rl.extra_models(asked, model, gpus, per_param):
            if not other.on_training_cards:
                continue
            if other.asleep_in_update:
                asleep.append(other)
                continue
            weights += other.weights_bytes
            optimizer += other.states_bytes
            kv_cache += other.kv_bytes

    backward_start = Breakdown(
        weights=int(weights),
        kv_cache=int(kv_cache),
        activations=int(activations),
        logits=int(logits),
        # Adapters' gradients build up layer by layer while the activations are still alive, and being small
        # they are all there at the peak (MemTracker on Mixtral-8x7B LoRA: 1.4 GB of them at the backward
        # peak); a full fine-tune's gradients are the other phase's.
        gradients=int(gradients) if method is not Method.FULL else 0,
        optimizer=int(optimizer),
        adapters=int(adapters),
    )
    backward_end = Breakdown(
        weights=int(weights),
        kv_cache=int(kv_cache),
        gradients=int(gradients),
        optimizer=int(optimizer),
        adapters=int(adapters),
    )
    phases = [(backward_start, "backward"), (backward_end, "optimizer_step")]
    if asleep:
        # The rollout phase: the engine awake with its weights and the generations' KV cache, beside what
        # the training cards keep between updates (the policy's weight and optimizer shards, the frozen
        # models); no activations, and no gradients (the update ends with optimizer.zero_grad(), set_to_none).
        phases.append(
            (
                Breakdown(
                    weights=int(weights + sum(m.weights_bytes for m in asleep)),
                    kv_cache=int(kv_cache + sum(m.kv_bytes for m in asleep)),
                    optimizer=int(optimizer),
                    adapters=int(adapters),
                ),
                "rollout",
            )
        )
    peak, phase = max(phases, key=lambda item: item[0].total)  # the first of equal peaks
    return peak, phase, int(trainable)


def _with_overhead(breakdown: Breakdown, cal: Calibration, gpus: int, runtime: str | None) -> Breakdown:
    kind = runtime_profile(runtime).memory.overhead
    overhead = terms.runtime_overhead_bytes(breakdown.tracked, cal, gpus=gpus, kind=kind)
    return breakdown.model_copy(update={"overhead": int(overhead)})


def _uncertainty(query: Query, model: ModelArch) -> float:
    """Relative band of the tracked bytes: ±10% where measured recipes back the formula, wider elsewhere."""
    band = 0.10
    if model.representative:
        band += 0.10
    if query.method in (Method.QLORA, Method.FREEZE):
        band += 0.05
    band += runtime_profile(query.runtime).memory.extra_uncertainty  # an engine's unmeasured buffers
    if query.precision in terms.GGUF or model.is_encoder_decoder or not model.verified:
        band += 0.10
    return round(band, 2)


def per_card(query: Query, model: ModelArch, gpus: int, cal: Calibration) -> tuple[Breakdown, str, int]:
    """The breakdown on one of `gpus` cards, the peak phase, and the trainable parameter count."""
    if query.task is Task.INFERENCE:
        breakdown, phase, _ = _inference(query, model, cal, gpus)
        trainable = 0
    else:
        breakdown, phase, trainable = _training(query, model, cal, gpus)
    if on_cpu(query):
        return breakdown, phase, trainable  # no GPU: no CUDA context nor caching allocator
    return _with_overhead(breakdown, cal, gpus, query.runtime), phase, trainable


def verdict_for(
    need: int, capacity: int, *, card_id: str, count: int, uncertainty: float, notes: list[str]
) -> Verdict:
    """Fits / tight / no: tight when the margin is inside half the uncertainty band (or under 5%)."""
    margin_bytes = capacity - need
    margin = margin_bytes / capacity
    if need > capacity:
        fits = Fit.NO
    elif margin < max(0.05, uncertainty / 2):
        fits = Fit.TIGHT
    else:
        fits = Fit.FITS
    return Verdict(
        card=card_id,
        count=count,
        fits=fits,
        capacity_bytes=capacity,
        need_bytes=need,
        margin_bytes=margin_bytes,
        margin=round(margin, 4),
        notes=notes,
    )


def _card_notes(card: Card, query: Query, count: int) -> list[str]:
    notes: list[str] = []
    if count > 1 and not card.has_nvlink:
        notes.append("no_nvlink")
    if query.precision is Precision.BF16 and card.bf16_tflops == 0:
        notes.append("no_bf16")
    if query.precision is Precision.FP8 and card.fp8_tflops == 0:
        notes.append("no_fp8")
    return notes


def _vllm_card_chunk_logits(card: Card | None, model: ModelArch, cal: Calibration) -> int:
    """Extra profile-run logits on a card whose default prefill chunk is larger than the card-less one."""
    extra_tokens = terms.vllm_prefill_chunk_tokens(card, cal.vllm) - terms.vllm_prefill_chunk_tokens(
        None, cal.vllm
    )
    return int(terms.logit_bytes(extra_tokens, model, cal.vllm.logits_bytes_per_vocab))


def _vllm_pool(
    query: Query, breakdown: Breakdown, capacity: int, cal: Calibration, kv_per_seq: int
) -> VllmPool:
    assert query.gpu_memory_utilization is not None
    fixed = breakdown.weights + breakdown.activations + breakdown.logits + breakdown.overhead
    engine = runtime_profile(query.runtime).memory
    of_free = engine.memory_share_of == "free"
    if of_free:
        # LMDeploy: the share is of what is free once the weights and buffers are in (CUDA context included)
        budget = _free_share_budget(fixed, capacity, query.gpu_memory_utilization)
    else:
        budget = int(capacity * query.gpu_memory_utilization)
        fixed -= int(cal.runtime.cuda_context_gib * GIB)  # vLLM's budget is of torch-visible memory
    pool = max(0, budget - fixed)
    max_sequences = pool // kv_per_seq if kv_per_seq else 0
    # vLLM's scheduler runs at most max_num_seqs at once; asked for a number of users, it runs what the pool
    # holds and queues the rest. Asked for none, one sequence is what the card must hold to serve at all.
    max_concurrent = min(max_sequences, cal.vllm.max_num_seqs)
    requested = None if "batch" in query.defaulted else (query.batch or 1)
    return VllmPool(
        budget_bytes=budget,
        kv_pool_bytes=pool,
        kv_bytes_per_sequence=kv_per_seq,
        max_sequences=max_sequences,
        profile_activation_bytes=breakdown.activations + breakdown.logits,
        non_torch_bytes=breakdown.overhead - int(cal.runtime.cuda_context_gib * GIB),
        requested_sequences=requested or 1,
        concurrent_sequences=min(requested, max_concurrent) if requested else max_concurrent,
        queued_sequences=max(0, requested - max_concurrent) if requested else 0,
        capacity_sequences=max_concurrent,
        kv_share_of_free=query.gpu_memory_utilization if of_free else None,
        kv_share_flag=engine.memory_share_flag if of_free else None,
    )


def _free_share_budget(fixed: int, capacity: int, share: float) -> int:
    """What an engine whose KV cache takes `share` of the memory left free after loading (LMDeploy's
    cache_max_entry_count) uses of a card: the weights and buffers, then that share of the rest."""
    return fixed + int(share * max(0, capacity - fixed)) if fixed < capacity else capacity


class _Memory(NamedTuple):
    """The card-independent part of an estimate (what plans over many cards share)."""

    filled: Query
    model: ModelArch
    breakdown: Breakdown
    phase: str
    trainable: int


PerCard = Callable[[Query, ModelArch, int, Calibration], tuple[Breakdown, str, int]]


def _memory(query: Query, registry: Registry, cal: Calibration, sized: PerCard = per_card) -> _Memory:
    model = resolve_model(query, registry)
    if model.native_precision and query.precision is None and query.task is Task.INFERENCE:
        # Serve a model as released (DeepSeek-V3/R1 in FP8, gpt-oss in MXFP4), stated as an assumption.
        query = query.model_copy(
            update={
                "precision": Precision(model.native_precision),
                "defaulted": (*query.defaulted, "precision"),
            }
        )
    filled = query.with_defaults()
    if filled.sequence_parallel is not None:
        # over all the cards when no degree was said (0); at most the cards there are; none for inference
        degree = min(filled.sequence_parallel or (filled.gpus or 1), filled.gpus or 1)
        keep = degree > 1 and filled.task is not Task.INFERENCE
        filled = filled.model_copy(update={"sequence_parallel": degree if keep else None})
    if (
        filled.gpus
        and filled.gpus > 1
        and filled.task is not Task.INFERENCE
        and query.zero_stage is None
        and layout_of(filled) is None
    ):
        # Several cards for training: shard everything (FSDP full shard / ZeRO-3), the setting that makes
        # memory the least; stated as an assumption.
        filled = filled.model_copy(update={"zero_stage": 3})
    breakdown, phase, trainable = sized(filled, model, filled.gpus or 1, cal)
    return _Memory(filled, model, breakdown, phase, trainable)


@lru_cache(maxsize=8192)
def _memory_cached(query: Query) -> _Memory:
    return _memory(query, load_registry(), load_calibration(), _per_card_shared)


def _per_card_shared(
    filled: Query, model: ModelArch, gpus: int, cal: Calibration
) -> tuple[Breakdown, str, int]:
    """`per_card` for the shipped data, remembered by the filled job without its `defaulted` list: the bytes
    depend on the values, not on which of them were said (a plan's variant and the same job asked outright,
    a fix's trial and the search that tried it fill to the same job: ~28% of a new answer's breakdowns).
    The model and calibration follow from the job (resolve_model reads only its model and size)."""
    return _per_card_cached(filled.model_copy(update={"defaulted": ()}))


@lru_cache(maxsize=8192)
def _per_card_cached(job: Query) -> tuple[Breakdown, str, int]:
    return per_card(job, resolve_model(job, load_registry()), job.gpus or 1, load_calibration())


def need_bytes(query: Query) -> int:
    """Bytes one of `query.gpus` cards must hold, whatever the card: what plans screen cards with."""
    if query.card is not None or query.card_memory_bytes is not None:
        query = query.model_copy(update={"card": None, "card_memory_bytes": None})
    return _memory_cached(query).breakdown.total


def short_of(query: Query, card: Card, count: int) -> bool:
    """True when the job cannot run on `count` × `card`, known without its estimate on the card: a screen that
    spares searches over many cards and counts the estimates of those far too small (False: the estimate
    decides). The part of the job's memory that no card changes is already more than the card holds: the
    whole card-free breakdown, or for a KV-pool engine all of it but the KV cache (on a card the engine holds
    one sequence's cache instead, its larger prefill chunk only adds logits, and its share of the card is at
    most the card). Never answered for a Mac (its engine comes from the device) or an offloading engine
    serving (its context comes from the card's memory)."""
    if card.unified_memory:
        return False
    floor = short_floor(query, count)
    return floor is not None and floor > card.memory_bytes


def short_floor(query: Query, count: int) -> int | None:
    """The bytes `short_of` weighs against a card's memory for `count` cards (the same for every card that is
    not a Mac), or None when the screen cannot tell (every card then gets its estimate): a search over many
    cards works it out once."""
    job = query.model_copy(update={"card": None, "card_memory_bytes": None, "gpus": count, "cpu_only": None})
    if job.task is Task.INFERENCE and job.runtime is not None and runtime_profile(job.runtime).host_offload:
        return None
    if names_layout(job) or may_choose_layout(job, count):
        return None  # a card's 3D layout (core/layout.py) may hold less than the card-free ZeRO-3 floor
    try:
        arch = resolve_model(job, load_registry())
    except UnknownModelError:
        return None
    memory = _memory_cached(serve_in_slots(runtime_defaults(job, None, arch))[0])
    floor = memory.breakdown.total
    if memory.filled.task is Task.INFERENCE and runtime_profile(memory.filled.runtime).kv_pool:
        floor -= memory.breakdown.kv_cache
    return floor


def estimate(
    query: Query,
    *,
    registry: Registry | None = None,
    catalog: Catalog | None = None,
    calibration: Calibration | None = None,
) -> Estimate:
    """The whole answer to "how much memory": per-card breakdown, folk rule, verdicts for 1 and N cards.

    Pure, so results for the shipped data are cached (a plan compares one job with every card).
    """
    if registry is None and catalog is None and calibration is None:
        return _estimate_cached(query)
    return _estimate(
        query, registry or load_registry(), catalog or load_catalog(), calibration or load_calibration()
    )


@lru_cache(maxsize=1024)
def _estimate_cached(query: Query) -> Estimate:
    return _estimate(query, load_registry(), load_catalog(), load_calibration(), memory=_memory_cached)


def _estimate(
    query: Query,
    registry: Registry,
    catalog: Catalog,
    cal: Calibration,
    memory: Callable[[Query], _Memory] | None = None,
) -> Estimate:
    def job(q: Query) -> _Memory:
        return memory(q) if memory else _memory(q, registry, cal)

    card = resolve_card(query, catalog)
    capacity = card.memory_bytes if card else query.card_memory_bytes
    arch = resolve_model(query, registry)
    query = device_defaults(query, card)  # a Mac: a Metal engine on its one device
    query = cpu_defaults(query)  # no GPU: a CPU engine (llama.cpp) in system RAM
    problem: LayoutProblem | None = None
    if names_layout(query):
        # 'TP8 PP4': the cards it spans when no count was said, the layout checked (a reason, never a swap)
        cards = named_cards(query)
        if cards is not None:
            query = query.model_copy(update={"gpus": cards})
        query, problem = resolve_named(query, arch)
    query = runtime_defaults(query, capacity * (query.gpus or 1) if capacity else None, arch)
    query, slots = serve_in_slots(query)  # Ollama: the memory of its slots, the other requests queued
    if card is not None:
        query = _with_chosen_layout(query, arch, card)
    # the job's memory on no card; "no GPU" beside a card named is answered for the card
    cpu_only = query.cpu_only if card is None and not capacity else None
    shared = job(query.model_copy(update={"card": None, "card_memory_bytes": None, "cpu_only": cpu_only}))
    base, model, breakdown, phase, trainable = shared
    filled = base.model_copy(
        update={
            "card": card.id if card else query.card,
            "card_memory_bytes": query.card_memory_bytes,
            "model": None if model.representative else model.id,
        }
    )
    gpus = filled.gpus or 1
    # what follows from the card-free job alone (`filled` differs from it only in card and model name)
    uncertainty, folk = (
        _card_free_facts(shared, cal)
        if memory
        else (_uncertainty(filled, model), _folk_rule(filled, model, cal))
    )
    vllm = runtime_profile(filled.runtime).kv_pool and filled.task is Task.INFERENCE  # a KV-pool engine
    profile_extra = _vllm_card_chunk_logits(card, model, cal) if vllm else 0
    if profile_extra:
        breakdown = breakdown.model_copy(update={"logits": breakdown.logits + profile_extra})

    verdicts: list[Verdict] = []
    vllm_pool: VllmPool | None = None
    if capacity:
        card_id = card.id if card else f"{round(capacity / GIB)}gb"
        usable = capacity
        share_of_free = vllm and runtime_profile(filled.runtime).memory.memory_share_of == "free"
        if vllm and not share_of_free:
            assert filled.gpu_memory_utilization is not None
            # vLLM budgets a share of the card for itself; the CUDA context lives outside that share.
            usable = min(
                capacity, int(capacity * filled.gpu_memory_utilization + cal.runtime.cuda_context_gib * GIB)
            )
        kv_dtype = terms.kv_dtype_bytes(filled.precision or Precision.BF16, filled.kv_cache_dtype)
        for count in sorted({1, gpus}):
            if count == gpus:
                counted = breakdown
            else:
                single = query.model_copy(
                    update={
                        "card": None,
                        "card_memory_bytes": None,
                        "gpus": 1,
                        "zero_stage": 0,
                        **dict.fromkeys(LAYOUT_FIELDS),
                    }
                )
                counted = job(single).breakdown
                counted = counted.model_copy(update={"logits": counted.logits + profile_extra})
            if vllm:
                # A serving engine fills the rest of its memory share with a KV pool, runs as many of the
                # asked sequences as the pool holds and queues the rest (VllmPool says how many). To serve at
                # all the card must hold the fixed part plus one sequence of the asked context (vLLM refuses
                # to start otherwise), so that is what the verdict weighs.
                kv_seq = terms.kv_cache_bytes(
                    model, filled.seq or 1, kv_dtype, gpus=count, compressed_mla=True
                )
                pool = _vllm_pool(filled, counted, capacity, cal, kv_seq)
                if share_of_free:
                    usable = pool.budget_bytes
                counted = counted.model_copy(update={"kv_cache": kv_seq})
                if count == gpus:
                    breakdown, vllm_pool = counted, pool
            notes = _card_notes(card, filled, count) if card else []
            verdicts.append(
                verdict_for(
                    counted.total, usable, card_id=card_id, count=count, uncertainty=uncertainty, notes=notes
                )
            )

    warnings = _warnings(filled, model, card)
    return Estimate(
        query=filled,
        model_name=model.name,
        representative_shape=model.representative,
        params=model.total_params,
        active_params=model.active_params,
        trainable_params=trainable,
        breakdown=breakdown,
        peak_phase=phase,
        folk=folk,
        uncertainty=uncertainty,
        verdicts=verdicts,
        vllm=vllm_pool,
        slots=slots,
        warnings=warnings,
        model_context=model.max_context if "context_beyond_model" in warnings else None,
        layout_problem=problem,
    )


def _with_chosen_layout(query: Query, model: ModelArch, card: Card) -> Query:
    """The job with the parallel layout it runs in on `card` (core/layout.py): the one the question named,
    or the Megatron 3D layout a multi-node pretraining job is answered with, so that the memory estimated
    here and the time core/speed/training.py works out assume the same layout."""
    if query.task is not Task.PRETRAIN or not card.has_nvlink or layout_of(query) is not None:
        return query  # (pretraining_layout chooses one only for pretraining on NVLink cards)
    from core.speed.constants import load_speed_constants  # core.speed imports this module

    if (query.gpus or 1) <= load_speed_constants().link.gpus_per_node:
        return query  # one node: no layout chosen (filling the defaults leaves the count, 1 if unsaid)
    filled = query.with_defaults()
    chosen = pretraining_layout(filled, model, card, filled.gpus or 1, load_speed_constants())
    return with_layout(query, chosen)


# (uncertainty, folk rule) per card-free job, kept by the identity of its cached _Memory (`_card_free_facts`)
_CARD_FREE_FACTS: dict[int, tuple[_Memory, Calibration, float, FolkRule]] = {}
_CARD_FREE_FACTS_MAX = 8192


def _card_free_facts(shared: _Memory, cal: Calibration) -> tuple[float, FolkRule]:
    """The uncertainty band and the folk rule of a job, which read only its card-free part: worked out once
    per cached card-free job, not once per card a search estimates it on. Each entry keeps its job and
    calibration alive and is checked by identity, so an id is never mistaken for another object's."""
    found = _CARD_FREE_FACTS.get(id(shared))
    if found is not None and found[0] is shared and found[1] is cal:
        return found[2], found[3]
    if len(_CARD_FREE_FACTS) >= _CARD_FREE_FACTS_MAX:
        _CARD_FREE_FACTS.clear()
    uncertainty = _uncertainty(shared.filled, shared.model)
    folk = _folk_rule(shared.filled, shared.model, cal)
    _CARD_FREE_FACTS[id(shared)] = (shared, cal, uncertainty, folk)
    return uncertainty, folk


def _folk_rule(query: Query, model: ModelArch, cal: Calibration) -> FolkRule:
    assert query.precision
    return terms.folk_rule(model, query.precision, query.task, query.method, cal.folk_rule)


def _warnings(query: Query, model: ModelArch, card: Card | None) -> list[str]:
    warnings: list[str] = []
    if model.representative:
        warnings.append("representative_shape")
    if query.seq and query.seq > model.max_context and not model.representative:
        warnings.append("context_beyond_model")
    if (
        query.task is Task.INFERENCE
        and query.precision in terms.GGUF
        and runtime_profile(query.runtime).kv_pool
    ):
        warnings.append("gguf_on_vllm")
    if (
        query.task is Task.INFERENCE
        and query.gpus
        and runtime_profile(query.runtime).kv_pool  # the serving engines, every one tensor-parallel
        and not model.tensor_parallel_ok(query.gpus)
    ):
        warnings.append("tensor_parallel_uneven")  # 16 heads on 6 cards: the engine refuses to start
    if card and card.vendor != "NVIDIA" and query.method is Method.QLORA:
        warnings.append("bitsandbytes_non_nvidia")
    if query.precision is Precision.FP8 and model.fp8_16bit_params:
        warnings.append("fp8_maker_release")  # the maker's FP8 checkpoint (ModelArch fp8_16bit_modules)
    return warnings
