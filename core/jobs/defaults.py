"""What the runtime the user named does when they do not say (issue 18), applied before the estimate.

Each default is recorded in `defaulted`, so the answer states it: Ollama's Q4_K_M tag and its context by
VRAM tier, llama.cpp's 4096-token context, Unsloth's 4-bit QLoRA with chunked loss and offloaded
checkpointing, the RL trainers' generation settings."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.jobs.constants import load_job_constants
from core.query import Algorithm, Method, Precision, Query, Task
from core.registry import ModelArch
from core.runtimes import load_runtimes, runtime_profile
from core.units import GIB

RL_GENERATING = frozenset({Algorithm.GRPO, Algorithm.PPO})


def ollama_context(total_vram_bytes: int, max_context: int) -> int:
    """Ollama's num_ctx when neither the request, the Modelfile nor OLLAMA_CONTEXT_LENGTH sets it: tiered by
    the total VRAM of all GPUs (server/routes.go @fb30760), capped at the model's training context."""
    c = load_job_constants().ollama
    gib = total_vram_bytes / GIB
    for threshold, tokens in zip(c.context_tiers_gib, c.context_tiers_tokens, strict=True):
        if gib >= threshold:
            return min(tokens, max_context) if max_context else tokens
    return min(c.context_small, max_context) if max_context else c.context_small


class OllamaContextRule(BaseModel):
    """Why an Ollama answer assumes its context: the VRAM tier the cards fall in and the version that set it,
    with the default before it (so a user on an older Ollama knows theirs)."""

    model_config = ConfigDict(frozen=True)

    tokens: int  # the tier's num_ctx (before any cap at the model's context)
    from_gib: float  # the tier's lower bound of total VRAM (0: the smallest tier)
    to_gib: float | None  # its upper bound (None: the top tier)
    since: str  # the Ollama version the tiers came in
    before: int  # num_ctx on every card in the versions before
    before_since: str
    first: int  # the default before that


def ollama_context_rule(total_vram_bytes: int) -> OllamaContextRule:
    """The tier of Ollama's VRAM-based default context that `total_vram_bytes` falls in (data/jobs.toml)."""
    c = load_job_constants().ollama
    gib = total_vram_bytes / GIB
    upper: float | None = None
    tokens, lower = c.context_small, 0.0
    for threshold, tier_tokens in zip(c.context_tiers_gib, c.context_tiers_tokens, strict=True):
        if gib >= threshold:
            tokens, lower = tier_tokens, threshold
            break
        upper = threshold
    return OllamaContextRule(
        tokens=tokens,
        from_gib=lower,
        to_gib=upper,
        since=c.context_tiers_since,
        before=c.context_before,
        before_since=c.context_before_since,
        first=c.context_first,
    )


def _fill(query: Query, updates: dict[str, object]) -> Query:
    """Set the fields not said; each recorded as defaulted."""
    fresh = {k: v for k, v in updates.items() if getattr(query, k) is None}
    if not fresh:
        return query
    defaulted = (*query.defaulted, *(k for k in fresh if k not in query.defaulted))
    return query.model_copy(update={**fresh, "defaulted": defaulted})


def device_defaults(query: Query, card: Card | None) -> Query:
    """On an Apple silicon Mac the job runs in a Metal engine: the one named when it runs there (llama.cpp,
    Ollama, LM Studio, MLX), else llama.cpp for inference and MLX for training (vLLM, SGLang, TensorRT-LLM and
    bitsandbytes are CUDA-only), on the one device. The answer says which, and what was asked instead."""
    if card is None or not card.unified_memory:
        return query
    update: dict[str, object] = {}
    if query.runtime is None or not runtime_profile(query.runtime).metal:
        update["runtime"] = load_runtimes().metal_default(training=query.task is not Task.INFERENCE).id
    if (query.gpus or 1) > 1:
        update["gpus"] = 1
    if not update:
        return query
    defaulted = (*query.defaulted, *(k for k in update if k not in query.defaulted))
    return query.model_copy(update={**update, "defaulted": defaulted})


