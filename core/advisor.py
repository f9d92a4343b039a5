"""Advice built on the estimator: ranked plans that fit, the smallest fixes for a card that does not, and
the article's scenario recommendations checked against real numbers.

Memory comes from core.estimator.estimate, speed from core.speed, prices from core.cost; this module only
searches over cards × counts × methods × precisions and ranks. It returns data; templates word it.
"""

from __future__ import annotations

import heapq
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from core.catalog import Card, load_catalog
from core.cost import (
    CardPrice,
    PriceBook,
    PriceBookError,
    currency_for,
    job_cost,
    load_price_book,
    price_book_in_force,
)
from core.estimator import (
    Estimate,
    Fit,
    UnknownCardError,
    UnknownModelError,
    Verdict,
    estimate,
    need_bytes,
    terms,
)
from core.query import Currency, Method, Optimizer, Precision, Query, Runtime, Task
from core.speed import inference_speed, training_speed

SortKey = Literal["cost", "speed"]

_INFERENCE_PRECISIONS = (Precision.BF16, Precision.FP8, Precision.INT8, Precision.INT4)
_COUNTS = (1, 2, 4, 8)
_PRETRAIN_COUNTS = (1, 2, 4, 8, 16, 32, 64)

# What a precision or method costs in output quality, as a code the templates word.
_QUALITY = {
    Precision.FP32: "none",
    Precision.BF16: "none",
    Precision.FP16: "none",
    Precision.FP8: "slight",
    Precision.INT8: "slight",
    Precision.Q8_0: "slight",
    Precision.Q6_K: "slight",
    Precision.Q5_K_M: "slight",
    Precision.INT4: "noticeable",
    Precision.NF4: "noticeable",
    Precision.Q4_K_M: "noticeable",
    Precision.Q3_K: "large",
    Precision.Q2_K: "large",
}
_METHOD_QUALITY = {
    Method.FULL: "none",
    Method.LORA: "task_dependent",
    Method.QLORA: "task_dependent",
    Method.FREEZE: "task_dependent",
}
_QUALITY_RANK = {"none": 0, "slight": 1, "task_dependent": 1, "noticeable": 2, "large": 3}


class Plan(BaseModel):
    """One way to run the job: which card, how many, how, and what it costs in time and money."""

    model_config = ConfigDict(frozen=True)

    card: str
    card_name: str
    memory_gib: float
    count: int
    task: Task
    method: Method | None
    precision: Precision
    runtime: Runtime
    need_bytes: int
    capacity_bytes: int
    verdict: Fit
    margin: float
    nvlink: bool
    quality: str
    decode_tokens_per_s: float | None = None
    aggregate_tokens_per_s: float | None = None
    ttft_s: float | None = None
    training_tokens_per_s: float | None = None
    training_hours: float | None = None
    mfu: float | None = None
    cost_per_hour: float | None = None
    cost_per_million_tokens: float | None = None
    total_cost: float | None = None
    currency: Currency
    price: CardPrice | None = None
    notes: list[str] = []
    query: Query

    @property
    def speed(self) -> float:
        """The figure 'fastest' ranks by: training tokens/s, else one sequence's decode tokens/s."""
        return self.training_tokens_per_s or self.decode_tokens_per_s or 0.0


class Fix(BaseModel):
    """One change that makes the job fit the named card, with the new per-card memory and its price."""

    model_config = ConfigDict(frozen=True)

    kind: str
    changes: list[str]
    query: Query
    card: str
    count: int
    need_bytes: int
    capacity_bytes: int
    saved_bytes: int
    verdict: Fit
    speed_ratio: float | None
    speed_cost: str
    quality_cost: str
    nvlink: bool
    cost_per_hour: float | None = None
    currency: Currency | None = None


class ClaimCheck(BaseModel):
    """One of the article's claims tried on a concrete job: does it hold, with the numbers."""

    model_config = ConfigDict(frozen=True)

    label: str
    query: Query
    model_name: str
    card: str
    count: int
    need_bytes: int
    capacity_bytes: int
    verdict: Fit
    article_says_fits: bool
    holds: bool
    weights_bytes: int
    decode_tokens_per_s: float | None = None
    max_sequences: int | None = None
    training_tokens_per_s: float | None = None


class CardOption(BaseModel):
    model_config = ConfigDict(frozen=True)

    card: str
    card_name: str
    memory_gib: float
    price: CardPrice | None


