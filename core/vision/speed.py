"""How fast a vision job runs on one card: FLOPs per item over the card's 16-bit tensor peak × utilisation.

Utilisation is the same cited model-FLOPs utilisation the language-model speed uses (data/speed.toml [mfu],
under the PyTorch-native framework factor);
offloading adds the PCIe transfers of the weights it moves (data/vision_models.toml [constants]). Speech adds
the decoder's per-token weight reads (bandwidth-bound, like LLM decode). Planning figures, not benchmarks.
"""

from __future__ import annotations

import math

from core.catalog import Card
from core.estimator.terms import BYTES_PER_WEIGHT
from core.query import Precision
from core.runtimes import vision_runtime, vision_runtime_of
from core.speed import load_speed_constants
from core.speed import terms as speed_terms
from core.vision import terms
from core.vision.job import Offload, VisionJob, VisionTask
from core.vision.registry import Component, VisionModel, VisionRegistry
from core.vision.result import VisionSpeed

AUDIO_CHUNK_S = 30.0  # Whisper encodes 30 s windows (3,000 mel frames → 1,500 encoder frames)


def _peak(card: Card, precision: Precision) -> tuple[float, float]:
    """Tensor FLOP/s the job reaches. nf4 / GGUF weights are stored small but computed in bf16
    (bitsandbytes, ComfyUI-GGUF) and dequantise on every matmul (data/speed.toml qlora_throughput_factor,
    torchtune's measured QLoRA/LoRA ratio); fp8 runs on the FP8 tensor cores of Hopper, Ada and Blackwell
    cards with diffusers' recipe (torchao float8 + torch.compile; data/speed.toml [formats] diffusion_fp8,
    fitted to FLUX.1-dev on an H100), in bf16 elsewhere."""
    constants = load_speed_constants()
    utilisation: float = constants.vision_utilisation(card)
    peak = card.tensor_tflops * 1e12 * utilisation
    if precision is Precision.FP8 and card.fp8_tflops:
        peak *= constants.formats.diffusion_fp8
    if terms.is_quantized(precision) and precision not in (Precision.FP8, Precision.INT8):
        peak *= constants.training.qlora_throughput_factor
    return peak, utilisation


def _pcie_bytes_s(card: Card, constants_gb_s: float, efficiency: float) -> float:
    gen = card.pcie_gen or 4
    per_gen = constants_gb_s * 2.0 ** (gen - 4)
    return per_gen * 1e9 * efficiency


