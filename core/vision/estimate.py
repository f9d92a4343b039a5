"""Per-card peak memory of an image, video, vision, speech or embedding job, component by component.

A diffusers pipeline keeps every component on the card (unless offloaded) and runs them in turn: text
encoders, then the denoiser for every step, then the VAE decoder. Its peak is all resident weights plus the
largest transient of the three phases. With `enable_model_cpu_offload()` only the running component is on the
card, so the peak is the largest component with its own transient; sequential offload streams one submodule
at a time. Training holds the trained network's states and its saved activations; the frozen text encoders
and VAE stay resident unless their outputs were cached. Vision, speech and embedding models are one network.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from core.catalog import Card, Catalog, load_catalog
from core.estimator.calibration import load_calibration
from core.estimator.memory import UnknownCardError, verdict_for
from core.estimator.result import Fit, Verdict
from core.jobs.offload import OS_RESERVE_BYTES
from core.query import Precision
from core.runtimes import vision_runtime, vision_runtime_of
from core.units import GIB
from core.vision import terms
from core.vision.defaults import fill_defaults, load_vision_constants
from core.vision.job import Offload, TrainMethod, VisionJob, VisionTask
from core.vision.registry import Coefficients, Component, VisionModel, VisionRegistry, load_vision_registry
from core.vision.result import FolkVisionRule, VisionBreakdown, VisionEstimate, VisionOffload
from core.vision.speed import vision_speed


class UnknownVisionModelError(ValueError):
    def __init__(self, name: str, suggestions: list[str]) -> None:
        super().__init__(name)
        self.name = name
        self.suggestions = suggestions


def resolve_vision_model(name: str, registry: VisionRegistry | None = None) -> VisionModel:
    registry = registry or load_vision_registry()
    found = registry.resolve(name)
    if found is None:
        raise UnknownVisionModelError(name, registry.closest(name))
    return found


def _component_precision(component: Component, precision: Precision) -> Precision:
    """The asked precision applies to the denoiser and to text encoders over a billion parameters (T5-XXL,
    LLM encoders: what fp8 / nf4 / GGUF checkpoints of FLUX, SD3 and Wan ship); CLIPs and VAEs stay 16-bit."""
    if not terms.is_quantized(precision) and precision is not Precision.FP32:
        return precision
    if component.kind in ("dit", "unet") or (component.kind == "text_encoder" and component.params > 1e9):
        return precision
    return Precision.BF16 if precision is not Precision.FP32 else Precision.FP32


def text_transient(registry: VisionRegistry, encoder: Component, batch: int) -> int:
    """A text encoder's forward over `batch` prompts of its padded length."""
    coeff = terms.coefficient(registry.coefficients(encoder), "infer", False)
    return int(coeff * batch * encoder.tokens * encoder.width)


def denoiser_transient(
    registry: VisionRegistry,
    denoiser: Component,
    vae: Component,
    *,
    width: int,
    height: int,
    frames: int,
    batch: int,
) -> int:
    """One denoiser forward on `batch` latents (the batch the module sees: CFG already doubled)."""
    tokens = terms.denoiser_tokens(denoiser, vae, width, height, frames)
    coeff = terms.coefficient(registry.coefficients(denoiser), "infer", False)
    return terms.activation_bytes(denoiser, coeff, batch * tokens, "infer")


def vae_transient(
    registry: VisionRegistry,
    vae: Component,
    *,
    width: int,
    height: int,
    frames: int,
    batch: int,
    tiling: bool,
    upcast: int = 1,
) -> int:
    """The VAE decoder on `batch` latents: its top-resolution feature maps dominate (width × pixels); tiled,
    one tile at a time plus the assembled output; video VAEs decode a few frames at a time."""
    coeff = terms.coefficient(registry.coefficients(vae), "infer", False)
    decode_frames = min(frames, vae.decode_frames) if vae.decode_frames else frames
    if vae.temporal_scale > 1 and not tiling:
        # a causal video VAE decodes a few frames at a time and concatenates the decoded video
        output = batch * 3 * width * height * frames * terms.ACT_BYTES
        return int(coeff * batch * width * height * decode_frames * vae.width) * upcast + output
    if tiling and vae.tile_px:
        tile = min(vae.tile_px, width) * min(vae.tile_px, height)
        output = batch * 3 * width * height * frames * terms.ACT_BYTES
        return int(coeff * tile * decode_frames * vae.width) * upcast + output
    return int(coeff * batch * width * height * decode_frames * vae.width) * upcast