class ScenarioAdvice(BaseModel):
    """The article's recommendation for a use, checked: its rule, the claims tried, and concrete plans."""

    model_config = ConfigDict(frozen=True)

    name: str
    min_memory_gib: float
    safer_memory_gib: float | None = None
    example_card: str
    needs_nvlink: bool = False
    checks: list[ClaimCheck] = []
    plans: list[Plan] = []
    cards: list[CardOption] = []
    notes: list[str] = []


SCENARIOS = ("learning", "production_inference", "pretraining", "vision")


# -- helpers --------------------------------------------------------------------------------------------


def _verdict(result: Estimate, count: int) -> Verdict | None:
    for verdict in result.verdicts:
        if verdict.count == count:
            return verdict
    return None


def _price(card_id: str, currency: Currency, book: PriceBook | None = None) -> CardPrice | None:
    """The card's price from `book` (a plan search passes the one it started with), else the one in force."""
    if book is not None:
        return book.price_for(card_id, currency)
    try:
        return load_price_book().price_for(card_id, currency)
    except PriceBookError:
        return None


def _quality(query: Query) -> str:
    if query.task is Task.INFERENCE:
        return _QUALITY.get(query.precision or Precision.BF16, "none")
    method_quality = _METHOD_QUALITY[query.method or Method.FULL]
    if query.method is Method.FULL and query.precision in (Precision.INT8, Precision.INT4):
        return "noticeable"
    return method_quality


def _speed_value(result: Estimate, card: Card, count: int) -> float:
    if result.query.task is Task.INFERENCE:
        return inference_speed(result, card, count).decode_tokens_per_s
    return training_speed(result, card, count, None).tokens_per_s


def _plan(
    result: Estimate, card: Card, count: int, currency: Currency, book: PriceBook | None = None
) -> Plan | None:
    verdict = _verdict(result, count)
    if verdict is None or verdict.fits is Fit.NO:
        return None
    query = result.query
    price = _price(card.id, currency, book)
    notes = list(verdict.notes)
    decode = aggregate = ttft = train = hours = mfu = None
    tokens_per_s: float | None
    if query.task is Task.INFERENCE:
        inf = inference_speed(result, card, count)
        decode, aggregate, ttft, mfu = (
            inf.decode_tokens_per_s,
            inf.aggregate_tokens_per_s,
            inf.ttft_s,
            inf.mfu,
        )
        tokens_per_s = aggregate
        notes += [n for n in inf.notes if n not in notes]
    else:
        tr = training_speed(result, card, count, query.tokens)
        train, hours, mfu = tr.tokens_per_s, tr.training_hours, tr.mfu
        tokens_per_s = None
        notes += [n for n in tr.notes if n not in notes]
    cost = job_cost(price, count, tokens_per_s=tokens_per_s, hours=hours) if price else None
    return Plan(
        card=card.id,
        card_name=card.name,
        memory_gib=card.memory_gib,
        count=count,
        task=query.task,
        method=query.method,
        precision=query.precision or Precision.BF16,
        runtime=query.runtime or Runtime.TRANSFORMERS,
        need_bytes=verdict.need_bytes,
        capacity_bytes=verdict.capacity_bytes,
        verdict=verdict.fits,
        margin=verdict.margin,
        nvlink=card.has_nvlink,
        quality=_quality(query),
        decode_tokens_per_s=decode,
        aggregate_tokens_per_s=aggregate,
        ttft_s=ttft,
        training_tokens_per_s=train,
        training_hours=hours,
        mfu=mfu,
        cost_per_hour=cost.per_hour if cost else None,
        cost_per_million_tokens=cost.per_million_tokens if cost else None,
        total_cost=cost.total if cost else None,
        currency=currency,
        price=price,
        notes=notes,
        query=query,
    )


def _variants(query: Query, card: Card) -> Iterable[Query]:
    """The method × precision choices worth trying on this card for this job."""
    said = query.said()
    if query.task is Task.INFERENCE:
        precisions = (
            [query.precision] if "precision" in said and query.precision else list(_INFERENCE_PRECISIONS)
        )
        for precision in precisions:
            if precision is Precision.FP8 and "precision" not in said and not card.fp8_tflops:
                continue
            yield query.model_copy(update={"precision": precision, "method": None})
        return
    if query.method is not None and "method" in said:
        methods = [query.method]
    elif query.task is Task.PRETRAIN:
        methods = [Method.FULL]
    else:
        methods = [Method.FULL, Method.LORA, Method.QLORA]
    # Activation recompute is the usual first memory saver on small cards: tried when the user did not say.
    recompute = [query.grad_checkpointing] if "grad_checkpointing" in said else [False, True]
    for method in methods:
        for checkpointing in recompute:
            update: dict[str, Any] = {"method": method, "grad_checkpointing": checkpointing}
            if "precision" not in said:
                update["precision"] = None
            yield query.model_copy(update=update)


