"""The peaks PyTorch really allocated for vision jobs (data/measured/vision.csv, tools/measure_vision.py),
and the estimator's figure for each measured case, computed with the same terms the estimator composes.

Cases are component-level: one denoiser forward, one VAE decode, one text-encoder pass, one training step of
a denoiser, one forward or training step of a vision / speech / embedding network.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from functools import cache

from pydantic import BaseModel, ConfigDict

from core.paths import DATA_DIR
from core.query import Precision
from core.vision import terms
from core.vision.estimate import denoiser_transient, text_transient, tracked_breakdown, vae_transient
from core.vision.job import TrainMethod, VisionJob, VisionTask
from core.vision.registry import Component, VisionModel, VisionRegistry, load_vision_registry


class VisionCase(BaseModel):
    model_config = ConfigDict(frozen=True)

    case_id: str
    component: str
    job: str
    height: int
    width: int
    frames: int
    batch: int
    tokens: int
    gc: bool
    peak_bytes: int
    params: int
    trainable_params: int


@cache
def vision_cases() -> tuple[VisionCase, ...]:
    path = DATA_DIR / "measured" / "vision.csv"
    if not path.exists():
        return ()
    with open(path, newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r.get("peak_bytes")]
    return tuple(
        VisionCase(
            case_id=r["case_id"],
            component=r["model"],
            job=r["job"],
            height=int(r["height"]),
            width=int(r["width"]),
            frames=int(r["frames"]),
            batch=int(r["batch"]),
            tokens=int(r["tokens"]),
            gc=r["gc"] == "1",
            peak_bytes=int(r["peak_bytes"]),
            params=int(r["params"]),
            trainable_params=int(r["trainable_params"]),
        )
        for r in rows
    )


def _pipeline_of(component: str, registry: VisionRegistry) -> VisionModel:
    """A pipeline that uses this component (for its VAE's scales and as a model to train)."""
    for model in registry.models.values():
        if model.denoiser == component or component in model.extra_denoisers or model.vae == component:
            return model
    raise KeyError(component)


def _network_model(component: str, registry: VisionRegistry) -> VisionModel:
    for model in registry.models.values():
        if model.components == [component]:
            return model
    raise KeyError(component)


def estimated_tracked_bytes(case: VisionCase, registry: VisionRegistry | None = None) -> int:
    """The estimator's bytes for the measured job, before runtime overhead (what MemTracker counts)."""
    registry = registry or load_vision_registry()
    component: Component = registry.component(case.component)
    bf16 = terms.weight_bytes(component, Precision.BF16)
    if case.job == "text_encode":
        return bf16 + text_transient(
            registry, component.model_copy(update={"tokens": case.tokens}), case.batch
        )
    if case.job == "vae_decode":
        return bf16 + vae_transient(
            registry,
            component,
            width=case.width,
            height=case.height,
            frames=case.frames or 1,
            batch=case.batch,
            tiling=False,
        )
    if case.job == "denoise":
        vae = registry.component(_pipeline_of(case.component, registry).vae)
        return bf16 + denoiser_transient(
            registry,
            component,
            vae,
            width=case.width,
            height=case.height,
            frames=case.frames or 1,
            batch=case.batch,
        )
    if component.kind in ("unet", "dit"):
        model = _pipeline_of(case.component, registry)
        job = VisionJob(
            model=model.id,
            task=VisionTask.TRAIN,
            method=TrainMethod.LORA if case.job == "lora" else TrainMethod.FULL,
            width=case.width,
            height=case.height,
            frames=case.frames or 1,
            batch=case.batch,
            precision=Precision.BF16,
            grad_checkpointing=case.gc,
            cache_latents=True,
            cache_text=True,
            lora_rank=16,
        )
        breakdown, _, _ = tracked_breakdown(job, registry)
        return breakdown.tracked
    model = _network_model(case.component, registry)
    job = VisionJob(
        model=model.id,
        task=VisionTask.TRAIN if case.job == "train" else model_task(model),
        width=case.width or None,
        height=case.height or None,
        batch=case.batch,
        tokens=case.tokens or None,
        precision=Precision.BF16,
        grad_checkpointing=case.gc if case.job == "train" else None,
    )
    breakdown, _, _ = tracked_breakdown(job, registry)
    return breakdown.tracked


def model_task(model: VisionModel) -> VisionTask:
    from core.vision.defaults import default_task

    return default_task(model)


def coefficient_slot(case: VisionCase) -> str:
    """Which of a component's coefficients a measured job fits."""
    if case.job in ("denoise", "vae_decode", "text_encode", "infer"):
        return "infer"
    return f"{case.job}_gc" if case.gc else case.job


class Split(BaseModel):
    """A case's estimate as a function of its component's coefficient: base + unit × coefficient (for
    full training without recompute, the larger of the two phases: base - gradients + unit × train and
    base + unit × train_tail)."""

    model_config = ConfigDict(frozen=True)

    slot: str
    base: int
    unit: int
    gradients: int = 0

    def estimate(self, values: dict[str, float]) -> float:
        if self.slot == "train":
            start = self.base - self.gradients + self.unit * values["train"]
            end = self.base + self.unit * values["train_tail"]
            return max(start, end)
        return self.base + self.unit * values[self.slot]

    def values(self, peak: int) -> dict[str, float]:
        """The coefficient(s) that make this case exact."""
        if self.unit <= 0:
            return {}
        if self.slot == "train":
            return {
                "train": (peak - self.base + self.gradients) / self.unit,
                "train_tail": (peak - self.base) / self.unit,
            }
        return {self.slot: (peak - self.base) / self.unit}


def activation_split(case: VisionCase, registry: VisionRegistry) -> Split:
    """The estimate is linear in the component's coefficient: two evaluations give base and unit."""
    from core.vision.registry import Coefficients

    comp = registry.component(case.component)
    slot = coefficient_slot(case)
    ones = {"train": 1.0, "train_tail": 1.0} if slot == "train" else {slot: 1.0}
    saved_default = registry.defaults[comp.kind]
    registry.defaults[comp.kind] = Coefficients()
    try:
        registry.components[comp.id] = comp.model_copy(update={"coefficients": Coefficients()})
        base = estimated_tracked_bytes(case, registry)
        registry.components[comp.id] = comp.model_copy(update={"coefficients": Coefficients(**ones)})
        unit = estimated_tracked_bytes(case, registry) - base
    finally:
        registry.components[comp.id] = comp
        registry.defaults[comp.kind] = saved_default
    # the start of the backward pass holds the bf16 weight copies (2 B) instead of the gradients (4 B)
    gradients = 2 * comp.params if slot == "train" else 0
    return Split(slot=slot, base=base, unit=unit, gradients=gradients)


def fit_coefficients(cases: Sequence[VisionCase], registry: VisionRegistry) -> dict[str, dict[str, float]]:
    """Each component's coefficients: the median over its cases of one job; for full training without
    recompute the smallest per phase (a case where the other phase binds over-states this one's)."""
    import statistics
    from collections import defaultdict

    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    for case in cases:
        for slot, value in activation_split(case, registry).values(case.peak_bytes).items():
            values[(case.component, slot)].append(value)
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (component, slot), found in values.items():
        pick = min(found) if slot in ("train", "train_tail") else statistics.median(found)
        out[component][slot] = round(pick, 2)
    return dict(out)
