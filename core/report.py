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
        "folk_rule": result.folk.as_json(),
        "verdicts": [v.model_dump(mode="json") for v in result.verdicts],
        "vllm": result.vllm.model_dump(mode="json") if result.vllm else None,
        "warnings": result.warnings,
    } | _speed_and_cost(result)


def _speed_and_cost(result: Estimate) -> dict[str, Any]:
    """`speed` and `cost` for a named catalog card (absent otherwise): how fast, and at whose dated price."""
    from core.catalog import load_catalog
    from core.cost import PriceBookError, currency_for, job_cost, load_price_book
    from core.speed import inference_speed, training_speed

    query = result.query
    card = load_catalog().by_id.get(query.card or "")
    if card is None:
        return {}
    gpus = query.gpus or 1
    speed: dict[str, Any] = dict.fromkeys(
        (
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
            "notes",
        ),
    )
    tokens_per_s: float | None = None
    if query.task.value == "inference":
        inf = inference_speed(result, card, gpus)
        speed |= {
            "decode_tokens_per_s": round(inf.decode_tokens_per_s, 2),
            "aggregate_tokens_per_s": round(inf.aggregate_tokens_per_s, 2),
            "batch": inf.batch,
            "ttft_s": round(inf.ttft_s, 4),
            "efficiency": inf.efficiency,
            "parallelism": inf.parallelism,
            "mfu": inf.mfu,
            "notes": inf.notes,
        }
        tokens_per_s, hours = inf.aggregate_tokens_per_s, None
    else:
        tr = training_speed(result, card, gpus, query.tokens)
        hours = tr.training_hours
        speed |= {
            "training_tokens_per_s": round(tr.tokens_per_s, 2),
            "training_hours": round(hours, 3) if hours is not None else None,
            "gpu_hours": round(tr.gpu_hours, 3) if tr.gpu_hours is not None else None,
            "flops_per_token": tr.flops_per_token,
            "mfu": tr.mfu,
            "notes": tr.notes,
        }
    cost: dict[str, Any] | None = None
    try:
        price = load_price_book().price_for(card.id, currency_for(query.currency, None))
    except PriceBookError:
        price = None
    if price is not None:
        job = job_cost(price, gpus, tokens_per_s=tokens_per_s, hours=hours)
        cost = {
            "per_hour": job.per_hour,
            "per_million_tokens": job.per_million_tokens,
            "total": job.total,
            "currency": price.currency.value,
            "price_source": price.owner,
            "price_provider": price.provider,
            "price_billing": price.billing,
            "price_date": price.date.isoformat(),
        }
    return {"speed": speed, "cost": cost}