def _base(query: Query) -> Query:
    """The asked query with only what the user said (defaults re-derive per variant)."""
    return Query.model_validate(query.said() | {"task": query.task})


def _sort_key(sort: SortKey) -> Callable[[Plan], tuple[float, ...]]:
    def cost_value(plan: Plan) -> float:
        if plan.total_cost is not None:
            return plan.total_cost
        return plan.cost_per_hour if plan.cost_per_hour is not None else float("inf")

    if sort == "speed":
        return lambda p: (-p.speed, cost_value(p), _QUALITY_RANK[p.quality])
    return lambda p: (cost_value(p), _QUALITY_RANK[p.quality], -p.speed)


def _budget_filters(query: Query, max_per_hour: float | None) -> tuple[float | None, float | None]:
    """(per-hour cap, total cap) from the arguments and the budget the user stated."""
    per_hour, total = max_per_hour, None
    if query.budget is not None:
        hourly = query.budget_per_hour
        if hourly is None:
            hourly = query.task is Task.INFERENCE or query.tokens is None
        if hourly and per_hour is None:
            per_hour = query.budget
        elif not hourly:
            total = query.budget
    return per_hour, total


# -- plans ----------------------------------------------------------------------------------------------


def plans(
    query: Query,
    *,
    limit: int = 8,
    max_per_hour: float | None = None,
    sort: SortKey = "cost",
    currency: Currency | None = None,
    cards: Sequence[str] | None = None,
) -> list[Plan]:
    """The plans that fit, one per card × method × precision (its best card count), ranked by cost or speed.

    A named card restricts the search to it; a said card count or precision is kept; a stated budget
    (per hour or total) filters. Cards without a price rank after priced ones when sorting by cost.
    Pure for a given price file, and a search over every card, so results are cached.
    """
    chosen = tuple(cards) if cards is not None else None
    return list(
        _plans(
            query,
            limit=limit,
            max_per_hour=max_per_hour,
            sort=sort,
            currency=currency,
            cards=chosen,
            _book=price_book_in_force(),
        )
    )


@lru_cache(maxsize=4096)
def _plans(
    query: Query,
    *,
    limit: int,
    max_per_hour: float | None,
    sort: SortKey,
    currency: Currency | None,
    cards: tuple[str, ...] | None,
    _book: object,
) -> tuple[Plan, ...]:
    catalog = load_catalog()
    book = _book if isinstance(_book, PriceBook) else None
    money = currency_for(query.currency, None) if currency is None else currency
    per_hour_cap, total_cap = _budget_filters(query, max_per_hour)
    if cards is not None:
        candidates = [catalog.get(c) for c in cards if c in catalog.by_id]
    elif query.card:
        match = catalog.by_id.get(query.card) or (m.card if (m := catalog.resolve(query.card)) else None)
        if match is None:
            raise UnknownCardError(query.card, catalog.closest(query.card))
        candidates = [match]
    else:
        candidates = list(catalog.cards)
    said = query.said()
    if "gpus" in said and query.gpus:
        counts: tuple[int, ...] = (query.gpus,)
    else:
        counts = _PRETRAIN_COUNTS if query.task is Task.PRETRAIN else _COUNTS
    base = _base(query).model_copy(update={"card": None, "card_memory_bytes": None})
    key = _sort_key(sort)
    # Ranked by price per hour (no token count to price a whole run): rank the cheap way first and build
    # full plans (speed, cost) only for the shortlist.
    by_hourly_price = sort == "cost" and query.tokens is None and total_cap is None
    by_hourly_price = by_hourly_price and query.runtime is not Runtime.VLLM
    shortlist: list[tuple[tuple[float, int], Card, Query, int]] = []
    best: dict[tuple[str, str, str], Plan] = {}

    def keep(plan: Plan | None) -> None:
        if plan is None:
            return
        if per_hour_cap is not None and (plan.cost_per_hour is None or plan.cost_per_hour > per_hour_cap):
            return
        if total_cap is not None and (plan.total_cost is None or plan.total_cost > total_cap):
            return
        group = (plan.card, str(plan.method), plan.precision.value)
        if group not in best or key(plan) < key(best[group]):
            best[group] = plan

    for card in candidates:
        for variant in _variants(base, card):
            for count in counts:
                trial = variant.model_copy(update={"gpus": count})
                if need_bytes(trial) > card.memory_bytes:
                    continue  # screened without building the estimate: it cannot fit this card
                if by_hourly_price:
                    price = _price(card.id, money, book)
                    hourly = price.per_hour * count if price else float("inf")
                    shortlist.append(((hourly, _QUALITY_RANK[_quality(trial)]), card, trial, count))
                    break  # more cards of the same kind cost more per hour
                plan = _plan(estimate(trial.model_copy(update={"card": card.id})), card, count, money, book)
                keep(plan)
                if plan is not None and sort == "cost":
                    break  # more cards of the same kind cost more per hour and do not run cheaper
    for _, card, trial, count in heapq.nsmallest(3 * limit, shortlist, key=lambda entry: entry[0]):
        keep(_plan(estimate(trial.model_copy(update={"card": card.id})), card, count, money, book))
    return tuple(sorted(best.values(), key=key)[:limit])