def on_cpu(query: Query) -> bool:
    """An inference job asked for the CPU alone, with no card named (by name or by its memory)."""
    named = query.card or query.card_memory_bytes
    return bool(query.cpu_only) and query.task is Task.INFERENCE and not named


def cpu_runtime(query: Query) -> str:
    """The engine a CPU-only job runs in: the one asked when it runs without a GPU (llama.cpp and what is
    built on it: Ollama, LM Studio), else the engine GGUF files run in (llama.cpp)."""
    if query.runtime is not None and runtime_profile(query.runtime).host_offload == "layers":
        return query.runtime
    return next(p.id for p in load_runtimes().profiles if p.gguf_default)


def cpu_defaults(query: Query) -> Query:
    """A CPU-only inference job runs in a CPU engine, on no card: the answer states the engine. A card named
    beside "no GPU" is the card asked about (the job is answered for it)."""
    if not on_cpu(query):
        return query
    update: dict[str, object] = {}
    runtime = cpu_runtime(query)
    if query.runtime != runtime:
        update["runtime"] = runtime
    if (query.gpus or 1) > 1:
        update["gpus"] = 1  # one machine's RAM
    if not update:
        return query
    defaulted = (*query.defaulted, *(k for k in update if k not in query.defaulted))
    return query.model_copy(update={**update, "defaulted": defaulted})


def runtime_defaults(query: Query, total_vram_bytes: int | None, model: ModelArch) -> Query:
    """`query` with its runtime profile's defaults for what was not said (data/runtimes.toml; the card's
    total memory picks Ollama's context; None when no card is known)."""
    c = load_job_constants()
    profile = runtime_profile(query.runtime)  # None: the training / single-sequence default
    max_context = model.max_context
    if query.task is Task.INFERENCE and query.runtime is not None and profile.host_offload is not None:
        # a GGUF engine caps its context at the GGUF's own n_ctx_train (the chat model's config)
        max_context = model.gguf_context or max_context
        # GGUF files are Q4_K_M unless asked; a model released in 4 bits (gpt-oss's MXFP4) runs as released
        native = Precision.INT4 if model.native_precision == "int4" else Precision.Q4_K_M
        updates: dict[str, object] = {"precision": native}
        if profile.defaults.context_by_vram and total_vram_bytes:
            updates["seq"] = ollama_context(total_vram_bytes, max_context)
        elif profile.defaults.context:
            updates["seq"] = min(profile.defaults.context, max_context or profile.defaults.context)
        query = _fill(query, updates)
    d = profile.defaults
    if query.task is Task.FINETUNE and (d.method or d.chunked_loss or d.offload_activations):
        updates = {"chunked_loss": d.chunked_loss, "offload_activations": d.offload_activations}
        if d.offload_activations:
            updates["grad_checkpointing"] = True
        if d.method is not None and query.method is None:
            updates["method"] = Method(d.method)
        query = _fill(query, {k: v for k, v in updates.items() if v is not None})
    if query.algorithm in RL_GENERATING and query.task is not Task.INFERENCE:
        rl = profile.rl
        completion = (
            rl.completion_tokens if rl is not None and rl.completion_tokens else c.rl.completion_tokens
        )
        updates = {"completion_tokens": completion}
        if query.algorithm is Algorithm.GRPO:
            updates["num_generations"] = c.rl.num_generations
        if query.seq is None:
            updates["seq"] = c.rl.prompt_tokens
        query = _fill(query, updates)
    return query


def method_decided(query: Query) -> bool:
    """The framework or the algorithm named decides the fine-tuning method (Unsloth's 4-bit QLoRA, the RL
    trainers' full policy): no methods side by side."""
    return runtime_profile(query.runtime).defaults.method is not None or query.algorithm is not None