class PartialSplit(BaseModel):
    """ComfyUI's lowvram load of the denoiser: the weights kept on the card, the ones streamed over PCIe on
    every step, and the step's activations beside them."""

    model_config = ConfigDict(frozen=True)

    resident_bytes: int
    streamed_bytes: int
    activation_bytes: int
    block_bytes: int
    reserve_bytes: int
    runs: bool


def runtime_reserve_bytes(job: VisionJob) -> int:
    """What the engine keeps free beside the weights it loads (ComfyUI's minimum_inference_memory)."""
    return int(vision_runtime(job.runtime).inference_reserve_gib * GIB) if job.runtime else 0


def partial_split(
    job: VisionJob, model: VisionModel, registry: VisionRegistry, capacity: int | None
) -> PartialSplit:
    """How much of the denoiser a partial (lowvram) load keeps on a card of `capacity` bytes: what is left
    after the CUDA context, the engine's reserve, the allocator's slack and the step's activations; at
    least one block must fit for the job to run. Without a capacity, one block (the least it needs)."""
    assert job.width and job.height and job.batch and job.precision
    denoiser = registry.component(model.denoiser)
    vae = registry.component(model.vae)
    cfg = 2 if model.cfg else 1
    weights = terms.weight_bytes(denoiser, _component_precision(denoiser, job.precision))
    acts = denoiser_transient(
        registry,
        denoiser,
        vae,
        width=job.width,
        height=job.height,
        frames=job.frames or 1,
        batch=cfg * job.batch,
    )
    block = weights // max(denoiser.layers, 1)
    reserve = runtime_reserve_bytes(job)
    if capacity is None:
        return PartialSplit(
            resident_bytes=block,
            streamed_bytes=weights - block,
            activation_bytes=acts,
            block_bytes=block,
            reserve_bytes=reserve,
            runs=True,
        )
    runtime = load_calibration().runtime
    budget = int((capacity - runtime.cuda_context_gib * GIB - reserve) / (1 + runtime.allocator_slack)) - acts
    resident = max(block, min(weights, budget))
    return PartialSplit(
        resident_bytes=resident,
        streamed_bytes=weights - resident,
        activation_bytes=acts,
        block_bytes=block,
        reserve_bytes=reserve,
        runs=budget >= block,
    )


def pipeline_weight_bytes(model: VisionModel, registry: VisionRegistry, precision: Precision) -> int:
    """Every component's weights as the pipeline loads them (what system RAM holds when all are offloaded)."""
    return sum(
        terms.weight_bytes(registry.component(c), _component_precision(registry.component(c), precision))
        for c in model.components
    )


