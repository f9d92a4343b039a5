"""The peaks PyTorch really allocated for vision jobs (data/measured/vision.csv, tools/measure_vision.py),
and the estimator's figure for each measured case, computed with the same terms the estimator composes.

Cases are component-level: one denoiser forward, one VAE decode, one text-encoder pass, one training step of
a denoiser, one forward or training step of a vision / speech / embedding network.
"""

from __future__ import annotations

import csv
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


def activation_split(case: VisionCase, registry: VisionRegistry) -> tuple[int, int]:
    """(bytes the estimate holds besides activations, activation bytes per unit of coefficient) for a case:
    the estimate is linear in the component's coefficient, so two evaluations give both."""
    from core.vision.registry import Coefficients

    comp = registry.component(case.component)
    slot = coefficient_slot(case)
    saved_default = registry.defaults[comp.kind]
    registry.defaults[comp.kind] = Coefficients()
    try:
        registry.components[comp.id] = comp.model_copy(update={"coefficients": Coefficients()})
        base = estimated_tracked_bytes(case, registry)
        registry.components[comp.id] = comp.model_copy(update={"coefficients": Coefficients(**{slot: 1.0})})
        unit = estimated_tracked_bytes(case, registry) - base
    finally:
        registry.components[comp.id] = comp
        registry.defaults[comp.kind] = saved_default
    return base, unit
