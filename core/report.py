"""`gpufit estimate` output: the JSON contract and the readable breakdown."""

from __future__ import annotations

from typing import Any

from core.assessment import Assessment, assess
from core.catalog import load_catalog
from core.cost import currency_for, price_book_in_force
from core.estimator import Estimate

SPEED_KEYS = (
    "decode_tokens_per_s",
    "aggregate_tokens_per_s",
    "batch",
    "ttft_s",
    "efficiency",
    "parallelism",
    "training_tokens_per_s",
    "training_hours",
    "gpu_hours",
    "flops_per_token",
    "mfu",
    "band",
    "calibrated_on",
    "kv_cache_dtype",
    "runtime",
    "notes",
)


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
        "folk_rule": result.folk.as_json(),
        "verdicts": [v.model_dump(mode="json") for v in result.verdicts],
        "vllm": result.vllm.model_dump(mode="json") if result.vllm else None,
        "warnings": result.warnings,
    } | _speed_and_cost(result)


def estimate_assessment(result: Estimate) -> Assessment | None:
    """`gpufit estimate`'s job on the catalog card it names (None without one): speed even where it does not
    fit, since the command shows what the card would do once the memory is solved."""
    query = result.query
    card = load_catalog().by_id.get(query.card or "")
    if card is None:
        return None
    return assess(
        query,
        card,
        query.gpus or 1,
        book=price_book_in_force(),
        currency=currency_for(query.currency, None),
        result=result,
        fits_only=False,
    )


def _speed_and_cost(result: Estimate) -> dict[str, Any]:
    """`speed` and `cost` for a named catalog card (absent otherwise): how fast, and at whose dated price."""
    job = estimate_assessment(result)
    if job is None:
        return {}
    speed: dict[str, Any] = dict.fromkeys(SPEED_KEYS)
    if job.inference is not None:
        inf = job.inference
        speed |= {
            "decode_tokens_per_s": round(inf.decode_tokens_per_s, 2),
            "aggregate_tokens_per_s": round(inf.aggregate_tokens_per_s, 2),
            "batch": inf.batch,
            "ttft_s": round(inf.ttft_s, 4),
            "efficiency": inf.efficiency,
            "parallelism": inf.parallelism,
            "mfu": inf.mfu,
            "band": inf.band,
            "calibrated_on": inf.calibrated_on,
            "kv_cache_dtype": inf.kv_cache_dtype,
            "runtime": inf.runtime,
            "notes": inf.notes,
        }
    if job.training is not None:
        tr = job.training
        speed |= {
            "training_tokens_per_s": round(tr.tokens_per_s, 2),
            "training_hours": round(tr.training_hours, 3) if tr.training_hours is not None else None,
            "gpu_hours": round(tr.gpu_hours, 3) if tr.gpu_hours is not None else None,
            "flops_per_token": tr.flops_per_token,
            "mfu": tr.mfu,
            "band": tr.band,
            "calibrated_on": tr.calibrated_on,
            "notes": tr.notes,
        }
    cost: dict[str, Any] | None = None
    if job.cost is not None and job.price is not None:
        price = job.price
        cost = {
            "per_hour": job.cost.per_hour,
            "per_million_tokens": job.cost.per_million_tokens,
            "total": job.cost.total,
            "currency": price.currency.value,
            "price_source": price.owner,
            "price_provider": price.provider,
            "price_billing": price.billing,
            "price_date": price.date.isoformat(),
        }
    return {"speed": speed, "cost": cost}
