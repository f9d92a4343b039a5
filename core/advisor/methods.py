"""Which fine-tuning method to recommend when the user did not say, decided from the assessments."""

from __future__ import annotations

from collections.abc import Mapping

from core.assessment import Assessment
from core.estimator import Fit
from core.query import Method

# LoRA first: the usual choice when full fine-tuning does not fit with room; QLoRA when LoRA does not fit.
_PREFERENCE = (Method.LORA, Method.QLORA, Method.FULL)


def recommend_method(jobs: Mapping[Method, Assessment]) -> Method:
    """Full fine-tuning when it fits with room to spare (small models: the best quality for no extra card),
    else LoRA when it runs, else QLoRA, else full if it alone runs; with no card to judge by, LoRA; when
    nothing runs, the method that needs the least memory."""
    full = jobs[Method.FULL].verdict
    if full is not None and full.fits is Fit.FITS:
        return Method.FULL
    for method in _PREFERENCE:
        if jobs[method].fits:
            return method
    if all(job.verdict is None for job in jobs.values()):
        return Method.LORA
    return min(jobs, key=lambda m: jobs[m].estimate.total_bytes)
