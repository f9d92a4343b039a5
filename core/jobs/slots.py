"""Engines that answer a fixed number of requests at once and queue the rest (Ollama's OLLAMA_NUM_PARALLEL).

Ollama loads a model with `-c num_ctx × parallel -np parallel` (llm/llama_server.go): every slot holds the
whole context, allocated when the model loads, and a request that finds every slot busy waits in a queue of
OLLAMA_MAX_QUEUE (server/sched.go; past it: 503 "server busy"). So a question's concurrency ("50并发", "for 50
users") is not the memory on such an engine: the slots are, and the other requests wait, each answered at one
stream's speed once a slot frees. The parallel said in the question (OLLAMA_NUM_PARALLEL=8) is the slots; not
said, the engine's default (data/runtimes.toml [runtimes.<id>.slots]), stated with the release it holds from.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.query import Query, Task
from core.runtimes import runtime_profile


class ServingSlots(BaseModel):
    """How many of the asked requests the engine answers at once, and how many wait or are refused."""

    model_config = ConfigDict(frozen=True)

    runtime: str
    parallel: int  # requests answered at once, each with the whole context (the memory is theirs)
    parallel_said: bool  # the question set it (else the engine's default since `parallel_since`)
    parallel_setting: str  # the engine's name for it (OLLAMA_NUM_PARALLEL)
    parallel_since: str | None
    parallel_before: int | None
    kv_shared: bool  # the slots share one context's KV cache (llama-server's -c), not one each
    requested: int | None  # requests in flight the question asked for (None: it said none)
    queued: int  # of them, waiting for a free slot
    max_queue: int | None
    max_queue_setting: str | None
    refused: int  # past the queue: the engine answers "server busy"


def serve_in_slots(query: Query) -> tuple[Query, ServingSlots | None]:
    """`query` sized for its engine's slots (batch = the slots) and how the asked requests are served; the
    query unchanged and None on an engine without slots, or when the question names neither a concurrency nor
    the slots."""
    if query.task is not Task.INFERENCE or query.runtime is None:
        return query, None
    slots = runtime_profile(query.runtime).slots
    if slots is None:
        return query, None
    requested = query.batch if query.batch is not None and "batch" not in query.defaulted else None
    said = query.parallel is not None
    if requested is None and not said:
        return query, None
    parallel = query.parallel or slots.parallel
    waiting = max(0, (requested or 0) - parallel)
    queue = slots.max_queue
    refused = max(0, waiting - queue) if queue is not None else 0
    served = {
        "batch": 1 if slots.kv_shared else parallel,
        "defaulted": tuple(k for k in query.defaulted if k != "batch"),
    }
    changed = query.batch != served["batch"] or "batch" in query.defaulted
    sized = query.model_copy(update=served) if changed else query
    return sized, ServingSlots(
        runtime=query.runtime,
        parallel=parallel,
        parallel_said=said,
        parallel_setting=slots.parallel_setting,
        parallel_since=slots.parallel_since,
        parallel_before=slots.parallel_before,
        kv_shared=slots.kv_shared,
        requested=requested,
        queued=waiting - refused,
        max_queue=queue,
        max_queue_setting=slots.max_queue_setting,
        refused=refused,
    )