# -- fixes ----------------------------------------------------------------------------------------------

_FIX_ORDER = (
    "grad_checkpointing",
    "adamw_8bit",
    "smaller_batch",
    "fp8",
    "int8",
    "lora",
    "shorter_context",
    "qlora",
    "int4",
    "more_cards",
    "bigger_card",
    "combined",
)
_FIX_QUALITY = {
    "grad_checkpointing": "none",
    "adamw_8bit": "none",
    "smaller_batch": "none",
    "fp8": "slight",
    "int8": "slight",
    "lora": "task_dependent",
    "qlora": "task_dependent",
    "int4": "noticeable",
    "shorter_context": "shorter_inputs",
    "more_cards": "none",
    "bigger_card": "none",
}
_FIX_SPEED = {
    "grad_checkpointing": "recompute",
    "adamw_8bit": "none",
    "smaller_batch": "fewer_tokens_per_step",
    "fp8": "none",
    "int8": "quantized_kernels",
    "int4": "quantized_kernels",
    "lora": "faster",
    "qlora": "dequant",
    "shorter_context": "none",
    "more_cards": "communication",
    "bigger_card": "card_dependent",
}


def _fix_candidates(query: Query, card: Card) -> list[tuple[str, Query]]:
    """Single changes worth trying, each as (kind, changed query)."""
    out: list[tuple[str, Query]] = []
    precision = query.precision or Precision.BF16
    current = terms.BYTES_PER_WEIGHT[precision]
    if query.task is Task.INFERENCE:
        if card.fp8_tflops and current > 1.0:
            out.append(("fp8", query.model_copy(update={"precision": Precision.FP8})))
        if current > 1.0:
            out.append(("int8", query.model_copy(update={"precision": Precision.INT8})))
        if current > terms.BYTES_PER_WEIGHT[Precision.INT4]:
            out.append(("int4", query.model_copy(update={"precision": Precision.INT4})))
    else:
        method = query.method or Method.FULL
        if method is Method.FULL:
            out.append(
                (
                    "lora",
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
                    "qlora",
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
            out.append(("grad_checkpointing", query.model_copy(update={"grad_checkpointing": True})))
        if method is Method.FULL and query.optimizer in (None, Optimizer.ADAMW):
            out.append(("adamw_8bit", query.model_copy(update={"optimizer": Optimizer.ADAMW_8BIT})))
    return out


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
    baseline = estimate(query)
    if not baseline.query.card or baseline.query.card not in catalog.by_id:
        return ()
    card = catalog.get(baseline.query.card)
    count = baseline.query.gpus or 1
    base_verdict = _verdict(baseline, count)
    if base_verdict is None or base_verdict.fits is Fit.FITS:
        return ()
    said = _base(query).model_copy(update={"card": card.id})
    base_speed = _speed_value(baseline, card, count)

    def check(trial: Query, on: Card = card, n: int = count) -> tuple[Estimate, Verdict | None]:
        result = estimate(trial.model_copy(update={"card": on.id, "gpus": n}))
        return result, _verdict(result, n)

    def make(kind: str, trial: Query, changes: list[str], on: Card = card, n: int = count) -> Fix | None:
        result, verdict = check(trial, on, n)
        if verdict is None or verdict.fits is Fit.NO:
            return None
        speed = _speed_value(result, on, n)
        price = _price(on.id, money)
        quality = max((_FIX_QUALITY.get(c, "none") for c in changes), key=lambda q: _QUALITY_RANK.get(q, 1))
        speed_cost = _FIX_SPEED.get(kind, "mixed")
        if kind == "more_cards" and not on.has_nvlink:
            speed_cost = "pcie"
        return Fix(
            kind=kind,
            changes=changes,
            query=result.query,
            card=on.id,
            count=n,
            need_bytes=verdict.need_bytes,
            capacity_bytes=verdict.capacity_bytes,
            saved_bytes=base_verdict.need_bytes - verdict.need_bytes,
            verdict=verdict.fits,
            speed_ratio=round(speed / base_speed, 3) if base_speed else None,
            speed_cost=speed_cost,
            quality_cost=quality,
            nvlink=on.has_nvlink,
            cost_per_hour=round(price.per_hour * n, 4) if price else None,
            currency=money if price else None,
        )

    found: list[Fix] = []
    for kind, trial in _fix_candidates(said, card):
        fix = make(kind, trial, [kind])
        if fix:
            found.append(fix)
    for field, kind, low in (("seq", "shorter_context", 256), ("batch", "smaller_batch", 1)):
        if (getattr(baseline.query, field) or 1) > low:
            shorter = _longest_fitting(
                said.model_copy(update={field: getattr(baseline.query, field)}),
                field,
                low,
                lambda q: check(q)[1],
            )
            if shorter is not None and (fix := make(kind, shorter, [kind])):
                found.append(fix)

    savers = said
    combined: list[str] = []
    if not found:
        ordered = sorted(_fix_candidates(said, card), key=lambda pair: _FIX_ORDER.index(pair[0]))
        for kind, _ in ordered:
            savers = dict(_fix_candidates(savers, card)).get(kind, savers)
            combined.append(kind)
            fix = make("combined", savers, list(combined))
            if fix:
                found.append(fix)
                break
    # More cards shard the model states, not one card's activations: a training job's micro-batch of 1
    # (gradient accumulation keeps the effective batch) often needs far fewer of them.
    micro = None
    if said.task is not Task.INFERENCE and (baseline.query.batch or 1) > 1:
        micro = said.model_copy(update={"batch": 1})
    for n in (2, 4, 8, 16, 32, 64):
        if n > count:
            fix = make("more_cards", said, ["more_cards"], card, n)
            if fix is None and micro is not None:
                fix = make("more_cards", micro, ["more_cards", "smaller_batch"], card, n)
            if fix:
                found.append(fix)
                break
    if not found and combined:
        # Nothing alone fits: every memory saver together, spread over more cards of the named kind.
        for n in (2, 4, 8, 16, 32, 64):
            if n > count and (fix := make("combined", savers, [*combined, "more_cards"], card, n)):
                found.append(fix)
                break
    bigger = _bigger_card(said, card, count, money)
    if bigger is not None and (fix := make("bigger_card", said, ["bigger_card"], bigger, count)):
        found.append(fix)
    return tuple(sorted(found, key=lambda f: _FIX_ORDER.index(f.kind)))


def _bigger_card(query: Query, card: Card, count: int, currency: Currency) -> Card | None:
    """The smallest card with more memory on which the job fits, cheapest first among equals."""
    catalog = load_catalog()
    fitting: list[tuple[float, float, Card]] = []
    for other in catalog.cards:
        if other.memory_bytes <= card.memory_bytes or other.vendor != card.vendor:
            continue
        if query.precision in (None, Precision.BF16) and other.bf16_tflops == 0:
            continue  # the job asks for bf16; an fp16-only card would change the recipe
        result = estimate(query.model_copy(update={"card": other.id, "gpus": count}))
        verdict = _verdict(result, count)
        if verdict is not None and verdict.fits is not Fit.NO:
            price = _price(other.id, currency)
            fitting.append((other.memory_gib, price.per_hour if price else float("inf"), other))
    if not fitting:
        return None
    return min(fitting, key=lambda t: (t[0], t[1]))[2]


# -- scenarios ------------------------------------------------------------------------------------------


def _claim(label: str, query: Query, says_fits: bool) -> ClaimCheck:
    catalog = load_catalog()
    result = estimate(query)
    count = result.query.gpus or 1
    verdict = _verdict(result, count)
    assert verdict is not None and result.query.card
    card = catalog.get(result.query.card)
    decode = training = None
    if result.query.task is Task.INFERENCE:
        decode = inference_speed(result, card, count).decode_tokens_per_s
    else:
        training = training_speed(result, card, count, None).tokens_per_s
    fits = verdict.fits is not Fit.NO
    return ClaimCheck(
        label=label,
        query=result.query,
        model_name=result.model_name,
        card=card.id,
        count=count,
        need_bytes=verdict.need_bytes,
        capacity_bytes=verdict.capacity_bytes,
        verdict=verdict.fits,
        article_says_fits=says_fits,
        holds=fits == says_fits,
        weights_bytes=result.breakdown.weights,
        decode_tokens_per_s=decode,
        max_sequences=result.vllm.max_sequences if result.vllm else None,
        training_tokens_per_s=training,
    )


def _cards_between(low_gib: float, high_gib: float | None = None) -> list[str]:
    return [
        c.id
        for c in load_catalog().cards
        if c.memory_gib >= low_gib and (high_gib is None or c.memory_gib <= high_gib)
    ]


def _cheapest_cards(memory_gib: float, currency: Currency, limit: int = 3) -> list[CardOption]:
    options = [
        CardOption(card=c.id, card_name=c.name, memory_gib=c.memory_gib, price=_price(c.id, currency))
        for c in load_catalog().cards
        if c.memory_gib == memory_gib
    ]
    options.sort(key=lambda o: (o.price is None, o.price.per_hour if o.price else 0.0))
    return options[:limit]


def scenario(name: str, *, currency: Currency = Currency.USD) -> ScenarioAdvice:
    """The article's scenario table, each row tried on concrete jobs (where the rule is loose, the checks
    show it with numbers) and backed by ranked plans."""
    if name == "learning":
        card = "rtx-4090"
        checks = [
            _claim("7b_inference_fp16", Query(model="llama-2-7b", card=card, precision=Precision.FP16), True),
            _claim(
                "13b_inference_fp16", Query(model="llama-2-13b", card=card, precision=Precision.FP16), True
            ),
            _claim(
                "13b_inference_int8", Query(model="llama-2-13b", card=card, precision=Precision.INT8), True
            ),
            _claim(
                "7b_lora",
                Query(
                    task=Task.FINETUNE,
                    method=Method.LORA,
                    model="llama-2-7b",
                    card=card,
                    grad_checkpointing=True,
                ),
                True,
            ),
            _claim(
                "13b_qlora",
                Query(
                    task=Task.FINETUNE,
                    method=Method.QLORA,
                    model="llama-2-13b",
                    card=card,
                    grad_checkpointing=True,
                ),
                True,
            ),
            _claim(
                "7b_full", Query(task=Task.FINETUNE, method=Method.FULL, model="llama-2-7b", card=card), True
            ),
        ]
        found = plans(
            Query(task=Task.FINETUNE, model="qwen2.5-7b", gpus=1),
            limit=5,
            currency=currency,
            cards=_cards_between(24, 24),
        )
        return ScenarioAdvice(
            name=name,
            min_memory_gib=24,
            example_card=card,
            checks=checks,
            plans=found,
            notes=["loose_13b_fp16"] if not checks[1].holds else [],
        )
    if name == "production_inference":
        card = "a100-80gb-sxm"
        checks = [
            _claim(
                "70b_bf16_one_card",
                Query(model="llama-3.1-70b", card=card, runtime=Runtime.VLLM, seq=4096),
                True,
            ),
            _claim(
                "70b_bf16_two_cards",
                Query(model="llama-3.1-70b", card=card, gpus=2, runtime=Runtime.VLLM, seq=4096),
                True,
            ),
            _claim(
                "70b_int4_48gb",
                Query(
                    model="llama-3.1-70b",
                    card="l40s",
                    precision=Precision.INT4,
                    runtime=Runtime.VLLM,
                    seq=4096,
                ),
                True,
            ),
            _claim(
                "32b_bf16_48gb", Query(model="qwen2.5-32b", card="l40s", runtime=Runtime.VLLM, seq=4096), True
            ),
            _claim(
                "8b_bf16_48gb", Query(model="llama-3.1-8b", card="l40s", runtime=Runtime.VLLM, seq=4096), True
            ),
        ]
        found = plans(
            Query(model="qwen2.5-32b", runtime=Runtime.VLLM, seq=4096),
            limit=5,
            currency=currency,
            cards=_cards_between(48),
        )
        notes = ["example_card_exceeds_minimum"]
        if not all(c.holds for c in checks):
            notes.append("large_models_need_more")
        return ScenarioAdvice(
            name=name, min_memory_gib=48, example_card=card, checks=checks, plans=found, notes=notes
        )
    if name == "pretraining":
        card = "h100-sxm"
        checks = [
            _claim(
                "8b_pretrain_8x_h100",
                Query(task=Task.PRETRAIN, model="llama-3.1-8b", card=card, gpus=8),
                True,
            ),
            _claim(
                "8b_pretrain_8x_4090",
                Query(task=Task.PRETRAIN, model="llama-3.1-8b", card="rtx-4090", gpus=8),
                False,
            ),
            _claim(
                "70b_pretrain_8x_h100",
                Query(task=Task.PRETRAIN, model="llama-3.1-70b", card=card, gpus=8, grad_checkpointing=True),
                True,
            ),
            _claim(
                "70b_pretrain_32x_h100",
                Query(task=Task.PRETRAIN, model="llama-3.1-70b", card=card, gpus=32, grad_checkpointing=True),
                True,
            ),
        ]
        found = plans(
            Query(task=Task.PRETRAIN, model="llama-3.1-8b", gpus=8, tokens=1e11),
            limit=5,
            currency=currency,
            cards=_cards_between(80),
        )
        return ScenarioAdvice(
            name=name,
            min_memory_gib=80,
            example_card=card,
            needs_nvlink=True,
            checks=checks,
            plans=found,
            notes=["zero3_pools_memory"],
        )
    if name == "vision":
        return ScenarioAdvice(
            name=name,
            min_memory_gib=24,
            safer_memory_gib=48,
            example_card="rtx-4090",
            cards=_cheapest_cards(24, currency) + _cheapest_cards(48, currency),
            notes=["vision_not_estimated"],
        )
    raise ValueError(f"unknown scenario {name!r}; one of {', '.join(SCENARIOS)}")


# -- the `gpufit plan` command ---------------------------------------------------------------------------


def plan_command(question: str, *, as_json: bool, lang: str | None) -> int:
    """`gpufit plan "<question>"`: the ranked plans for a question in words."""
    from core.parser import parse
    from core.render import html_to_terminal, render_plan

    parsed = parse(question)
    query = parsed.query
    language = lang or getattr(parsed, "lang", None) or "en"
    if query is None or (query.model is None and query.params_b is None):
        print('gpufit: which model? e.g. gpufit plan "Qwen2.5 7B LoRA fine-tune"', file=sys.stderr)
        return 2
    money = currency_for(query.currency, language)
    sort: SortKey = parsed.sort
    try:
        found = plans(query, sort=sort, currency=money)
    except UnknownModelError as err:
        hint = f" Did you mean: {', '.join(err.suggestions)}?" if err.suggestions else ""
        print(f"gpufit: unknown model {err.name!r}.{hint}", file=sys.stderr)
        return 2
    except UnknownCardError as err:
        hint = f" Did you mean: {', '.join(err.suggestions)}?" if err.suggestions else ""
        print(f"gpufit: unknown card {err.name!r}.{hint}", file=sys.stderr)
        return 2
    if as_json:
        payload = {
            "query": query.model_dump(mode="json"),
            "sort": sort,
            "currency": money.value,
            "plans": [plan_json(p) for p in found],
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    print(html_to_terminal(render_plan(found, language, money.value, sort)))
    return 0


def plan_json(plan: Plan) -> dict[str, Any]:
    """One plan for `--json`: the plan's figures, its price's provenance, and the query to re-run."""
    data = plan.model_dump(mode="json", exclude={"price", "query"})
    data["price_source"] = plan.price.owner if plan.price else None
    data["price_provider"] = plan.price.provider if plan.price else None
    data["price_date"] = plan.price.date.isoformat() if plan.price else None
    data["query"] = plan.query.model_dump(mode="json")
    return data
