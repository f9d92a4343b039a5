"""What the vision estimator returns: bytes per component at the peak, verdicts, speed, fixes.

Shaped like the language-model estimate so the JSON carries the same keys (`kind: fit`, `verdict`,
`breakdown`, `total_bytes`, `speed`, `cost`, `cards_needed`).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from core.cost import JobCost
from core.estimator.result import ComponentBytes, Verdict
from core.vision.job import VisionJob

# Breakdown keys, in the order the answer draws their bars.
VISION_COMPONENTS = (
    "text_encoders",
    "denoiser",
    "vae",
    "network",
    "adapters",
    "gradients",
    "optimizer",
    "activations",
    "kv_cache",
    "logits",
    "overhead",
)


class VisionBreakdown(ComponentBytes):
    """A pipeline's or vision network's bytes on one card at its peak, by what holds them (the same
    breakdown shape as a language model's, with a pipeline's terms)."""

    COMPONENTS: ClassVar[tuple[str, ...]] = VISION_COMPONENTS

    text_encoders: int = 0
    denoiser: int = 0
    vae: int = 0
    network: int = 0
    adapters: int = 0
    gradients: int = 0
    optimizer: int = 0
    activations: int = 0
    kv_cache: int = 0
    logits: int = 0
    overhead: int = 0


class VisionSpeed(BaseModel):
    """How fast on one card: seconds per item and items per hour (images, videos, training steps, texts),
    plus the unit-specific figure (frames/s of video, × real time for audio)."""

    model_config = ConfigDict(frozen=True)

    seconds_per_item: float
    items_per_hour: float
    unit: str = Field(description="image | video | step | image_batch | text | audio_hour")
    frames_per_s: float | None = None
    realtime_factor: float | None = None
    flops_per_item: float
    utilisation: float
    offload_s_per_item: float = 0.0
    hours: float | None = Field(default=None, description="time for the job's `items` / audio hours")
    notes: list[str] = Field(default_factory=list)
    # speech: the windows decoded at once, and a batch of one beside a batched run (× real time, hours)
    batch: int | None = None
    one_window_realtime_factor: float | None = None
    one_window_hours: float | None = None
    # speech at batch 1: the published one-window runs the estimate sits beside: card name, engine, × real
    # time, and whether that card is the one asked about
    published_one_window: list[tuple[str, str, float, bool]] = Field(default_factory=list)


class Fix(BaseModel):
    """One change that lowers the memory, what it leaves and what it costs in speed."""

    model_config = ConfigDict(frozen=True)

    code: str
    total_bytes: int
    fits: bool | None = None
    slowdown: float | None = Field(default=None, description="time per item multiplied by this")
    value: int | None = None


class FolkVisionRule(BaseModel):
    """The article's computer-vision rule (24 GB to start, 48 GB to be safe) and its weights × 1.2 rule."""

    model_config = ConfigDict(frozen=True)

    start_bytes: int
    safe_bytes: int
    weights_bytes: int
    margin: float = 1.2

    @property
    def weights_margin_bytes(self) -> int:
        return int(self.weights_bytes * self.margin)


class VisionOffload(BaseModel):
    """Where a pipeline's weights are while it runs with offload (issue 18): on the card, in system RAM, and
    what crosses PCIe on every denoising step; `chosen_by` says whether the engine did it by itself
    (ComfyUI) or the question asked for it (diffusers' enable_*_offload())."""

    model_config = ConfigDict(frozen=True)

    mode: str = Field(description="model | partial | sequential")
    chosen_by: str = Field(
        description="runtime (the engine offloads by itself) | asked | default (no engine named: the offload "
        "the model's own script and diffusers run a pipeline too big for the card with)"
    )
    runtime: str | None
    # the model's own script's flags for it (data/vision_models.toml offload_flags), when it has them
    flags: str = ""
    gpu_weight_bytes: int
    host_bytes: int
    streamed_bytes_per_step: int
    runs: bool
    # the system RAM the weights in host memory and the OS need, against what the user said (None: not said)
    host_need_bytes: int = 0
    host_memory_bytes: int | None = None
    host_fits: bool | None = None


