"""Image, video, vision, speech and embedding jobs: memory per component, verdicts, speed and fixes."""

from core.vision.estimate import UnknownVisionModelError, estimate_vision, need_bytes, resolve_vision_model
from core.vision.job import Offload, TrainMethod, VisionJob, VisionTask
from core.vision.result import VisionBreakdown, VisionEstimate

__all__ = [
    "Offload",
    "TrainMethod",
    "UnknownVisionModelError",
    "VisionBreakdown",
    "VisionEstimate",
    "VisionJob",
    "VisionTask",
    "estimate_vision",
    "need_bytes",
    "resolve_vision_model",
]
