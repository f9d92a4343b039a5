"""Sizing serving from traffic (issue 19): requests per second or day, prompt and response lengths and latency
targets become the concurrency the engine must hold (Little's law: in flight = arrival rate × time in the
system), the context each sequence needs (prompt + response), and the aggregate tokens/s that supports it.

The concurrency then sizes the KV pool and the card count like users asked for directly ("for 50 users"),
so the answer's serving figures (pool, batch, what queues) hold for the traffic. What the question does not
say is assumed and stated: 1,000 prompt and 300 response tokens, a first token within 0.5 s.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from core.assessment import assess
from core.catalog import Card, load_catalog
from core.cost import PriceBook
from core.estimator import estimate
from core.jobs.constants import load_job_constants
from core.query import Currency, Query, Task
from core.runtimes import load_runtimes
from core.speed import inference_speed

DEFAULT_PROMPT_TOKENS = 1000
DEFAULT_RESPONSE_TOKENS = 300
DEFAULT_TTFT_S = 0.5
# A stream's decode speed when no card is named yet: a loaded vLLM replica of a mid-size model (NVIDIA NIM's
# Llama-3.3-70B TP2 at concurrency 25: ITL 38.8 ms ≈ 26 tok/s; Llama-3.1-8B at 100: 7.6 ms ≈ 130 tok/s).
UNKNOWN_CARD_TOKENS_PER_S = 30.0


class Traffic(BaseModel):
    """The traffic asked about and the concurrency it means."""

    model_config = ConfigDict(frozen=True)

    requests_per_s: float | None
    requests_per_day: float | None
    prompt_tokens: int | None  # said, or assumed when the other length was said
    response_tokens: int | None
    concurrent: int  # sequences in flight at once (said, or from the arrival rate)
    concurrent_said: bool
    ttft_ms: float | None  # the target asked for
    user_tokens_per_s: float | None  # the per-user decode speed asked for
    stream_tokens_per_s: float | None  # the decode speed per stream the concurrency was worked out with
    output_tokens_per_s: float | None  # the aggregate generation the traffic needs (rate × response)
    assumed: tuple[str, ...]  # "prompt_tokens", "response_tokens", "ttft"
    # traffic given per day is sized for its busy hours: the rate there (the day's average × peak_factor,
    # data/jobs.toml [traffic]); None when the rate was said per second, minute or hour
    peak_requests_per_s: float | None = None
    peak_factor: float | None = None
    peak_share_of_requests: float | None = None
    peak_share_of_day: float | None = None
    # a headcount said ("50 users"): the people, and the share of them assumed at once ([traffic])
    users: int | None = None
    active_share: float | None = None


def has_traffic(query: Query) -> bool:
    return query.task is Task.INFERENCE and (
        query.requests_per_s is not None
        or query.prompt_tokens is not None
        or query.response_tokens is not None
    )


def _stream_speed(query: Query, batch: int) -> float:
    """Decode tokens/s of one stream with `batch` in flight, on the card named (its count), else a default."""
    card = load_catalog().by_id.get(query.card or "")
    if card is None or not (query.model or query.params_b):
        return UNKNOWN_CARD_TOKENS_PER_S
    engine = query.runtime or load_runtimes().serving_default.id
    job = query.model_copy(update={"batch": batch, "runtime": engine})
    try:
        result = estimate(job)
        speed = inference_speed(result, card, query.gpus or 1)
    except (ValueError, KeyError):
        return UNKNOWN_CARD_TOKENS_PER_S
    return max(speed.decode_tokens_per_s, 1.0)


def apply_traffic(query: Query) -> tuple[Query, Traffic | None]:
    """The query sized for its traffic (batch = the concurrency, seq = prompt + response when a length is
    given, served by vLLM), and the traffic; the query unchanged and None when it states neither traffic nor
    users. Lengths and latency the question leaves out are assumed only where the sizing needs them."""
    users_said = query.batch is not None and "batch" not in query.defaulted
    headcount = query.users if query.task is Task.INFERENCE and "users" not in query.defaulted else None
    if (
        not has_traffic(query)
        and not (users_said and query.task is Task.INFERENCE and (query.batch or 1) > 1)
        and (headcount is None or headcount <= 1)
    ):
        return query, None
    if query.has_data_amount and query.requests_per_s is None and not users_said and headcount is None:
        # a batch of requests to run ('给 10 万条回答打分，每条输入 1500 输出 10'): no traffic to size, the
        # engine runs what its KV pool holds at once; each request's lengths set the context
        if query.seq is None or "seq" in query.defaulted:
            lengths = (
                query.prompt_tokens or DEFAULT_PROMPT_TOKENS,
                query.response_tokens or DEFAULT_RESPONSE_TOKENS,
            )
            seq = sum(lengths)
            defaulted = tuple(k for k in query.defaulted if k != "seq")
            query = query.model_copy(update={"seq": seq, "defaulted": defaulted})
        return query, None
    assumed: list[str] = []
    lengths_said = query.prompt_tokens is not None or query.response_tokens is not None
    average = query.requests_per_s
    rate = average
    busy = load_job_constants().traffic
    peak = bool(query.traffic_per_day) and rate is not None and not users_said
    if peak and rate is not None:
        # a day's traffic is sized for its busy hours, not spread over 24 h (the 80/20 rule, stated)
        rate *= busy.peak_factor
    response = query.response_tokens or DEFAULT_RESPONSE_TOKENS
    if query.response_tokens is None and (lengths_said or rate is not None):
        assumed.append("response_tokens")
    prompt = query.prompt_tokens
    if prompt is None and lengths_said:
        prompt = DEFAULT_PROMPT_TOKENS
        assumed.append("prompt_tokens")
    ttft_s = (query.ttft_ms / 1000) if query.ttft_ms else DEFAULT_TTFT_S
    if query.ttft_ms is None and rate is not None:
        assumed.append("ttft")
    concurrent = query.batch or 1
    share: float | None = None
    if headcount is not None and not users_said and rate is None:
        # people, not sequences: the share of them using it at once (assumed, stated)
        share = busy.active_share
        concurrent = max(1, math.ceil(headcount * share))
    stream: float | None = None
    if not users_said and rate is not None:
        # Little's law, twice: the per-stream speed depends on how many streams share the card
        concurrent = max(1, math.ceil(rate * (ttft_s + response / UNKNOWN_CARD_TOKENS_PER_S)))
        for _ in range(2):
            stream = _stream_speed(query, concurrent)
            concurrent = max(1, math.ceil(rate * (ttft_s + response / stream)))
    engine = query.runtime or load_runtimes().serving_default.id
    updates: dict[str, object] = {"batch": concurrent, "runtime": engine}
    if lengths_said and (query.seq is None or "seq" in query.defaulted):
        updates["seq"] = (prompt or DEFAULT_PROMPT_TOKENS) + response
    # the concurrency is the traffic's (stated); the context and the engine are assumptions
    derived = [k for k in updates if k != "batch" and k not in query.said()]
    defaulted = tuple(k for k in dict.fromkeys((*query.defaulted, *derived)) if k != "batch")
    sized = query.model_copy(update=updates | {"defaulted": defaulted})
    return sized, Traffic(
        requests_per_s=round(average, 4) if average is not None else None,
        requests_per_day=round(average * 86_400) if average is not None else None,
        prompt_tokens=prompt,
        response_tokens=query.response_tokens or (response if "response_tokens" in assumed else None),
        concurrent=concurrent,
        concurrent_said=users_said,
        ttft_ms=query.ttft_ms,
        user_tokens_per_s=query.user_tokens_per_s,
        stream_tokens_per_s=round(stream, 1) if stream is not None else None,
        output_tokens_per_s=round(rate * response, 1) if rate is not None else None,
        assumed=tuple(assumed),
        peak_requests_per_s=round(rate, 4) if peak and rate is not None else None,
        peak_factor=busy.peak_factor if peak else None,
        peak_share_of_requests=busy.peak_share_of_requests if peak else None,
        peak_share_of_day=busy.peak_share_of_day if peak else None,
        users=headcount,
        active_share=share,
    )


class Replicas(BaseModel):
    """The traffic served by copies of one setup side by side: `count` cards each, `replicas` of them."""

    model_config = ConfigDict(frozen=True)

    count: int  # cards per copy (tensor parallel)
    replicas: int
    per_replica_sequences: int  # what one copy's KV pool holds at once
    aggregate_tokens_per_s: float  # generation of all copies together
    # a copy that cannot keep up with its share at its share of the concurrency queues until it runs this
    # many at once (its throughput then covers the share), each stream at `loaded_stream_tokens_per_s`
    loaded_sequences: int | None = None
    loaded_stream_tokens_per_s: float | None = None

    @property
    def total(self) -> int:
        return self.count * self.replicas


def size_replicas(
    query: Query, card: Card, base_count: int, traffic: Traffic, *, book: PriceBook | None, currency: Currency
) -> Replicas | None:
    """The fewest cards that hold every concurrent sequence and keep up with the traffic's generation:
    copies of `base_count`, 2×, 4× … (up to one 8-card node) cards, whichever needs fewest cards in all."""
    best: Replicas | None = None
    count = base_count
    while count <= 8:
        job = assess(query, card, count, book=book, currency=currency)
        pool = job.estimate.vllm
        if job.fits and job.inference is not None and pool is not None and pool.concurrent_sequences > 0:
            held = pool.concurrent_sequences
            replicas = max(1, math.ceil(traffic.concurrent / held))
            aggregate = job.inference.aggregate_tokens_per_s
            loaded: tuple[int, float] | None = None
            if traffic.output_tokens_per_s:

                def generated(batch: int, n: int = count) -> float:
                    """A copy's tokens/s with `batch` sequences at once (what its pool runs of them)."""
                    at = assess(
                        query.model_copy(update={"batch": batch}), card, n, book=book, currency=currency
                    )
                    return at.inference.aggregate_tokens_per_s if at.inference is not None else 0.0

                # What one copy keeps up with: a copy behind on its share queues requests until it runs as
                # many at once as its KV pool holds (at most max_num_seqs), generating at that batch, not at
                # the concurrency the traffic would have on one copy running freely.
                full = max(pool.max_sequences, held)
                most = max(aggregate, generated(full)) if full > held else aggregate
                replicas = max(replicas, math.ceil(traffic.output_tokens_per_s / max(most, 1e-9)))
                share = traffic.output_tokens_per_s / replicas
                own = max(1, math.ceil(traffic.concurrent / replicas))  # each copy's share of the sequences
                aggregate = generated(own) if own != traffic.concurrent else aggregate
                if aggregate < share and full > own:
                    low, high = own, full  # the fewest at once whose generation covers the share
                    while high - low > 1:
                        mid = (low + high) // 2
                        low, high = (low, mid) if generated(mid) >= share else (mid, high)
                    aggregate = generated(high)
                    loaded = (high, aggregate / high)
                aggregate *= replicas
            else:
                aggregate *= replicas
            option = Replicas(
                count=count,
                replicas=replicas,
                per_replica_sequences=held,
                aggregate_tokens_per_s=round(aggregate, 1),
                loaded_sequences=loaded[0] if loaded else None,
                loaded_stream_tokens_per_s=round(loaded[1], 1) if loaded else None,
            )
            if best is None or option.total < best.total:
                best = option
        count *= 2
    return best