def _generation(
    job: VisionJob, model: VisionModel, registry: VisionRegistry, capacity: int | None = None
) -> tuple[VisionBreakdown, str]:
    assert job.width and job.height and job.batch and job.precision
    denoiser = registry.component(model.denoiser)
    vae = registry.component(model.vae)
    frames = job.frames or 1
    precision = job.precision
    cfg = 2 if model.cfg else 1

    def weights(component: Component) -> int:
        return terms.weight_bytes(component, _component_precision(component, precision))

    texts = [registry.component(c) for c in model.text_encoders]
    text_w = sum(weights(c) for c in texts)
    extra = [registry.component(c) for c in model.extra_denoisers]
    den_w = weights(denoiser) + sum(weights(c) for c in extra)
    # diffusers upcasts a force_upcast VAE (SDXL's) to fp32 to decode when the pipeline runs in fp16.
    upcast = 2 if vae.force_upcast and precision is Precision.FP16 else 1
    vae_w = terms.weight_bytes(vae, Precision.BF16) * upcast

    # transients
    text_t = max((text_transient(registry, c, cfg * job.batch) for c in texts), default=0)
    den_t = denoiser_transient(
        registry, denoiser, vae, width=job.width, height=job.height, frames=frames, batch=cfg * job.batch
    )
    vae_t = vae_transient(
        registry,
        vae,
        width=job.width,
        height=job.height,
        frames=frames,
        batch=job.batch,
        tiling=bool(job.vae_tiling),
        upcast=upcast,
    )

    if job.offload is Offload.NONE:
        phases = {"text_encode": text_t, "denoise": den_t, "vae_decode": vae_t}
        phase = max(phases, key=lambda k: phases[k])
        return (
            VisionBreakdown(text_encoders=text_w, denoiser=den_w, vae=vae_w, activations=phases[phase]),
            phase,
        )
    if job.offload is Offload.MODEL:
        biggest_den = max([weights(denoiser), *(weights(c) for c in extra)])
        options = {
            "text_encode": VisionBreakdown(
                text_encoders=max((weights(c) for c in texts), default=0), activations=text_t
            ),
            "denoise": VisionBreakdown(denoiser=biggest_den, activations=den_t),
            "vae_decode": VisionBreakdown(vae=vae_w, activations=vae_t),
        }
        phase = max(options, key=lambda k: options[k].total)
        return options[phase], phase
    if job.offload is Offload.PARTIAL:
        split = partial_split(job, model, registry, capacity)
        return VisionBreakdown(denoiser=split.resident_bytes, activations=split.activation_bytes), "denoise"
    # sequential: one block's weights at a time (a denoiser layer, the largest unit streamed); group offload
    # with a stream holds the block running and the next one it prefetches
    block = weights(denoiser) // max(denoiser.layers, 1)
    blocks = 2 if job.offload is Offload.GROUP else 1
    phases = {"text_encode": text_t, "denoise": den_t, "vae_decode": vae_t}
    phase = max(phases, key=lambda k: phases[k])
    return VisionBreakdown(denoiser=blocks * block, activations=phases[phase]), phase


def full_training_peak(
    component: Component, coeffs: Coefficients, tokens: int, *, gc: bool, logits: int = 0
) -> tuple[VisionBreakdown, str]:
    """Mixed-precision full training (fp32 weights and AdamW, bf16 autocast) peaks either as the backward
    pass starts (every saved activation and the bf16 weight copies alive, gradients not yet written) or as
    it ends (every gradient written, the first blocks' activations still alive); the estimate is the
    larger. With activation recompute both are the checkpoints, so the end of the backward pass is the
    peak."""
    master, grads, opt = terms.training_state_bytes(component.params)
    start_coeff = coeffs.train_gc if gc else coeffs.train
    end_coeff = coeffs.train_gc if gc else coeffs.train_tail
    start_acts = terms.activation_bytes(component, start_coeff, tokens, "train")
    if not gc:
        # bf16 autocast copies of the fp32 weights, cast once in the forward pass and saved for the
        # backward pass (with recompute they are cast again block by block)
        start_acts += 2 * component.params
    end_acts = terms.activation_bytes(component, end_coeff, tokens, "train")
    start = VisionBreakdown(denoiser=master, optimizer=opt, activations=start_acts, logits=logits)
    end = VisionBreakdown(
        denoiser=master, gradients=grads, optimizer=opt, activations=end_acts, logits=logits
    )
    if start.total > end.total:
        return start, "backward"
    return end, "optimizer_step"


