"""What a vision job assumes when the question does not say (each filled field is listed in `defaulted`).

The defaults are each runtime's own: the model's native resolution and step count (its model card), diffusers'
dtype in the model's examples, LoRA with gradient checkpointing and cached latents as kohya sd-scripts and
ai-toolkit configure it, ultralytics' batch 16 at 640, sentence-transformers' batch 32. The numbers live in
data/vision_models.toml ([constants] and each model's table) with their sources.
"""

from __future__ import annotations

import tomllib
from functools import cache

from pydantic import BaseModel, ConfigDict

from core.paths import DATA_DIR
from core.query import Precision
from core.vision.job import Offload, TrainMethod, VisionJob, VisionTask
from core.vision.registry import VisionModel, load_vision_registry


class SpeechRun(BaseModel):
    """A published one-window (batch 1) transcription speed of a model on a catalogue card: engine and × real
    time."""

    model_config = ConfigDict(frozen=True)

    model: str
    card: str
    engine: str
    realtime: float


class VisionConstants(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    article_start_gib: float
    article_safe_gib: float
    infer_batch: int
    train_batch: int
    embed_batch: int
    embed_tokens: int
    speech_decoder_tokens: int
    speech_batch: int
    speech_batched_efficiency: float
    speech_efficiency_batch: int
    speech_one_window_runs: tuple[SpeechRun, ...] = ()
    lora_rank: int
    pcie_gb_s: float
    pcie_efficiency: float
    offload_sequential_factor: float
    source: str


@cache
def load_vision_constants() -> VisionConstants:
    with open(DATA_DIR / "vision_models.toml", "rb") as handle:
        return VisionConstants.model_validate(tomllib.load(handle)["constants"])


def default_task(model: VisionModel) -> VisionTask:
    return {
        "image": VisionTask.GENERATE,
        "video": VisionTask.GENERATE,
        "speech": VisionTask.TRANSCRIBE,
        "embedding": VisionTask.EMBED,
    }.get(model.family, VisionTask.INFER)


def _big_text_encoder(model: VisionModel) -> bool:
    registry = load_vision_registry()
    return any(registry.component(c).params > 1e9 for c in model.text_encoders)


def fill_defaults(job: VisionJob, model: VisionModel) -> VisionJob:
    """Every field the estimator needs; `defaulted` names exactly those the question did not give."""
    c = load_vision_constants()
    task = job.task or default_task(model)
    diffusion = model.family in ("image", "video")
    training = task is VisionTask.TRAIN
    if training and diffusion:
        side = model.train_resolution or model.width
        batch = 1
        precision = Precision(model.train_precision) if model.train_precision else Precision.BF16
    elif diffusion:
        side = model.width
        batch = 1
        precision = Precision(model.precision) if model.precision else Precision.BF16
    else:
        side = model.width
        batch = {VisionTask.EMBED: c.embed_batch, VisionTask.TRAIN: c.train_batch}.get(task, c.infer_batch)
        if model.family == "speech":
            # an amount of audio is transcribed batched (the pipeline's batch_size); one window otherwise
            batch = c.train_batch if task is VisionTask.TRAIN else (c.speech_batch if job.audio_hours else 1)
        precision = Precision.FP16 if not training else Precision.BF16
    fills: dict[str, object] = {
        "task": task,
        "method": (TrainMethod.LORA if diffusion else TrainMethod.FULL) if training else None,
        "width": side or None,
        "height": (model.height if not (training and diffusion) else side) or None,
        "frames": (model.frames or 1) if diffusion else None,
        "batch": batch,
        "steps": (model.runtime_steps.get(job.runtime or "") or model.steps)
        if diffusion and not training
        else None,
        "tokens": c.embed_tokens
        if task is VisionTask.EMBED
        else (c.speech_decoder_tokens if model.family == "speech" else None),
        "precision": precision,
        "offload": Offload.NONE if diffusion and not training else None,
        "vae_tiling": False if diffusion and not training else None,
        "grad_checkpointing": (diffusion or model.family == "speech") if training else None,
        "cache_latents": True if training and diffusion else None,
        "cache_text": _big_text_encoder(model) if training and diffusion else None,
        "lora_rank": c.lora_rank if training and diffusion else None,
        "gpus": 1,
    }
    updates: dict[str, object] = {}
    defaulted = list(job.defaulted)
    for name, value in fills.items():
        if getattr(job, name) is None and value is not None:
            updates[name] = value
            if name not in defaulted:
                defaulted.append(name)
    if job.method is TrainMethod.FULL or (job.method is None and updates.get("method") is TrainMethod.FULL):
        updates.pop("lora_rank", None)
        if "lora_rank" in defaulted:
            defaulted.remove("lora_rank")
    updates["defaulted"] = tuple(defaulted)
    return job.model_copy(update=updates)
