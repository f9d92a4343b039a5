"""One job on one card × count: memory, verdict, speed, price and cost, composed in one place.

Answers, plans, comparisons, `gpufit estimate` and the checklist's result all read a job through
`assess`, so a figure means the same wherever it is shown, and a price book that cannot be read is
handled once, by whoever loads it (the caller passes the book, or None for no prices).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.catalog import Card, load_catalog
from core.contract import JobTime, speed_json
from core.cost import CardPrice, JobCost, PriceBook, job_cost
from core.data_amount import DataTokens, data_tokens
from core.estimator import Estimate, Fit, Verdict, estimate
from core.jobs.weight_offload import with_weight_streaming
from core.platforms import platform
from core.query import Currency, Query, Task
from core.speed import InferenceSpeed, TrainingSpeed, inference_speed, training_speed


class Assessment(BaseModel):
    """What one job needs and gets on `count` × `card`; speed and cost only where the job fits."""

    model_config = ConfigDict(frozen=True)

    estimate: Estimate
    card: Card | None
    count: int
    verdict: Verdict | None
    inference: InferenceSpeed | None = None
    training: TrainingSpeed | None = None
    price: CardPrice | None = None
    cost: JobCost | None = None
    data: DataTokens | None = None
    data_hours: float | None = None

    @property
    def query(self) -> Query:
        return self.estimate.query

    @property
    def fits(self) -> bool:
        """Runs at all: fits or tight."""
        return self.verdict is not None and self.verdict.fits is not Fit.NO

    @property
    def tokens_per_s(self) -> float | None:
        """Tokens per second the job moves: generated tokens over all sequences, or training tokens."""
        if self.inference is not None:
            return self.inference.aggregate_tokens_per_s
        if self.training is not None:
            return self.training.tokens_per_s
        return None

    @property
    def hours(self) -> float | None:
        """Wall-clock hours to get through the amount of data the question gave: a training run, or a batch
        of inference requests (None without an amount of data)."""
        return self.data_hours

    @property
    def speed(self) -> InferenceSpeed | TrainingSpeed | None:
        """The answers' `speed` (each says its `kind`)."""
        return self.inference if self.inference is not None else self.training

    @property
    def time(self) -> JobTime | None:
        """The answers' `time`: wall-clock hours of the run and the tokens they are for, with how the
        tokens were counted from what the user said (None without an amount of data)."""
        return JobTime.of(self.data, self.hours) if self.data is not None else None

    def time_json(self) -> dict[str, object] | None:
        time = self.time
        return time.as_json() if time is not None else None

    def speed_json(self) -> dict[str, object] | None:
        return speed_json(self.speed)


def verdict_for_count(result: Estimate, count: int) -> Verdict | None:
    """The verdict of `result` for `count` cards, when the estimate has one."""
    for verdict in result.verdicts:
        if verdict.count == count:
            return verdict
    return None


def assess(
    query: Query,
    card: Card | None = None,
    count: int | None = None,
    *,
    book: PriceBook | None,
    currency: Currency,
    speed: bool = True,
    fits_only: bool = True,
    result: Estimate | None = None,
) -> Assessment:
    """The job `query` on `count` × `card` (defaults: the query's own card and count).

    `result` is the estimate when the caller already holds it (a plan search estimates a job once and
    assesses it on several counts). `speed=False` stops at memory and price: a screen of many cards
    only needs to know what fits. `fits_only=False` gives speed even for a job that does not fit
    (`gpufit estimate` shows what the card would do once the memory problem is solved).
    """
    if card is None and query.card:
        card = load_catalog().by_id.get(query.card)
    if result is None:
        update: dict[str, Any] = {}
        if card is not None and query.card != card.id:
            update = {"card": card.id, "card_memory_bytes": None}
        if count is not None and (query.gpus or 1) != count:
            update["gpus"] = count
        result = estimate(query.model_copy(update=update) if update else query)
    count = count or result.query.gpus or 1
    # Each (job, card, count) is assessed once per answer: the fit view, the plan search, the cards-needed
    # search and the fixes ask for the same jobs, and an assessment is a pure function of them.
    shared = card is None or load_catalog().by_id.get(card.id) is card
    key = (result.query, card.id if card else None, count, book, currency, speed, fits_only)
    slot = _slot(key) if shared else []
    if slot:
        return slot[0]
    job = _compose(result, card, count, book=book, currency=currency, speed=speed, fits_only=fits_only)
    slot.append(job)
    return job


@lru_cache(maxsize=8192)
def _slot(
    key: tuple[Query, str | None, int, PriceBook | None, Currency, bool, bool],
) -> list[Assessment]:
    """The place one assessment is kept (a bounded, per-question cache: benchmarks clear it per question)."""
    return []


def _stated_price(
    query: Query, card: Card | None, book: PriceBook | None, currency: Currency
) -> CardPrice | None:
    """The hourly price the question gives for the card it names, in the answer's currency."""
    stated = query.stated_hourly_price
    if stated is None or book is None or card is None or card.id != query.stated_price_card:
        return None
    if query.currency is not None and query.currency is not currency:
        return None
    return book.stated_price(card.id, stated, currency)


def _compose(
    result: Estimate,
    card: Card | None,
    count: int,
    *,
    book: PriceBook | None,
    currency: Currency,
    speed: bool,
    fits_only: bool,
) -> Assessment:
    verdict = verdict_for_count(result, count)
    named = platform(result.query.platform)  # a platform named in the question: its own prices only
    price = _stated_price(result.query, card, book, currency)
    if price is None and book is not None and card is not None:
        price = book.price_for(card.id, currency, named)
    inference = training = None
    data = data_tokens(result.query)
    fits = verdict is not None and verdict.fits is not Fit.NO
    if speed and card is not None and (fits or not fits_only):
        if result.query.task is Task.INFERENCE:
            # weights the engine keeps in host memory cross PCIe in every forward pass (vLLM --cpu-offload-gb)
            inference = with_weight_streaming(inference_speed(result, card, count), result, card, count)
        else:
            training = training_speed(result, card, count, data.tokens if data else None)
    cost = None
    hours = training.training_hours if training is not None else None
    if inference is not None and data is not None:
        # a batch of requests (responses to write, documents to read) at the engine's aggregate rate
        hours = data.tokens / inference.aggregate_tokens_per_s / 3600
        query = result.query
        if data.samples and query.prompt_tokens and inference.ttft_s > 0:
            # their prompts are read at the prefill's rate (compute-bound, batched or not) and only the
            # replies decoded: '10 万条，每条输入 1500 输出 10' is a prefill job
            prompt_rate = max(1, (query.seq or 0) - inference.output_tokens) / inference.ttft_s
            reply_tokens = data.samples * (query.response_tokens or 0) * data.epochs
            prompt_tokens = data.samples * query.prompt_tokens * data.epochs
            hours = (prompt_tokens / prompt_rate + reply_tokens / inference.aggregate_tokens_per_s) / 3600
    if price is not None:
        tokens_per_s = inference.aggregate_tokens_per_s if inference is not None else None
        cost = job_cost(price, count, tokens_per_s=tokens_per_s, hours=hours)
    return Assessment(
        estimate=result,
        card=card,
        count=count,
        verdict=verdict,
        inference=inference,
        training=training,
        price=price,
        cost=cost,
        data=data,
        data_hours=hours,
    )
