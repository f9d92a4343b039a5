"""The one JSON contract for a job: memory, speed, time and cost, the same keys and values whichever command
or answer carries them (`gpufit estimate --json`, `gpufit ask --json`'s `answer`, `gpufit plan --json`'s
plans use the same typed models: Breakdown, Verdict, InferenceSpeed / TrainingSpeed, JobCost, DataTokens).

README "The JSON contract" lists the keys; tests/test_json_contract.py holds `estimate --json` and
`ask --json` to the same values for the same job.
"""

from __future__ import annotations

from core.assessment import Assessment, assess
from core.catalog import load_catalog
from core.contract import ServingFigures
from core.cost import currency_for, price_book_in_force
from core.estimator import Estimate
from core.jobs.weight_offload import host_bytes_per_card
from core.layout import layout_of
from core.query import Method, Query, Task
from core.registry import load_registry


def with_params_b(query: Query) -> Query:
    """The query with `params_b`, the model's total parameters (billions), whenever the model is known,
    stated or not: every `query` of the contract says the size it was answered for."""
    if query.params_b is None and query.model:
        model = load_registry().by_id.get(query.model)
        if model is not None:
            return query.model_copy(update={"params_b": round(model.total_params / 1e9, 3)})
    return query


def query_json(query: Query) -> dict[str, object]:
    """A job's `query` in the contract: the Query's fields, with the model's size."""
    return with_params_b(query).model_dump(mode="json")


def folk_reason(est: Estimate) -> str:
    """Why the exact figure differs from the article's rule (params × bytes, × 4–6 to train): one code the
    templates word."""
    total, low, high = est.total_bytes, est.folk.low_bytes, est.folk.high_bytes
    b = est.breakdown
    q = est.query
    if low * 0.9 <= total <= high * 1.1:
        return "close"
    if total < low:
        if q.task is not Task.INFERENCE and q.method in (Method.LORA, Method.QLORA, Method.FREEZE):
            return "adapters_only"
        if q.cpu_offload_gb and host_bytes_per_card(est, q.gpus or 1):
            return "weights_in_host"  # vLLM --cpu-offload-gb: part of the weights stay in host memory
        if q.gpus and q.gpus > 1:
            return "sharded"
        return "small_overhead"
    extras = {
        "kv_cache": b.kv_cache,
        "activations": b.activations + b.logits,
    }
    if q.task is Task.INFERENCE:  # nothing trains: no gradients or optimizer states to name
        extras["quantized_weights"] = b.weights - est.folk.weights_bytes
        extras["runtime"] = b.overhead
    else:
        extras["model_states"] = b.gradients + b.optimizer + (b.weights - est.folk.weights_bytes)
    return max(extras, key=lambda k: extras[k])


def memory_json(est: Estimate) -> dict[str, object]:
    """The memory of a job: bytes per component on one card, the total, the peak phase, the ± band, the
    folk rule beside it (with why they differ), the verdict per card count, warnings."""
    return {
        "model_name": est.model_name,
        "breakdown": est.breakdown.as_dict(),
        "total_bytes": est.total_bytes,
        "peak_phase": est.peak_phase,
        "uncertainty": est.uncertainty,
        "folk_rule": est.folk.as_json() | {"reason": folk_reason(est)},
        "verdicts": [v.model_dump(mode="json") for v in est.verdicts],
        "warnings": est.warnings,
        "layout": layout_json(est),
        "layout_problem": layout_problem_json(est),
    }


def layout_json(est: Estimate) -> dict[str, object] | None:
    """`layout`: the parallel layout the memory (and the time) assume, Megatron's tensor × pipeline × data
    parallel sizes and whether the question named it; None: ZeRO-3 / FSDP over the cards, or one card."""
    layout = layout_of(est.query)
    if layout is None:
        return None
    return layout.model_dump(mode="json") | {"said": layout.said}


def layout_problem_json(est: Estimate) -> dict[str, object] | None:
    """`layout_problem`: why the layout the question named cannot run (then `layout` is the one the figures
    are for instead), or None."""
    return est.layout_problem.model_dump(mode="json") if est.layout_problem is not None else None


def speed_json(job: Assessment | None) -> dict[str, object] | None:
    """`speed`: its kind ("inference" or "training") and every figure (InferenceSpeed / TrainingSpeed)."""
    return job.speed_json() if job is not None else None


def cost_json(job: Assessment | None) -> dict[str, object] | None:
    """`cost`: JobCost (per_hour, per_million_tokens, total, hours, currency, the dated price it used)."""
    return job.cost.model_dump(mode="json") if job is not None and job.cost is not None else None


def time_json(job: Assessment | None) -> dict[str, object] | None:
    """`time`: the run's wall-clock hours and the tokens they are for, with how they were counted."""
    return job.time_json() if job is not None else None


def serving_figures(est: Estimate, job: Assessment | None) -> ServingFigures | None:
    """`serving`: a KV-pool engine's figures (vLLM, SGLang): its KV pool, what one sequence takes, how many
    run at once and how many of the asked users wait."""
    pool = est.vllm
    if pool is None:
        return None
    count = job.count if job is not None else est.query.gpus or 1
    model = load_registry().by_id.get(est.query.model or "")
    headcount = est.query.users if "users" not in est.query.defaulted else None
    return ServingFigures(
        runtime=est.query.runtime,
        tensor_parallel=count,
        kv_pool_bytes=pool.kv_pool_bytes,
        kv_bytes_per_sequence=pool.kv_bytes_per_sequence,
        max_concurrent_sequences=pool.concurrent_sequences,
        requested_sequences=pool.requested_sequences if "batch" not in est.query.defaulted else None,
        queued=pool.queued_sequences,
        latent_cache_whole_per_card=count > 1 and model is not None and model.is_mla,
        kv_share_of_free=pool.kv_share_of_free,
        kv_share_flag=pool.kv_share_flag,
        capacity_sequences=pool.capacity_sequences,
        headcount=headcount,
        headcount_queued=max(0, headcount - pool.capacity_sequences) if headcount else None,
    )


def serving_json(est: Estimate, job: Assessment | None) -> dict[str, object] | None:
    figures = serving_figures(est, job)
    return figures.as_json() if figures is not None else None


def job_json(est: Estimate, job: Assessment | None) -> dict[str, object]:
    """Everything one job on one card × count carries: memory, speed, time, cost, serving."""
    return memory_json(est) | {
        "speed": speed_json(job),
        "cost": cost_json(job),
        "time": time_json(job),
        "serving": serving_json(est, job),
    }


def estimate_json(result: Estimate) -> dict[str, object]:
    """`gpufit estimate --json`: the filled query (with `defaulted`), the model's size, and the job's contract
    (`speed`, `cost`, `time` only when a catalog card is named)."""
    job = estimate_assessment(result)
    body = job_json(result, job)
    if job is None:
        body = {k: v for k, v in body.items() if k not in ("speed", "cost", "time")}
    return {
        "query": query_json(result.query),
        "representative_shape": result.representative_shape,
        "params": result.params,
        "active_params": result.active_params,
        "trainable_params": result.trainable_params,
    } | body


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