def _generation(job: VisionJob, model: VisionModel, registry: VisionRegistry, card: Card) -> VisionSpeed:
    from core.vision.defaults import load_vision_constants

    assert job.width and job.height and job.batch and job.steps and job.precision and job.offload
    c = load_vision_constants()
    denoiser = registry.component(model.denoiser)
    vae = registry.component(model.vae)
    frames = job.frames or 1
    cfg = 2 if model.cfg else 1
    per_item_tokens = terms.denoiser_tokens(denoiser, vae, job.width, job.height, frames)
    step = terms.forward_flops(denoiser, cfg * job.batch * per_item_tokens, per_item_tokens)
    pixels = job.batch * job.width * job.height * frames
    decode = terms.forward_flops(vae, pixels, job.width * job.height)
    texts = sum(
        terms.forward_flops(registry.component(t), cfg * job.batch * registry.component(t).tokens, 77)
        for t in model.text_encoders
    )
    flops = step * job.steps + decode + texts
    peak, mfu = _peak(card, job.precision)
    compute_s = flops / peak
    offload_s = 0.0
    pcie = _pcie_bytes_s(card, c.pcie_gb_s, c.pcie_efficiency)
    all_weights = sum(terms.weight_bytes(registry.component(x), job.precision) for x in model.components)
    profile = vision_runtime(job.runtime) if job.runtime else None
    stream_factor = (profile.stream_factor if profile else None) or c.offload_sequential_factor
    # an offload asked of no engine named is diffusers' (ComfyUI offloads by itself and is named when used)
    moving = vision_runtime_of(job.runtime)
    if job.offload is Offload.MODEL and moving.model_offload_efficiency:
        # to the card and back, once per item, from pageable memory
        link = _pcie_bytes_s(card, c.pcie_gb_s, moving.model_offload_efficiency)
        offload_s = 2 * all_weights / link
    elif job.offload is Offload.MODEL:
        offload_s = all_weights / pcie
    elif job.offload is Offload.GROUP:
        # blocks prefetched on a CUDA stream from pinned memory while the previous one computes: each step
        # pays only the transfer its compute does not hide; the other components cross once per item
        den_bytes = terms.weight_bytes(denoiser, job.precision)
        unhidden = max(0.0, den_bytes / pcie - step / peak)
        offload_s = unhidden * job.steps + all_weights / pcie
    elif job.offload is Offload.SEQUENTIAL and moving.leaf_offload_efficiency:
        # every leaf module to the card on every step, one after another (diffusers' leaf-level benchmark)
        link = _pcie_bytes_s(card, c.pcie_gb_s, moving.leaf_offload_efficiency)
        den_bytes = terms.weight_bytes(denoiser, job.precision)
        offload_s = (den_bytes * job.steps + all_weights) / link
    elif job.offload is Offload.SEQUENTIAL:
        den_bytes = terms.weight_bytes(denoiser, job.precision)
        offload_s = (den_bytes * job.steps + all_weights) / pcie * stream_factor
    elif job.offload is Offload.PARTIAL:
        # every component loaded once per image, and the denoiser's weights that did not fit on every step
        from core.vision.estimate import partial_split

        streamed = partial_split(job, model, registry, card.memory_bytes).streamed_bytes
        offload_s = all_weights / pcie + streamed * job.steps / pcie * stream_factor
    total = compute_s + offload_s
    per_item = total / job.batch
    video = model.family == "video"
    return VisionSpeed(
        seconds_per_item=per_item,
        items_per_hour=3600 / per_item,
        unit="video" if video else "image",
        frames_per_s=frames / per_item if video else None,
        flops_per_item=flops / job.batch,
        utilisation=mfu,
        offload_s_per_item=offload_s / job.batch,
        notes=["offload_pcie"] if offload_s else [],
    )


def _train_flops(forward: float, grad_checkpointing: bool, lora: bool) -> float:
    """Forward 1×, backward 2× (LoRA: the inputs' gradient only, 1×), recompute +1×."""
    return forward * ((2.0 if lora else 3.0) + (1.0 if grad_checkpointing else 0.0))


def _diffusion_training(
    job: VisionJob, model: VisionModel, registry: VisionRegistry, card: Card
) -> VisionSpeed:
    assert job.width and job.height and job.batch and job.precision
    denoiser = registry.component(model.denoiser)
    vae = registry.component(model.vae)
    tokens = terms.denoiser_tokens(denoiser, vae, job.width, job.height, job.frames or 1)
    forward = terms.forward_flops(denoiser, job.batch * tokens, tokens)
    flops = _train_flops(
        forward, bool(job.grad_checkpointing), job.method is not None and job.method.value == "lora"
    )
    peak, mfu = _peak(card, Precision.BF16)
    step_s = flops / peak
    return VisionSpeed(
        seconds_per_item=step_s,
        items_per_hour=3600 / step_s,
        unit="step",
        flops_per_item=flops,
        utilisation=mfu,
        hours=(job.items or 0) * step_s / 3600 if job.items else None,
    )


