"""The kinds of fix the advisor proposes when a job does not fit, in one table: the order answers list them
in, what each costs in output quality and in speed (codes the templates word), and the button that applies
it (an action `bot.answer.apply_action` reads). A new kind of fix is one `FixKind` value and one row here,
plus the search that finds it (core/advisor/fit_fixes.py) and its sentences.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from core.query import Query


class FixKind(StrEnum):
    ENGINE_SHARE = "engine_share"  # a serving engine given more of the card (vLLM --gpu-memory-utilization)
    GRAD_CHECKPOINTING = "grad_checkpointing"
    CHUNKED_LOSS = "chunked_loss"  # issue 18: fixes that keep a long context
    OFFLOADED_CHECKPOINTING = "offloaded_checkpointing"
    SEQUENCE_PARALLEL = "sequence_parallel"
    ADAMW_8BIT = "adamw_8bit"
    SMALLER_BATCH = "smaller_batch"
    FP8 = "fp8"
    INT8 = "int8"
    LORA = "lora"
    SHORTER_CONTEXT = "shorter_context"
    QLORA = "qlora"
    INT4 = "int4"
    MORE_CARDS = "more_cards"
    BIGGER_CARD = "bigger_card"
    COMBINED = "combined"


# A fix's button: (the fixed query, its card, its card count) → an action, or None (no one-field change).
Action = Callable[[Query, str, int], str | None]


@dataclass(frozen=True)
class FixSpec:
    kind: FixKind
    quality: str  # what it costs in output quality (core.advisor.model QUALITY_RANK codes)
    speed: str  # what it does to speed (a code the templates word; 'pcie' replaces it without NVLink)
    action: Action


def _fixed(action: str) -> Action:
    return lambda query, card, count: action


# In the order answers list them (cheapest in quality and effort first).
FIX_TABLE: tuple[FixSpec, ...] = (
    # a KV-pool engine's share of the card raised (data/runtimes.toml memory_share_raised): the same job
    FixSpec(
        FixKind.ENGINE_SHARE,
        "none",
        "none",
        lambda q, card, n: f"gpu_memory_utilization={q.gpu_memory_utilization}",
    ),
    FixSpec(FixKind.GRAD_CHECKPOINTING, "none", "recompute", _fixed("grad_checkpointing=true")),
    # Liger's fused linear cross-entropy / Unsloth's chunked loss: the same maths a chunk of tokens at a time
    FixSpec(FixKind.CHUNKED_LOSS, "none", "none", _fixed("chunked_loss=true")),
    # Unsloth's offloaded gradient checkpointing: checkpoints copied to system RAM, "only 1% slower"
    FixSpec(FixKind.OFFLOADED_CHECKPOINTING, "none", "host_transfer", _fixed("offload_activations=true")),
    # DeepSpeed Ulysses / ring attention over the job's cards: each card holds seq / N tokens' activations
    # (arXiv 2309.14509; 360-LLaMA-Factory and ms-swift `sequence_parallel_size`); all-to-alls per layer
    FixSpec(
        FixKind.SEQUENCE_PARALLEL,
        "none",
        "communication",
        lambda q, card, n: f"sequence_parallel={q.sequence_parallel}",
    ),
    FixSpec(FixKind.ADAMW_8BIT, "none", "none", _fixed("optimizer=adamw_8bit")),
    FixSpec(FixKind.SMALLER_BATCH, "none", "fewer_tokens_per_step", lambda q, card, n: f"batch={q.batch}"),
    FixSpec(FixKind.FP8, "slight", "none", _fixed("precision=fp8")),
    FixSpec(FixKind.INT8, "slight", "quantized_kernels", _fixed("precision=int8")),
    FixSpec(FixKind.LORA, "task_dependent", "faster", _fixed("method=lora")),
    FixSpec(FixKind.SHORTER_CONTEXT, "shorter_inputs", "none", lambda q, card, n: f"seq={q.seq}"),
    FixSpec(FixKind.QLORA, "task_dependent", "dequant", _fixed("method=qlora")),
    FixSpec(FixKind.INT4, "noticeable", "quantized_kernels", _fixed("precision=int4")),
    FixSpec(FixKind.MORE_CARDS, "none", "communication", lambda q, card, n: f"gpus={n}"),
    FixSpec(FixKind.BIGGER_CARD, "none", "card_dependent", lambda q, card, n: f"card={card}"),
    FixSpec(FixKind.COMBINED, "none", "mixed", lambda q, card, n: None),
)
FIX_SPECS: dict[FixKind, FixSpec] = {spec.kind: spec for spec in FIX_TABLE}
assert set(FIX_SPECS) == set(FixKind), "every kind of fix has one row"


def fix_order(kind: FixKind) -> int:
    return FIX_TABLE.index(FIX_SPECS[kind])


__all__ = ["FIX_SPECS", "FIX_TABLE", "FixKind", "FixSpec", "fix_order"]
