"""GPU memory estimator: per-component bytes at the peak, the folk rule beside it, and verdicts."""

from core.estimator.memory import (
    UnknownCardError,
    UnknownModelError,
    estimate,
    need_bytes,
    resolve_card,
    resolve_model,
    short_floor,
    short_of,
)
from core.estimator.result import COMPONENTS, Breakdown, Estimate, Fit, FolkRule, Verdict, VllmPool

__all__ = [
    "COMPONENTS",
    "Breakdown",
    "Estimate",
    "Fit",
    "FolkRule",
    "UnknownCardError",
    "UnknownModelError",
    "Verdict",
    "VllmPool",
    "estimate",
    "need_bytes",
    "resolve_card",
    "resolve_model",
    "short_floor",
    "short_of",
]
