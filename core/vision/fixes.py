"""What lowers a vision job's memory, by how much, and what it costs in speed.

Each fix is the same job with one setting changed, estimated again: lower-precision weights (fp8, nf4/GGUF
for the big DiTs), VAE tiling, model or sequential CPU offload (diffusers), a smaller batch, gradient
checkpointing and cached latents / text embeddings for training. The slowdown is the speed model's own
ratio where it has one.
"""

from __future__ import annotations

from core.catalog import Card
from core.query import Precision
from core.runtimes import vision_runtime_of
from core.vision.job import Offload, TrainMethod, VisionJob, VisionTask
from core.vision.registry import VisionModel, load_vision_registry
from core.vision.result import Fix, VisionEstimate


def _candidates(job: VisionJob, model: VisionModel) -> list[tuple[str, dict[str, object]]]:
    out: list[tuple[str, dict[str, object]]] = []
    diffusion = model.family in ("image", "video")
    if job.task is VisionTask.GENERATE:
        if job.precision in (Precision.BF16, Precision.FP16, Precision.FP32):
            out.append(("fp8", {"precision": Precision.FP8}))
        if job.precision is not Precision.NF4 and load_vision_registry().denoiser_kind(model) == "dit":
            out.append(("nf4", {"precision": Precision.NF4}))
            out.append(("gguf_q4", {"precision": Precision.Q4_K_M}))
        if not job.vae_tiling:
            out.append(("vae_tiling", {"vae_tiling": True}))
        if job.offload is Offload.NONE:
            out.append(("model_offload", {"offload": Offload.MODEL}))
            if "group" in vision_runtime_of(job.runtime).offload_modes:
                out.append(("group_offload", {"offload": Offload.GROUP}))
            out.append(("sequential_offload", {"offload": Offload.SEQUENTIAL}))
    if job.task is VisionTask.TRAIN:
        if not job.grad_checkpointing:
            out.append(("grad_checkpointing", {"grad_checkpointing": True}))
        if diffusion:
            if not job.cache_text:
                out.append(("cache_text", {"cache_text": True}))
            if not job.cache_latents:
                out.append(("cache_latents", {"cache_latents": True}))
            if job.method is TrainMethod.FULL:
                out.append(("lora_instead", {"method": TrainMethod.LORA}))
            elif job.precision in (Precision.BF16, Precision.FP16):
                out.append(("fp8_base", {"precision": Precision.FP8}))
                out.append(("nf4_base", {"precision": Precision.NF4}))
    if (job.batch or 1) > 1:
        out.append(("batch_1", {"batch": 1}))
    return out


def fixes_for(
    job: VisionJob, model: VisionModel, result: VisionEstimate, capacity: int | None, card: Card | None
) -> list[Fix]:
    """Fixes that lower the total, smallest first among those that fit (all of them when nothing is asked)."""
    from core.vision.estimate import estimate_vision, need_bytes

    fixes: list[Fix] = []
    base_speed = result.speed.seconds_per_item if result.speed else None
    # a fix lowers what the job needs as asked (an engine that offloads by itself fills the card instead)
    base_bytes = need_bytes(job)
    for code, change in _candidates(job, model):
        changed = job.model_copy(
            update={**change, "defaulted": tuple(d for d in job.defaulted if d not in change)}
        )
        total = need_bytes(changed)
        if total >= base_bytes:
            continue
        slowdown: float | None = None
        if card is not None and base_speed:
            other = estimate_vision(changed.model_copy(update={"items": None}))
            if other.speed:
                slowdown = round(other.speed.seconds_per_item / base_speed, 2)
        fixes.append(
            Fix(
                code=code,
                total_bytes=total,
                fits=(total <= capacity) if capacity else None,
                slowdown=slowdown,
            )
        )
    fixes.sort(key=lambda f: (not f.fits, f.slowdown or 1.0, f.total_bytes))
    return fixes


def max_batch(job: VisionJob, model: VisionModel, capacity: int) -> int | None:
    """The largest batch (images, texts, audio chunks) that fits the card, by doubling then bisection."""
    from core.vision.estimate import need_bytes

    def fits(batch: int) -> bool:
        return need_bytes(job.model_copy(update={"batch": batch})) <= capacity

    if not fits(1):
        return None
    low, high = 1, 2
    while high <= 65536 and fits(high):
        low, high = high, high * 2
    if high > 65536:
        return low
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low