def _diffusion_training(
    job: VisionJob, model: VisionModel, registry: VisionRegistry
) -> tuple[VisionBreakdown, str, int]:
    assert job.width and job.height and job.batch and job.precision and job.method
    denoiser = registry.component(model.denoiser)
    vae = registry.component(model.vae)
    gc = bool(job.grad_checkpointing)
    tokens = job.batch * terms.denoiser_tokens(denoiser, vae, job.width, job.height, job.frames or 1)
    coeffs = registry.coefficients(denoiser)
    frozen = 0
    if not job.cache_text:
        frozen += sum(
            terms.weight_bytes(
                registry.component(c), _component_precision(registry.component(c), job.precision)
            )
            for c in model.text_encoders
        )
    if not job.cache_latents:
        frozen += terms.weight_bytes(vae, Precision.BF16)
    if job.method is TrainMethod.LORA:
        trainable = terms.lora_params(denoiser, job.lora_rank or 16)
        base = terms.weight_bytes(denoiser, job.precision)
        master, grads, opt = terms.training_state_bytes(trainable)
        acts = terms.activation_bytes(denoiser, terms.coefficient(coeffs, "lora", gc), tokens, "lora")
        breakdown = VisionBreakdown(
            text_encoders=frozen,
            denoiser=base,
            adapters=master,
            gradients=grads,
            optimizer=opt,
            activations=acts,
        )
        return breakdown, "backward", trainable
    trainable = denoiser.params
    breakdown, phase = full_training_peak(denoiser, coeffs, tokens, gc=gc)
    return breakdown.model_copy(update={"text_encoders": frozen}), phase, trainable


