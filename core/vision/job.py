"""The typed question about an image, video, vision, speech or embedding job (public contract).

`None` means "not said"; `with_defaults(model)` fills what the estimator needs from the model's own defaults
(its native resolution, step count, text length) and records which fields were filled, so the answer can say
what it assumed.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from core.query import Currency, Precision


class VisionTask(StrEnum):
    GENERATE = "generate"  # text/image to image or video (diffusion pipelines)
    TRAIN = (
        "train"  # LoRA / DreamBooth / full fine-tune of a diffusion model, or training a vision/speech model
    )
    INFER = "infer"  # a vision backbone or detector over a batch of images
    TRANSCRIBE = "transcribe"  # speech to text
    EMBED = "embed"  # embedding / reranking a batch of texts


class TrainMethod(StrEnum):
    FULL = "full"
    LORA = "lora"


class Offload(StrEnum):
    NONE = "none"
    MODEL = "model"  # diffusers enable_model_cpu_offload(): one component on the card at a time
    SEQUENTIAL = "sequential"  # enable_sequential_cpu_offload(), ComfyUI --novram: one submodule at a time
    # ComfyUI's lowvram mode: as many of the denoiser's weights as fit stay on the card, the rest cross PCIe
    # on every step
    PARTIAL = "partial"
    # diffusers' group offloading (enable_group_offload / apply_group_offloading, block_level, one block per
    # group, use_stream=True): each component's blocks stream through the card, the next one prefetched
    GROUP = "group"


class VisionJob(BaseModel):
    """A fit question about a non-LLM model; frozen so the pure functions over it can be cached."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    task: VisionTask | None = None
    method: TrainMethod | None = None
    width: int | None = Field(default=None, ge=16, le=16384)
    height: int | None = Field(default=None, ge=16, le=16384)
    frames: int | None = Field(default=None, ge=1, le=2000)
    batch: int | None = Field(default=None, ge=1, le=100_000)
    steps: int | None = Field(default=None, ge=1, le=1000)
    tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    precision: Precision | None = None
    offload: Offload | None = None
    runtime: str | None = Field(default=None, description="a data/runtimes.toml [vision_runtimes] id")
    vae_tiling: bool | None = None
    grad_checkpointing: bool | None = None
    cache_latents: bool | None = None
    cache_text: bool | None = None
    lora_rank: int | None = Field(default=None, ge=1, le=1024)
    audio_hours: float | None = Field(default=None, gt=0)
    items: int | None = Field(
        default=None, ge=1, description="images/videos/texts to produce, for time and cost"
    )
    card: str | None = None
    card_memory_bytes: int | None = Field(default=None, gt=0, description="a '24G' mention without a card")
    host_memory_bytes: int | None = Field(default=None, gt=0, description="the system RAM the user said")
    gpus: int | None = Field(default=None, ge=1, le=4096)
    currency: Currency | None = None
    defaulted: tuple[str, ...] = ()

    def said(self) -> dict[str, object]:
        """The fields the user actually stated."""
        return {
            name: value
            for name, value in self.model_dump(exclude={"defaulted"}).items()
            if value is not None and name not in self.defaulted
        }