class VisionQuery(VisionJob):
    """What was understood of a vision job (the answers' `query`, as a `Query` is for a language model):
    the filled job, the model as answers name it, its family and size, and the resolution."""

    model_name: str
    family: str
    params_b: float
    resolution: str | None  # "1024x1024"


class VisionEstimate(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: str = "fit"
    job: VisionJob
    model_name: str
    family: str
    params: int
    trainable_params: int
    breakdown: VisionBreakdown
    peak_phase: str
    folk: FolkVisionRule
    uncertainty: float
    measured_basis: bool = Field(description="every component's coefficients were measured")
    verdicts: list[Verdict] = Field(default_factory=list)
    cards_needed: int | None = None
    max_batch: int | None = None
    speed: VisionSpeed | None = None
    fixes: list[Fix] = Field(default_factory=list)
    offload: VisionOffload | None = None
    runs_with_offload: bool = Field(
        default=False, description="fits only because weights wait in system RAM: the verdict is 'offload'"
    )
    warnings: list[str] = Field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return self.breakdown.total

    @property
    def verdict(self) -> str | None:
        """The answer's verdict: fits / tight / no on the card, or "offload" when it runs only because part
        of it waits in system RAM."""
        if self.offload is not None and self.offload.host_fits is False:
            return "no"  # the card holds its part, but the system RAM said cannot hold the rest
        if self.runs_with_offload:
            return "offload"
        return self.verdicts[0].fits.value if self.verdicts else None

    def understood(self) -> VisionQuery:
        """What was understood: the filled job, the model, its size, the resolution and the task."""
        job = self.job
        resolution = f"{job.width}x{job.height}" if job.width and job.height else None
        added = {"model_name", "family", "params_b", "resolution"}
        return VisionQuery.model_construct(  # the job is validated already; the rest is the estimate's
            job.model_fields_set | added,
            **dict(job),
            model_name=self.model_name,
            family=self.family,
            params_b=round(self.params / 1e9, 3),
            resolution=resolution,
        )

    def query_json(self) -> dict[str, object]:
        """The answers' `query` for this job (VisionQuery's fields)."""
        return self.understood().model_dump(mode="json")

    def speed_json(self) -> dict[str, object] | None:
        """`speed` as every job carries it: its kind, then its figures."""
        return {"kind": "vision", **self.speed.model_dump(mode="json")} if self.speed else None

    def time_json(self) -> dict[str, object] | None:
        """`time`: the wall-clock hours of the whole job and what they are for (items or audio hours)."""
        if self.speed is None or self.speed.hours is None:
            return None
        return {"hours": self.speed.hours, "items": self.job.items, "audio_hours": self.job.audio_hours}

    def as_json(self, cost: JobCost | None = None) -> dict[str, object]:
        """The public JSON shape: the same keys as a language-model job (core/report.py) for memory, speed,
        time and cost, with the pipeline's own beside them. `cost` is the job's at the price in force."""
        verdict = self.verdict
        return {
            "query": self.query_json(),
            "kind": self.kind,
            "family": self.family,
            "model": self.model_name,
            "model_name": self.model_name,
            "job": self.job.model_dump(mode="json"),
            "verdict": verdict,
            "verdicts": [v.model_dump(mode="json") for v in self.verdicts],
            "breakdown": self.breakdown.as_dict(),
            "total_bytes": self.total_bytes,
            "peak_phase": self.peak_phase,
            "uncertainty": self.uncertainty,
            "speed": self.speed_json(),
            "cost": cost.model_dump(mode="json") if cost else None,
            "time": self.time_json(),
            "serving": None,
            "cards_needed": self.cards_needed,
            "max_batch": self.max_batch,
            "fixes": [f.model_dump(mode="json") for f in self.fixes],
            "runtime": self.job.runtime,
            "offload": self.offload.model_dump(mode="json") if self.offload else None,
            "folk_rule": {
                "start_bytes": self.folk.start_bytes,
                "safe_bytes": self.folk.safe_bytes,
                "weights_bytes": self.folk.weights_bytes,
                "margin": self.folk.margin,
            },
            "warnings": self.warnings,
        }
