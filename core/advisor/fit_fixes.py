"""The smallest changes that make a job fit the named card, each with its new memory figure."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from core.advisor.bigger_card import bigger_card
from core.advisor.fix_kinds import FIX_SPECS, FixKind, fix_order
from core.advisor.model import QUALITY_RANK, Fix
from core.advisor.shared import card_price, speed_value, stated_only
from core.assessment import verdict_for_count
from core.catalog import Card, load_catalog
from core.cost import (
    PriceBook,
    currency_for,
    price_book_in_force,
)
from core.estimator import (
    Estimate,
    Fit,
    Verdict,
    estimate,
    short_of,
    terms,
)
from core.layout import layout_of
from core.query import Currency, Method, Optimizer, Precision, Query, Task
from core.registry import load_registry
from core.runtimes import runtime_profile

# Memory savers a job may already run with by default (its runtime's recipe: Unsloth's chunked loss and
# offloaded checkpoints; fine-tuning's checkpointing): no change to offer when the job as filled has them.
_IN_EFFECT = (
    (FixKind.CHUNKED_LOSS, "chunked_loss"),
    (FixKind.OFFLOADED_CHECKPOINTING, "offload_activations"),
    (FixKind.GRAD_CHECKPOINTING, "grad_checkpointing"),
)


def in_effect(filled: Query) -> frozenset[FixKind]:
    """The savers the filled job already runs with (a fix naming one would change nothing)."""
    return frozenset(kind for kind, field in _IN_EFFECT if getattr(filled, field))


def _fix_candidates(
    query: Query, card: Card, skip: frozenset[FixKind] = frozenset()
) -> list[tuple[FixKind, Query]]:
    """Single changes worth trying, each as (kind, changed query); none of the savers in `skip`."""
    return [(kind, trial) for kind, trial in _all_candidates(query, card) if kind not in skip]


def _all_candidates(query: Query, card: Card) -> list[tuple[FixKind, Query]]:
    out: list[tuple[FixKind, Query]] = []
    model = load_registry().by_id.get(query.model or "")
    native = Precision(model.native_precision) if model is not None and model.native_precision else None
    # a model released in fp8 or 4 bits is served that way: "fp8 weights" is no fix for DeepSeek-R1
    precision = query.precision or (native if query.task is Task.INFERENCE else None) or Precision.BF16
    current = terms.BYTES_PER_WEIGHT[precision]
    if query.task is Task.INFERENCE:
        if card.fp8_tflops and current > 1.0:
            out.append((FixKind.FP8, query.model_copy(update={"precision": Precision.FP8})))
        if current > 1.0:
            out.append((FixKind.INT8, query.model_copy(update={"precision": Precision.INT8})))
        if current > terms.BYTES_PER_WEIGHT[Precision.INT4]:
            out.append((FixKind.INT4, query.model_copy(update={"precision": Precision.INT4})))
    else:
        method = query.method or Method.FULL
        if method is Method.FULL:
            out.append(
                (
                    FixKind.LORA,
                    query.model_copy(
                        update={
                            "method": Method.LORA,
                            "master_weights": None,
                            "optimizer": None,
                            "zero_stage": None,
                        }
                    ),
                )
            )
        if method in (Method.FULL, Method.LORA):
            out.append(
                (
                    FixKind.QLORA,
                    query.model_copy(
                        update={
                            "method": Method.QLORA,
                            "precision": None,
                            "master_weights": None,
                            "optimizer": None,
                            "zero_stage": None,
                        }
                    ),
                )
            )
        if not query.grad_checkpointing:
            out.append((FixKind.GRAD_CHECKPOINTING, query.model_copy(update={"grad_checkpointing": True})))
        # Fixes that keep the context (long-context fine-tuning): the loss a chunk at a time (Liger, Unsloth),
        # the checkpoints in system RAM (Unsloth's offloaded gradient checkpointing)
        if not query.chunked_loss:
            out.append((FixKind.CHUNKED_LOSS, query.model_copy(update={"chunked_loss": True})))
        gpus = query.gpus or 1
        if gpus > 1 and (query.seq or 0) >= LONG_CONTEXT_TOKENS and not query.sequence_parallel:
            # each card a share of every sequence (DeepSpeed Ulysses / ring attention) instead of all of it
            out.append((FixKind.SEQUENCE_PARALLEL, query.model_copy(update={"sequence_parallel": gpus})))
        if not query.offload_activations:
            out.append(
                (
                    FixKind.OFFLOADED_CHECKPOINTING,
                    query.model_copy(update={"offload_activations": True, "grad_checkpointing": True}),
                )
            )
        if method is Method.FULL and query.optimizer in (None, Optimizer.ADAMW):
            out.append((FixKind.ADAMW_8BIT, query.model_copy(update={"optimizer": Optimizer.ADAMW_8BIT})))
    return out


# Long-context fine-tuning: what people do instead of shortening the context, tried cumulatively.
_KEEPS_CONTEXT = (
    FixKind.SEQUENCE_PARALLEL,
    FixKind.CHUNKED_LOSS,
    FixKind.OFFLOADED_CHECKPOINTING,
    FixKind.QLORA,
)
LONG_CONTEXT_TOKENS = 8192


def _keeps_context(
    query: Query,
    card: Card,
    make: Callable[[FixKind, Query, list[FixKind]], Fix | None],
    skip: frozenset[FixKind] = frozenset(),
) -> Fix | None:
    """For a fine-tune at a long context that does not fit: the chunked loss, then offloaded checkpoints,
    then a 4-bit base, together, until it fits; the fix is named by its first change ('chunked_loss')."""
    if query.task is Task.INFERENCE or (query.seq or 0) < LONG_CONTEXT_TOKENS:
        return None
    trial: Query = query
    changes: list[FixKind] = []
    for kind in _KEEPS_CONTEXT:
        step = dict(_fix_candidates(trial, card, skip)).get(kind)
        if step is None:
            continue
        trial, changes = step, [*changes, kind]
        if len(changes) > 1 and (fix := make(changes[0], trial, list(changes))) is not None:
            return fix
    return None


def _qlora_keeping_context(
    query: Query,
    card: Card,
    make: Callable[[FixKind, Query, list[FixKind]], Fix | None],
    skip: frozenset[FixKind] = frozenset(),
) -> Fix | None:
    """When the context-keeping chain needs a 4-bit base, QLoRA with the chunked loss alone (no checkpoints in
    system RAM, so no transfer cost) is its own option, named by QLoRA."""
    if query.task is Task.INFERENCE or (query.seq or 0) < LONG_CONTEXT_TOKENS:
        return None
    qlora = dict(_fix_candidates(query, card)).get(FixKind.QLORA)
    if qlora is None:
        return None
    chunked = dict(_fix_candidates(qlora, card, skip)).get(FixKind.CHUNKED_LOSS)
    if chunked is None:
        return None
    return make(FixKind.QLORA, chunked, [FixKind.QLORA, FixKind.CHUNKED_LOSS])


def _longest_fitting(
    query: Query, field: str, low: int, capacity_check: Callable[[Query], Verdict | None]
) -> Query | None:
    """The largest value of `field` (seq or batch) below the current one, halving down to `low`, that fits."""
    value = getattr(query, field) or 1
    step = value // 2
    while step >= low:
        trial = query.model_copy(update={field: step})
        verdict = capacity_check(trial)
        if verdict is not None and verdict.fits is not Fit.NO:
            return trial
        step //= 2
    return None


def _raised_share(filled: Query, said: Query) -> Query | None:
    """A serving engine whose share of the card was not said, given the larger share its flag allows
    (vLLM --gpu-memory-utilization 0.95 instead of 0.9): the job as it is, on more of the card."""
    if filled.task is not Task.INFERENCE or said.gpu_memory_utilization is not None:
        return None
    memory = runtime_profile(filled.runtime).memory
    share, raised = filled.gpu_memory_utilization, memory.memory_share_raised
    if memory.layout != "kv_pool" or share is None or raised is None or raised <= share:
        return None
    return said.model_copy(update={"gpu_memory_utilization": raised, "runtime": filled.runtime})


def _keeps_layout(baseline: Estimate, result: Estimate) -> bool:
    """A fix of a job sized in a 3D layout (core/layout.py) keeps one: the same tensor and pipeline sizes
    when the question named them (more cards add data-parallel copies), a layout of the card's choosing
    otherwise; never a change that only ZeRO-3 / FSDP runs (LoRA, offloaded states or checkpoints)."""
    base = layout_of(baseline.query)
    if base is None:
        return True
    found = layout_of(result.query)
    if found is None or result.layout_problem is not None:
        return False
    if base.said:
        return (found.tensor_parallel, found.pipeline_parallel) == (
            base.tensor_parallel,
            base.pipeline_parallel,
        )
    return True


def fixes(query: Query, *, currency: Currency | None = None) -> list[Fix]:
    """The smallest changes that make the job fit the named card, each with its new memory figure.

    Empty when the job already fits comfortably or no card is named. Tried one at a time first; when none
    alone is enough, the cumulative combination of the memory savers, then more cards or a bigger card.
    """
    return list(_fixes(query, currency, price_book_in_force()))


@lru_cache(maxsize=4096)
def _fixes(query: Query, currency: Currency | None, _book: object) -> tuple[Fix, ...]:
    catalog = load_catalog()
    money = currency_for(query.currency, None) if currency is None else currency
    book = _book if isinstance(_book, PriceBook) else None  # None: card_price reads the one in force
    baseline = estimate(query)
    size = baseline.query.card_memory_bytes
    stand_in: Card | None = None  # a card given only by its size ("my 12GB GPU") or one the catalogue lacks
    if baseline.query.card in catalog.by_id:
        card = catalog.get(baseline.query.card)
    elif not baseline.query.card and size and (stand_in := catalog.typical_of(size)) is not None:
        # the same fixes as a listed card, tried on the size said; the slowest consumer card of that size
        # lends its speed (as the answer's own speed does) and its features (no FP8 on a 3060)
        card = stand_in
    else:
        return ()
    count = baseline.query.gpus or 1
    base_verdict = verdict_for_count(baseline, count)
    if base_verdict is None or base_verdict.fits is Fit.FITS:
        return ()
    unknown_speed = stand_in is not None and bool(baseline.query.card_name)
    said = stated_only(query)
    if said.cpu_offload_gb:
        # what makes it fit on the cards: without weights streamed over PCIe in every pass (vLLM
        # --cpu-offload-gb), which would keep a fix's smaller weights in host memory too
        said = said.model_copy(update={"cpu_offload_gb": None})
    if stand_in is None:
        said = said.model_copy(update={"card": card.id})

    def placed(trial: Query, on: Card, n: int) -> Query:
        if on is stand_in:
            return trial.model_copy(update={"card": None, "card_memory_bytes": size, "gpus": n})
        return trial.model_copy(update={"card": on.id, "card_memory_bytes": None, "gpus": n})

    base_speeds: list[float] = []  # the job's own speed, worked out when a fix first needs it

    def base_speed() -> float:
        if not base_speeds:
            base_speeds.append(speed_value(baseline, card, count))
        return base_speeds[0]

    def check(trial: Query, on: Card = card, n: int = count) -> tuple[Estimate, Verdict | None]:
        result = estimate(placed(trial, on, n))
        return result, verdict_for_count(result, n)

    def make(
        kind: FixKind, trial: Query, changes: list[FixKind], on: Card = card, n: int = count
    ) -> Fix | None:
        if short_of(trial, on, n):
            return None  # known without the estimate on the card
        result, verdict = check(trial, on, n)
        if verdict is None or verdict.fits is Fit.NO:
            return None
        if not _keeps_layout(baseline, result):
            return None  # a fix stays valid under the job's Megatron layout (LoRA, offloads: ZeRO's)
        speed = speed_value(result, on, n)
        price = None if on is stand_in else card_price(on.id, money, book, query.platform)
        quality = max((FIX_SPECS[c].quality for c in changes), key=lambda q: QUALITY_RANK.get(q, 1))
        speed_cost = FIX_SPECS[kind].speed
        if kind is FixKind.MORE_CARDS and not on.has_nvlink:
            speed_cost = "pcie"
        return Fix(
            kind=kind,
            changes=changes,
            query=result.query,
            card=verdict.card if on is stand_in else on.id,  # the size's own label ("12gb")
            count=n,
            need_bytes=verdict.need_bytes,
            capacity_bytes=verdict.capacity_bytes,
            saved_bytes=base_verdict.need_bytes - verdict.need_bytes,
            verdict=verdict.fits,
            # (a card the catalogue lacks has no known speed to compare with)
            speed_ratio=round(speed / base_speed(), 3) if base_speed() and not unknown_speed else None,
            speed_cost=speed_cost,
            quality_cost=quality,
            nvlink=on.has_nvlink,
            cost_per_hour=round(price.per_hour * n, 4) if price else None,
            currency=money if price else None,
        )

    found: list[Fix] = []
    share = _raised_share(baseline.query, said)
    if share is not None and (fix := make(FixKind.ENGINE_SHARE, share, [FixKind.ENGINE_SHARE])):
        found.append(fix)
    skip = in_effect(baseline.query)
    for kind, trial in _fix_candidates(said, card, skip):
        fix = make(kind, trial, [kind])
        if fix:
            found.append(fix)
    shorter_fixes = (("seq", FixKind.SHORTER_CONTEXT, 256), ("batch", FixKind.SMALLER_BATCH, 1))
    for field, kind, low in shorter_fixes:
        if (getattr(baseline.query, field) or 1) > low:
            shorter = _longest_fitting(
                said.model_copy(update={field: getattr(baseline.query, field)}),
                field,
                low,
                lambda q: None if short_of(q, card, count) else check(q)[1],
            )
            if shorter is not None and (fix := make(kind, shorter, [kind])):
                found.append(fix)

    long_context = _keeps_context(said, card, make, skip)
    if long_context is not None:
        found.append(long_context)
        needs_4bit = FixKind.QLORA in long_context.changes
        if needs_4bit and not any(f.kind is FixKind.QLORA for f in found):
            qlora = _qlora_keeping_context(said, card, make, skip)
            if qlora is not None:
                found.append(qlora)

    savers = said
    combined: list[FixKind] = []
    if not found:
        ordered = sorted(_fix_candidates(said, card, skip), key=lambda pair: fix_order(pair[0]))
        for kind, _ in ordered:
            savers = dict(_fix_candidates(savers, card, skip)).get(kind, savers)
            combined.append(kind)
            fix = make(FixKind.COMBINED, savers, list(combined))
            if fix:
                found.append(fix)
                break
    # More cards shard the model states, not one card's activations: a training job's micro-batch of 1
    # (gradient accumulation keeps the effective batch) often needs far fewer of them.
    micro = None
    if said.task is not Task.INFERENCE and (baseline.query.batch or 1) > 1:
        micro = said.model_copy(update={"batch": 1})
    for n in () if card.unified_memory else (2, 4, 8, 16, 32, 64):  # a Mac is one device
        if n > count:
            fix = make(FixKind.MORE_CARDS, said, [FixKind.MORE_CARDS], card, n)
            if fix is None and micro is not None:
                more = [FixKind.MORE_CARDS, FixKind.SMALLER_BATCH]
                fix = make(FixKind.MORE_CARDS, micro, more, card, n)
            if fix:
                found.append(fix)
                break
    if not found and combined and not card.unified_memory:
        # Nothing alone fits: every memory saver together, spread over more cards of the named kind.
        for n in (2, 4, 8, 16, 32, 64):
            if n > count and (
                fix := make(FixKind.COMBINED, savers, [*combined, FixKind.MORE_CARDS], card, n)
            ):
                found.append(fix)
                break
    bigger = bigger_card(said, card, count, money)
    if bigger is not None and (fix := make(FixKind.BIGGER_CARD, said, [FixKind.BIGGER_CARD], bigger, count)):
        found.append(fix)
    return tuple(sorted(found, key=lambda f: fix_order(f.kind)))
