"""Image, video, vision, speech and embedding models (data/vision_models.toml): components and their shapes.

A model is a list of components (text encoders, a denoiser, a VAE; or one network). Each component carries its
parameter count, the widths its activations scale with, and the activation coefficients measured for it with
tools/measure_vision.py (bytes per token × width, data/measured/vision.csv); a component without its own
coefficients takes its kind's defaults from the same file, and the answer widens its uncertainty.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.paths import DATA_DIR
from core.suggest import closest_ids

ComponentKind = Literal["unet", "dit", "vae", "video_vae", "text_encoder", "vit", "cnn", "speech", "encoder"]
Family = Literal["image", "video", "vision", "detector", "segment", "speech", "embedding"]


class Coefficients(BaseModel):
    """Activation bytes per (token × width) unit of a component, by job, measured or the kind's default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    infer: float = 0.0
    train: float = 0.0  # full training without recompute: every saved activation (start of the backward pass)
    train_tail: float = 0.0  # ... what is still alive when the last gradients are written
    train_gc: float = 0.0
    lora: float = 0.0
    lora_gc: float = 0.0


class Component(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    kind: ComponentKind
    params: int
    buffer_bytes: int = 0  # resident buffers (sin-cos position tables of SD3 / CogVideoX), measured
    width: int = 0  # the channel or hidden width activations scale with
    layers: int = 0
    tokens: int = 0  # text encoders: their text length; whisper: encoder frames per 30 s
    spatial_scale: int = 8  # pixels per latent pixel (VAE) or per token (ViT patch / CNN stride taken as 1)
    temporal_scale: int = 1  # frames per latent frame (video VAEs)
    patch: int = 1  # latent pixels per token side (DiT patchify)
    joint_text: bool = False  # DiTs that attend over image and text tokens together (MM-DiT)
    decode_frames: int = 0  # video VAEs: frames decoded at once (causal chunking)
    tile_px: int = 0  # VAE tiling: the tile side diffusers decodes at once
    force_upcast: bool = False  # diffusers upcasts this VAE to fp32 to decode when the pipeline runs in fp16
    lora_io_sum: int = 0  # Σ (in + out) features over the attention projections LoRA adapts
    forward_flops: float = 0.0  # FLOPs of one forward at reference_tokens (counted, see source)
    reference_tokens: int = 0
    decoder_layers: int = 0
    decoder_params: int = 0
    vocab: int = 0
    kv_heads_dim: int = 0  # decoder-style embedders: kv_heads × head_dim (transformers keeps a KV cache)
    measured: bool = False
    coefficients: Coefficients | None = None
    source: str


class VisionModel(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    name: str
    family: Family
    components: list[str]
    denoiser: str = ""
    vae: str = ""
    text_encoders: list[str] = []
    extra_denoisers: list[str] = []  # SDXL refiner, Wan 2.2's second expert: loaded, run in turn
    cfg: bool = False  # classifier-free guidance: the denoiser sees twice the batch
    width: int = 0
    height: int = 0
    frames: int = 0
    fps: int = 0
    steps: int = 0
    train_resolution: int = 0
    precision: str = ""  # the dtype the model card's diffusers example loads it in
    train_precision: str = (
        ""  # the base's storage when training LoRAs (FLUX: fp8, as ai-toolkit quantises it)
    )
    published_flops: float = 0.0  # detectors / CNNs: published FLOPs of one forward at `width`
    # the offload flags the model's own inference script is run with on a card too small for the whole
    # pipeline (its README; named in the answer when gpufit assumes an offload), and where they are written
    offload_flags: str = ""
    offload_flags_source: str = ""
    # the step count an engine's own workflow for the model samples with (ComfyUI's example workflows), used
    # when that engine is named and the question gives no steps; `steps` (the model card's) otherwise
    runtime_steps: dict[str, int] = {}
    runtime_steps_source: str = ""
    aliases: list[str] = []
    source: str


class KindDefaults(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    coefficients: Coefficients
    source: str


class VisionRegistry:
    def __init__(
        self, components: list[Component], models: list[VisionModel], defaults: list[KindDefaults]
    ) -> None:
        self.components = {c.id: c for c in components}
        self.models = {m.id: m for m in models}
        self.defaults = {d.kind: d.coefficients for d in defaults}
        self._alias: dict[str, str] = {}
        for model in models:
            for alias in (model.id, model.name, *model.aliases):
                self._alias.setdefault(normalize(alias), model.id)

    def denoiser_kind(self, model: VisionModel) -> str:
        return self.components[model.denoiser].kind if model.denoiser else ""

    def component(self, component_id: str) -> Component:
        return self.components[component_id]

    def coefficients(self, component: Component) -> Coefficients:
        """The component's measured coefficients; a job it was not measured for takes its kind's default."""
        default = self.defaults[component.kind]
        own = component.coefficients
        if own is None:
            return default
        return Coefficients(
            **{name: getattr(own, name) or getattr(default, name) for name in Coefficients.model_fields}
        )

    def resolve(self, name: str) -> VisionModel | None:
        if name in self.models:
            return self.models[name]
        found = self._alias.get(normalize(name))
        return self.models[found] if found else None

    def closest(self, name: str, limit: int = 3) -> list[str]:
        return closest_ids(normalize(name), self._alias, limit)

    @property
    def alias_keys(self) -> list[str]:
        """Every normalized alias, longest first (the parser scans text for these)."""
        return sorted(self._alias, key=len, reverse=True)

    def by_alias(self, key: str) -> VisionModel:
        return self.models[self._alias[key]]


def normalize(text: str) -> str:
    """'FLUX.1-dev' ~ 'flux 1 dev', 'YOLOv8x' ~ 'yolov8x', 'SD 1.5' ~ 'sd1.5'."""
    text = text.lower().replace("－", "-").replace("＿", "_")
    text = re.sub(r"[\s_\-]+", "", text)
    return text.strip()


@cache
def load_vision_registry() -> VisionRegistry:
    with open(DATA_DIR / "vision_models.toml", "rb") as handle:
        raw = tomllib.load(handle)
    return VisionRegistry(
        [Component.model_validate(c) for c in raw["component"]],
        [VisionModel.model_validate(m) for m in raw["model"]],
        [KindDefaults.model_validate(d) for d in raw["kind_defaults"]],
    )
