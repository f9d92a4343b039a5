"""The same job on several cards, side by side, and which card wins on speed and on cost.

A comparison is only useful as a decision, so each card gets the count it needs (the count the user said,
else the smallest of one node that runs the job), the speed and cost of the job on it, and a winner per
measure. Figures within a few percent are a tie, and a tie has no winner: two cards with the same
bandwidth decode at the same speed, whatever their names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from core.advisor.traffic import apply_traffic
from core.assessment import Assessment, assess
from core.catalog import Card
from core.cost import PriceBook
from core.query import Currency, Query, Task

NODE_COUNTS = (1, 2, 4, 8)
TIE = 0.03  # relative difference under which two figures are the same


class CompareRow(BaseModel):
    """One card in the comparison: the job on `count` of it."""

    model_config = ConfigDict(frozen=True)

    card: str
    count: int
    fits: bool
    tokens_per_s: float | None
    hours: float | None
    cost: float | None
    cost_basis: str | None  # "total" for a run, else "per_million_tokens" (trained or generated); "per_hour"
    # only when no speed is known
    assessment: Assessment
    # a KV-pool engine's sequences at once on this setup when the comparison holds fewer on every card
    # (`Comparison.concurrency`): what it could serve beyond the job compared
    holds: int | None = None


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    cards: list[str]
    rows: list[CompareRow]
    speed_winner: str | None
    cost_winner: str | None
    # serving with no number of users said: the sequences at once every card runs (the fewest any card's KV
    # pool holds), so each card is measured on the same job; None where the job already fixes it
    concurrency: int | None = None


def _count_that_runs(
    query: Query, card: Card, book: PriceBook | None, currency: Currency, count: int | None
) -> Assessment:
    if count is not None:
        return assess(query, card, count, book=book, currency=currency)
    if query.gpus is not None and "gpus" not in query.defaulted:
        return assess(query, card, query.gpus, book=book, currency=currency)
    job = assess(query, card, 1, book=book, currency=currency)
    for more in NODE_COUNTS[1:]:
        if job.fits:
            break
        job = assess(query, card, more, book=book, currency=currency)
    return job


def _row(job: Assessment) -> CompareRow:
    assert job.card is not None
    speed = None
    if job.inference is not None:
        serving = job.estimate.vllm is not None and job.inference.batch > 1
        speed = job.inference.aggregate_tokens_per_s if serving else job.inference.decode_tokens_per_s
    elif job.training is not None:
        speed = job.training.tokens_per_s
    value, basis = _job_cost(job)
    return CompareRow(
        card=job.card.id,
        count=job.count,
        fits=job.fits,
        tokens_per_s=speed,
        hours=job.hours,
        cost=value if job.fits else None,
        cost_basis=basis if job.fits else None,
        assessment=job,
    )


def _job_cost(job: Assessment) -> tuple[float | None, str | None]:
    """What the whole job costs on this setup: the run's total when the data amount is known, else the cost
    per million tokens (trained, or generated at the engine's aggregate rate). Never the hourly price alone:
    a card twice as fast at 1.8× the price is the cheaper one (issue 19)."""
    cost = job.cost
    if cost is None:
        return None, None
    if cost.total is not None:
        return cost.total, "total"
    if job.query.task is Task.INFERENCE:
        if cost.per_million_tokens is not None:
            return cost.per_million_tokens, "per_million_tokens"
        return cost.per_hour, "per_hour"
    if job.training is not None and job.training.tokens_per_s > 0:
        return round(cost.per_hour / (job.training.tokens_per_s * 3600) * 1e6, 4), "per_million_tokens"
    return cost.per_hour, "per_hour"


def _winner(rows: Sequence[CompareRow], value: Callable[[CompareRow], float | None], best: str) -> str | None:
    """The card with the best figure, or None when no card has one or the best two tie."""
    scored = [(v, row.card) for row in rows if row.fits and (v := value(row)) is not None]
    if not scored:
        return None
    scored.sort(reverse=best == "max")
    if len(scored) > 1 and abs(scored[0][0] - scored[1][0]) <= TIE * max(abs(scored[0][0]), 1e-9):
        return None
    return scored[0][1]


def compare_cards(
    query: Query,
    cards: Sequence[Card],
    *,
    book: PriceBook | None,
    currency: Currency,
    counts: Mapping[str, int] | None = None,
) -> Comparison:
    """The job `query` on each of `cards` (on the count given for a card, when the question gave one), with
    the speed and cost winners (None on a tie)."""
    counts = counts or {}
    if query.users is not None and (query.batch is None or "batch" in query.defaulted):
        # a headcount ("to 30 users"): the share of them at once is the job every card serves (stated)
        query, _ = apply_traffic(query)
    rows = [_row(_count_that_runs(query, card, book, currency, counts.get(card.id))) for card in cards]
    held = _common_concurrency(query, rows)
    if held is not None:
        # the same job on every card: each serves `held` sequences at once, on the count that runs it
        same = query.model_copy(
            update={"batch": held, "defaulted": tuple(k for k in query.defaulted if k != "batch")}
        )
        rows = [
            _row(assess(same, row.assessment.card, row.count, book=book, currency=currency)).model_copy(
                update={"holds": _held(row)}
            )
            if row.fits and row.assessment.card is not None
            else row
            for row in rows
        ]
    bases = {row.cost_basis for row in rows if row.cost_basis}
    return Comparison(
        cards=[card.id for card in cards],
        rows=rows,
        speed_winner=_winner(rows, lambda r: r.tokens_per_s, "max"),
        # costs compare only on one basis (a run's total with a run's total)
        cost_winner=_winner(rows, lambda r: r.cost, "min") if len(bases) == 1 else None,
        concurrency=held,
    )


def _held(row: CompareRow) -> int | None:
    pool = row.assessment.estimate.vllm
    return pool.concurrent_sequences if pool is not None else None


def _common_concurrency(query: Query, rows: Sequence[CompareRow]) -> int | None:
    """The sequences at once to compare serving at when the question says no number of users: a KV-pool
    engine on each card runs as many as its pool holds, which differs by card (12 of a 70B on 2 × A100 80GB,
    47 on 2 × H20), and tokens/s at different loads is not the same job. The fewest any fitting card holds
    is what every card runs; None when the users were said or every card already runs the same number."""
    if query.task is not Task.INFERENCE or (query.batch is not None and "batch" not in query.defaulted):
        return None
    batches = [
        row.assessment.inference.batch
        for row in rows
        if row.fits and row.assessment.inference is not None and row.assessment.estimate.vllm is not None
    ]
    if len(batches) < 2 or len(set(batches)) == 1:
        return None
    return max(1, min(batches))


def tied_leader(cards: Sequence[Card], value: Callable[[Card], float], best: str = "max") -> Card | None:
    """The card that leads on a spec, or None when the best two are equal (within TIE)."""
    ranked = sorted(cards, key=value, reverse=best == "max")
    if not ranked:
        return None
    if len(ranked) > 1 and abs(value(ranked[0]) - value(ranked[1])) <= TIE * max(abs(value(ranked[0])), 1e-9):
        return None
    return ranked[0]
