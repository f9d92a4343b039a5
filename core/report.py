"""`gpufit estimate` output: the JSON contract and the readable breakdown."""

from __future__ import annotations

from typing import Any

from core.estimator import Estimate


def estimate_json(result: Estimate) -> dict[str, Any]:
    """One object: the filled query (with `defaulted`), bytes per component, total, verdicts."""
    return {
        "query": result.query.model_dump(mode="json"),
        "model_name": result.model_name,
        "representative_shape": result.representative_shape,
        "params": result.params,
        "active_params": result.active_params,
        "trainable_params": result.trainable_params,
        "breakdown": result.breakdown.as_dict(),
        "total_bytes": result.total_bytes,
        "peak_phase": result.peak_phase,
        "uncertainty": result.uncertainty,
        "folk_rule": {
            "weights_bytes": result.folk.weights_bytes,
            "factor": [result.folk.low_factor, result.folk.high_factor],
            "margin": result.folk.margin,
            "low_bytes": result.folk.low_bytes,
            "high_bytes": result.folk.high_bytes,
        },
        "verdicts": [v.model_dump(mode="json") for v in result.verdicts],
        "vllm": result.vllm.model_dump(mode="json") if result.vllm else None,
        "warnings": result.warnings,
    }


def estimate_text(result: Estimate) -> str:
    from core.render import html_to_terminal, render_estimate

    return html_to_terminal(render_estimate(result, lang="en"))