def _network(
    job: VisionJob, model: VisionModel, registry: VisionRegistry
) -> tuple[VisionBreakdown, str, int]:
    """One network: a vision backbone / detector / segmenter, Whisper, or an embedding model."""
    assert job.batch and job.precision and job.task
    component = registry.component(model.components[0])
    training = job.task is VisionTask.TRAIN
    gc = bool(job.grad_checkpointing)
    job_kind = "train" if training else "infer"
    coeff = terms.coefficient(registry.coefficients(component), job_kind, gc)
    kv = logits = 0
    if component.kind == "speech":
        tokens = job.batch * component.tokens
        tokens_for_acts = tokens
        decoder_tokens = job.tokens or 128
        acts = terms.activation_bytes(component, coeff, tokens, job_kind)
        logits = terms.logits_bytes(component, job.batch, decoder_tokens, training=training)
        if not training:
            kv = terms.whisper_cache_bytes(component, job.batch, decoder_tokens)
    elif component.kind == "encoder":
        tokens = job.batch * (job.tokens or 512)
        tokens_for_acts = tokens
        acts = terms.activation_bytes(component, coeff, tokens, job_kind)
        if component.kv_heads_dim and not training:
            kv = terms.decoder_kv_bytes(component, job.batch, job.tokens or 512)
    else:
        assert job.width and job.height
        if component.kind == "vit":
            per_image = (job.width // component.spatial_scale) * (job.height // component.spatial_scale)
        else:
            per_image = job.width * job.height
        tokens_for_acts = job.batch * per_image
        acts = terms.activation_bytes(component, coeff, tokens_for_acts, job_kind)
    if not training:
        network = terms.weight_bytes(component, job.precision)
        return VisionBreakdown(network=network, activations=acts, kv_cache=kv, logits=logits), "forward", 0
    breakdown, phase = full_training_peak(
        component, registry.coefficients(component), tokens_for_acts, gc=gc, logits=logits
    )
    return (
        breakdown.model_copy(update={"network": breakdown.denoiser, "denoiser": 0}),
        phase,
        component.params,
    )


def tracked_breakdown(
    job: VisionJob, registry: VisionRegistry | None = None, capacity: int | None = None
) -> tuple[VisionBreakdown, str, int]:
    """The breakdown before runtime overhead (what MemTracker sees), the peak phase and trainable params.
    `capacity` is the card's, for an engine that loads as much as fits (ComfyUI's partial load)."""
    registry = registry or load_vision_registry()
    model = resolve_vision_model(job.model, registry)
    filled = fill_defaults(job, model)
    if model.family in ("image", "video"):
        if filled.task is VisionTask.TRAIN:
            return _diffusion_training(filled, model, registry)
        breakdown, phase = _generation(filled, model, registry, capacity)
        return breakdown, phase, 0
    return _network(filled, model, registry)


def _with_overhead(breakdown: VisionBreakdown, reserve: int = 0) -> VisionBreakdown:
    """CUDA context and the caching allocator's slack (data/calibration.toml, as for language models), and
    what an engine that fills the card keeps free beside its weights (`reserve`)."""
    runtime = load_calibration().runtime
    overhead = runtime.cuda_context_gib * GIB + runtime.allocator_slack * breakdown.tracked + reserve
    return breakdown.model_copy(update={"overhead": int(overhead)})


def _job_bytes(
    job: VisionJob, registry: VisionRegistry, capacity: int | None
) -> tuple[VisionBreakdown, str, int]:
    """The job's breakdown with its overhead (the engine's reserve only where it fills the card)."""
    tracked, phase, trainable = tracked_breakdown(job, registry, capacity)
    reserve = runtime_reserve_bytes(job) if job.offload is Offload.PARTIAL else 0
    return _with_overhead(tracked, reserve), phase, trainable


def _runtime_offload(
    job: VisionJob, registry: VisionRegistry, capacity: int | None
) -> tuple[VisionJob, VisionBreakdown, str, int]:
    """The job as its engine runs it. An engine that offloads by itself (ComfyUI) and a job that does not fit
    as asked fall back through the engine's modes (data/runtimes.toml offload_modes: unload the components
    not running, then load the denoiser partly), each with the VAE decode tiled where the engine retries it
    so; the first that fits is the one it runs, else the last. A job that names no engine runs as the
    models' own scripts run it on a short card: with the default engine's `unnamed_offload_modes`, the first
    that fits (none fitting: as asked, so the answer is a "no" with its fixes). A job that states its offload
    keeps it."""
    breakdown, phase, trainable = _job_bytes(job, registry, capacity)
    profile = vision_runtime_of(job.runtime)
    modes = profile.offload_modes if profile.auto_offload else ()
    if job.runtime is None:
        modes = profile.unnamed_offload_modes
    auto = bool(modes) and "offload" in job.defaulted and job.task is VisionTask.GENERATE
    if not auto or capacity is None or breakdown.total <= capacity:
        return job, breakdown, phase, trainable
    tilings = (
        [False, True]
        if profile.vae_tiled_fallback and "vae_tiling" in job.defaulted
        else [bool(job.vae_tiling)]
    )
    chosen = (job, breakdown, phase, trainable)
    for mode in modes:
        for tiling in tilings:
            candidate = job.model_copy(update={"offload": Offload(mode), "vae_tiling": tiling})
            found = _job_bytes(candidate, registry, capacity)
            chosen = (candidate, *found)
            if found[0].total <= capacity:
                return chosen
    return chosen if job.runtime is not None else (job, breakdown, phase, trainable)


def _offload_facts(
    job: VisionJob,
    model: VisionModel,
    registry: VisionRegistry,
    breakdown: VisionBreakdown,
    *,
    capacity: int | None,
    chosen_by: str,
) -> VisionOffload | None:
    """Where the weights are while the job runs with offload: on the card, in system RAM, and what crosses
    PCIe on every step."""
    if job.offload in (None, Offload.NONE) or job.task is not VisionTask.GENERATE:
        return None
    assert job.precision
    on_card = breakdown.text_encoders + breakdown.denoiser + breakdown.vae
    streamed = 0
    if job.offload is Offload.PARTIAL:
        streamed = partial_split(job, model, registry, capacity).streamed_bytes
    elif job.offload in (Offload.SEQUENTIAL, Offload.GROUP):
        denoiser = registry.component(model.denoiser)
        streamed = terms.weight_bytes(denoiser, _component_precision(denoiser, job.precision))
    total_weights = pipeline_weight_bytes(model, registry, job.precision)
    host = max(0, total_weights - on_card)
    # What system RAM must hold: diffusers loads the whole pipeline there (from_pretrained, before
    # enable_*_offload() hooks move a component to the card), ComfyUI the weights it keeps off the card;
    # plus what the OS and the runtime keep (as for llama.cpp's offload)
    in_ram = total_weights if vision_runtime_of(job.runtime).loads_pipeline_to_host else host
    need = in_ram + OS_RESERVE_BYTES
    have = job.host_memory_bytes
    host_fits = None if have is None else need <= have
    return VisionOffload(
        mode=job.offload.value,
        chosen_by=chosen_by,
        runtime=job.runtime,
        gpu_weight_bytes=on_card,
        host_bytes=host,
        streamed_bytes_per_step=streamed,
        runs=(capacity is None or breakdown.total <= capacity) and host_fits is not False,
        host_need_bytes=need,
        host_memory_bytes=have,
        host_fits=host_fits,
        # the model's own script moves whole components (Wan's --offload_model): named for model offload only
        flags=model.offload_flags if chosen_by == "default" and job.offload is Offload.MODEL else "",
    )


def _uncertainty(
    model: VisionModel, registry: VisionRegistry, job: VisionJob, phase: str
) -> tuple[float, bool]:
    """±10% of the tracked bytes where the components whose activations make the peak were measured
    (the denoiser and VAE of a pipeline, the text encoders only when text encoding is the peak; the network
    otherwise), ±25% where their kind's median stands in; sequential offload adds 10% (hooks, pinned
    buffers)."""
    if model.family in ("image", "video"):
        ids = [model.denoiser, model.vae, *model.extra_denoisers]
        if phase == "text_encode":
            ids += model.text_encoders
    else:
        ids = list(model.components)
    measured = all(registry.component(c).measured for c in ids)
    band = 0.10 if measured else 0.25
    if job.offload in (Offload.SEQUENTIAL, Offload.GROUP):
        band += 0.10
    return round(band, 2), measured


def _folk(model: VisionModel, registry: VisionRegistry, precision: Precision) -> FolkVisionRule:
    constants = load_vision_constants()
    weights = sum(terms.weight_bytes(registry.component(c), precision) for c in model.components)
    return FolkVisionRule(
        start_bytes=int(constants.article_start_gib * GIB),
        safe_bytes=int(constants.article_safe_gib * GIB),
        weights_bytes=weights,
    )


def _card(name: str | None, catalog: Catalog) -> Card | None:
    if not name:
        return None
    if name in catalog.by_id:
        return catalog.get(name)
    match = catalog.resolve(name)
    if match is None:
        raise UnknownCardError(name, catalog.closest(name))
    return match.card


def estimate_vision(job: VisionJob) -> VisionEstimate:
    """The whole answer for one job: breakdown, verdict on the card, speed, fixes. Pure and cached."""
    return _estimate_cached(job)


@lru_cache(maxsize=2048)
def _estimate_cached(job: VisionJob) -> VisionEstimate:
    from core.vision.fixes import fixes_for, max_batch

    registry = load_vision_registry()
    catalog = load_catalog()
    model = resolve_vision_model(job.model, registry)
    filled = fill_defaults(job, model)
    card = _card(filled.card, catalog)
    capacity = card.memory_bytes if card else filled.card_memory_bytes
    filled = _batch_that_fits(filled, model, capacity)
    asked = filled
    filled, breakdown, phase, trainable = _runtime_offload(filled, registry, capacity)
    chosen_by = "asked"
    if filled.offload is not asked.offload:
        chosen_by = "runtime" if filled.runtime is not None else "default"
    offload = _offload_facts(filled, model, registry, breakdown, capacity=capacity, chosen_by=chosen_by)
    needed_offload = False
    if offload is not None and capacity is not None:
        plain = filled.model_copy(update={"offload": Offload.NONE})
        needed_offload = chosen_by == "runtime" or need_bytes(plain) > capacity
    uncertainty, measured = _uncertainty(model, registry, filled, phase)
    verdicts: list[Verdict] = []
    cards_needed: int | None = None
    if capacity:
        card_id = card.id if card else f"{round(capacity / GIB)}gb"
        verdict = verdict_for(
            breakdown.total, capacity, card_id=card_id, count=1, uncertainty=uncertainty, notes=[]
        )
        verdicts.append(verdict)
        cards_needed = 1 if verdict.fits is not Fit.NO else None
    precision = filled.precision or Precision.BF16
    params = sum(registry.component(c).params for c in model.components)
    speed = vision_speed(filled, model, registry, card) if card is not None else None
    warnings: list[str] = []
    if precision is Precision.FP8 and card is not None and not card.fp8_tflops:
        warnings.append("fp8_storage_only")
    if precision is Precision.BF16 and card is not None and not card.bf16_tflops:
        warnings.append("no_bf16")
    if not measured:
        warnings.append("not_measured")
    result = VisionEstimate(
        job=filled,
        model_name=model.name,
        family=model.family,
        params=params,
        trainable_params=trainable,
        breakdown=breakdown,
        peak_phase=phase,
        folk=_folk(model, registry, precision),
        uncertainty=uncertainty,
        measured_basis=measured,
        verdicts=verdicts,
        cards_needed=cards_needed,
        speed=speed,
        offload=offload,
        runs_with_offload=bool(offload and offload.runs and needed_offload),
        warnings=warnings,
    )
    return result.model_copy(
        update={
            "fixes": fixes_for(asked, model, result, capacity, card),
            "max_batch": max_batch(filled, model, capacity) if capacity else None,
        }
    )


def offloaded_on(job: VisionJob, card: Card) -> tuple[VisionJob, int, VisionOffload] | None:
    """A filled job on a card too small for the whole pipeline, run as its engine runs it there (the offload
    `_runtime_offload` picks): the job with its offload, the bytes the card holds, where the weights are.
    None when it does not run so (no offload the engine would pick fits the card, or the RAM said is short).
    The estimate's own path without its fixes: what a plan list over every card needs."""
    registry = load_vision_registry()
    model = resolve_vision_model(job.model, registry)
    run, breakdown, _, _ = _runtime_offload(job, registry, card.memory_bytes)
    if run.offload is job.offload or run.offload in (None, Offload.NONE):
        return None
    chosen_by = "runtime" if run.runtime is not None else "default"
    offload = _offload_facts(run, model, registry, breakdown, capacity=card.memory_bytes, chosen_by=chosen_by)
    if offload is None or not offload.runs:
        return None
    return run.model_copy(update={"card": card.id}), breakdown.total, offload


def _batch_that_fits(job: VisionJob, model: VisionModel, capacity: int | None) -> VisionJob:
    """A batched transcription's default batch, lowered to the largest the card holds (a card too small for
    the pipeline's batch_size runs a smaller one, not a "no")."""
    from core.vision.fixes import max_batch

    if (
        model.family != "speech"
        or job.task is not VisionTask.TRANSCRIBE
        or "batch" not in job.defaulted
        or capacity is None
        or (job.batch or 1) <= 1
        or need_bytes(job) <= capacity
    ):
        return job
    best = max_batch(job, model, capacity)
    return job.model_copy(update={"batch": best}) if best else job


def need_bytes(job: VisionJob) -> int:
    """Bytes one card must hold for the job (with runtime overhead), whatever the card (a partial load: the
    least it runs with, one block of the denoiser on the card)."""
    breakdown, _, _ = _job_bytes(job, load_vision_registry(), None)
    return breakdown.total