def _network(job: VisionJob, model: VisionModel, component: Component, card: Card) -> VisionSpeed:
    assert job.batch and job.precision and job.task
    training = job.task is VisionTask.TRAIN
    peak, mfu = _peak(card, job.precision if not training else Precision.BF16)
    if component.kind == "speech":
        enc = terms.forward_flops(component, job.batch * component.tokens, component.tokens)
        if training:
            per_chunk = _train_flops(enc, bool(job.grad_checkpointing), False) / peak / job.batch
        else:
            per_chunk = _speech_window_s(job, component, card, peak, job.batch)
        realtime = AUDIO_CHUNK_S / per_chunk
        hours = job.audio_hours / realtime if job.audio_hours and not training else None
        one: float | None = None
        if not training and job.batch > 1:
            one = AUDIO_CHUNK_S / _speech_window_s(job, component, card, peak, 1)
        published: list[tuple[str, str, float, bool]] = []
        if not training and job.batch == 1:
            from core.catalog import load_catalog
            from core.vision.defaults import load_vision_constants

            runs = load_vision_constants().speech_one_window_runs
            catalog = load_catalog()
            published = [
                (catalog.get(r.card).name, r.engine, r.realtime, r.card == card.id)
                for r in runs
                if r.model == model.id
            ]
        return VisionSpeed(
            seconds_per_item=per_chunk,
            items_per_hour=3600 / per_chunk,
            unit="audio_chunk",
            realtime_factor=realtime,
            flops_per_item=enc / job.batch,
            utilisation=mfu,
            hours=hours,
            batch=job.batch,
            one_window_realtime_factor=one,
            one_window_hours=job.audio_hours / one if job.audio_hours and one else None,
            published_one_window=published,
        )
    if component.kind == "encoder":
        tokens = job.tokens or 512
        forward = terms.forward_flops(component, job.batch * tokens, tokens)
        unit = "text"
    else:
        assert job.width and job.height
        if model.published_flops:
            scale = (job.width * job.height) / (model.width * model.height)
            forward = model.published_flops * scale * job.batch
        else:
            side = component.spatial_scale if component.kind == "vit" else 1
            per_image = (job.width // side) * (job.height // side)
            forward = terms.forward_flops(component, job.batch * per_image, per_image)
        unit = "sample"
    flops = _train_flops(forward, bool(job.grad_checkpointing), False) if training else forward
    per_item = flops / peak / job.batch
    return VisionSpeed(
        seconds_per_item=per_item,
        items_per_hour=3600 / per_item,
        unit=unit,
        flops_per_item=flops / job.batch,
        utilisation=mfu,
        hours=job.items * per_item / 3600 if job.items else None,
    )


def _speech_window_s(job: VisionJob, component: Component, card: Card, peak: float, batch: int) -> float:
    """Seconds per 30 s window at `batch` windows at once: the encoder over each window, then the decoder
    token by token (its weights read once per step for the batch, plus the fixed per-layer cost of a
    transformers decode step, data/speed.toml [runtimes.transformers], as for language-model decode); a
    batched run reaches only part of that (data/vision_models.toml speech_batched_efficiency, fitted to a
    published batch-24 run; none at batch 1, by the batch's log between)."""
    from core.vision.defaults import load_vision_constants

    assert job.precision
    c = load_vision_constants()
    enc = terms.forward_flops(component, batch * component.tokens, component.tokens)
    tokens = job.tokens or c.speech_decoder_tokens
    dec_bytes = component.decoder_params * BYTES_PER_WEIGHT[job.precision]
    constants = load_speed_constants()
    runtime = constants.runtime("transformers")
    bandwidth = speed_terms.achieved_bandwidth(constants, card, runtime, job.precision)
    dec_step = max(dec_bytes / bandwidth, 2.0 * component.decoder_params * batch / peak)
    dec_step = speed_terms.step_s(runtime, dec_step, component.decoder_layers, 0, batch)
    window_s = (enc / peak + tokens * dec_step) / batch
    if batch > 1:
        share = math.log(batch) / math.log(c.speech_efficiency_batch)
        window_s /= c.speech_batched_efficiency ** min(1.0, share)
    return window_s


def vision_speed(job: VisionJob, model: VisionModel, registry: VisionRegistry, card: Card) -> VisionSpeed:
    if model.family in ("image", "video"):
        if job.task is VisionTask.TRAIN:
            return _diffusion_training(job, model, registry, card)
        speed = _generation(job, model, registry, card)
        if job.items:
            speed = speed.model_copy(update={"hours": job.items * speed.seconds_per_item / 3600})
        return speed
    return _network(job, model, registry.component(model.components[0]), card)
