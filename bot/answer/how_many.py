"""How many cards: the count as the headline, then why (memory per card, the parallelism, nodes), and the
verdict for the count the user asked about."""

from __future__ import annotations

from typing import Any

from bot.answer.buttons import button
from bot.answer.clarify import unknown_model_answer
from bot.answer.common import answer_currency, card_or_none, model_label, pack
from bot.answer.market import cluster_facts, platform_facts, traffic_facts
from bot.answer.model import Answer, Lang
from bot.charts import adapter as charts
from core.advisor.card_advice import usual_cards
from core.advisor.cards_needed import MAX_NODES, NODE_SIZE, CardsNeeded
from core.advisor.cluster import cluster_for
from core.advisor.needed import asked_count, needed_for
from core.advisor.traffic import apply_traffic, size_replicas
from core.assessment import Assessment
from core.catalog import Card
from core.cost import price_book_in_force
from core.estimator import UnknownModelError, estimate, resolve_model
from core.jobs.facts import JobFacts, job_facts
from core.query import Currency, Query, Task
from core.registry import load_registry
from core.report import serving_json


def _heads(query: Query) -> dict[str, int]:
    model = resolve_model(query, load_registry())
    return {"heads": model.heads, "kv_heads": model.n_kv_heads, "mla": int(model.is_mla)}


def _row(needed: CardsNeeded | None, card: Card) -> dict[str, Any]:
    return {"card": card, "needed": needed, "job": needed.job if needed else None}


def _variants(filled: Query) -> list[str]:
    """Buttons that ask the same question for a lighter job: another precision, another method."""
    if filled.task is Task.INFERENCE:
        return [f"precision={p}" for p in ("bf16", "int8", "int4") if p != filled.precision]
    if filled.task is Task.FINETUNE:
        return [f"method={m}" for m in ("full", "lora", "qlora") if m != filled.method]
    return []


def _jobs_of(job: Assessment | None) -> JobFacts | None:
    """The runtime, RL layout and launch line of the count that runs (core/jobs/facts.py)."""
    if job is None or job.card is None:
        return None
    return job_facts(job.estimate, job.card, job.count, job.verdict.fits if job.verdict else None)


def _job_facts(facts: JobFacts | None) -> dict[str, Any]:
    """The JSON of those facts (the same keys as a fit answer's)."""
    if facts is None:
        return {}
    return {
        "runtime": facts.runtime,
        "rl": facts.rl.model_dump(mode="json") if facts.rl else None,
        "launch": facts.launch.model_dump(mode="json") if facts.launch else None,
    }


def cards_needed_answer(query: Query, lang: Lang) -> Answer:
    """'要几张 L20' / 'how many H100s': the smallest count that runs the job, on the card named or, with
    none named, on each of the usual cards for the job."""
    currency = answer_currency(query, lang)
    query, traffic = apply_traffic(query)
    try:
        est = estimate(query.model_copy(update={"kind": None, "sort": None}))
    except UnknownModelError as err:
        return unknown_model_answer(lang, err.name, err.suggestions, query)
    named = card_or_none(query.card)
    cards = [named] if named is not None else usual_cards(est.query.task)
    rows = [_row(needed_for(query, card, Currency(currency)), card) for card in cards]
    main = rows[0]
    asked = asked_count(query, main["card"], Currency(currency))
    needed: CardsNeeded | None = main["needed"]
    job = needed.job if needed else None
    view = {
        "model_name": model_label(est, lang),
        "q": job.query if job else est.query,
        "card": main["card"],
        "named": named is not None,
        "needed": needed,
        "rows": rows,
        "asked": asked,
        "asked_stated": "gpus" in query.said(),
        "heads": _heads(est.query),
        "speed": job.speed_json() if job else None,
        "time": job.time_json() if job else None,
        "cost": job.cost if job else None,
        "currency": currency,
        "max_count": MAX_NODES * NODE_SIZE,
    }
    replicas = None
    if traffic is not None and job is not None and needed is not None:
        replicas = size_replicas(
            query,
            main["card"],
            needed.count,
            traffic,
            book=price_book_in_force(),
            currency=Currency(currency),
        )
    cluster = None
    if job is not None and needed is not None:
        cluster = cluster_for(
            query, main["card"], job, book=price_book_in_force(), currency=Currency(currency)
        )
    jobs = _jobs_of(job)
    view |= {"traffic": traffic, "replicas": replicas, "cluster": cluster, "jobs": jobs}
    counted = needed.as_json() if needed else None
    if counted is not None and replicas is not None:
        # every concurrent sequence held and the generation kept up with: copies of a setup side by side
        assert traffic is not None
        counted |= {
            "count": replicas.total,
            "replicas": replicas.replicas,
            "per_replica": replicas.count,
            "tensor_parallel": replicas.count if replicas.count > 1 else None,
            "nodes": -(-replicas.total // NODE_SIZE),
            "queued": max(0, traffic.concurrent - replicas.replicas * replicas.per_replica_sequences),
        }
    facts: dict[str, Any] = {
        "model_name": est.model_name,
        "cards_needed": counted,
        "traffic": traffic_facts(traffic),
        "cluster": cluster_facts(cluster),
        "platform": platform_facts(query, main["card"].id),
        "verdict": asked.verdict.fits.value if asked is not None and asked.verdict else None,
        "options": [
            r["needed"].as_json() if r["needed"] else {"card": r["card"].id, "count": None} for r in rows
        ],
        "speed": view["speed"],
        "time": view["time"],
        "serving": serving_json(job.estimate, job) if job else None,
        "cost": job.cost.model_dump(mode="json") if job and job.cost else None,
    } | _job_facts(jobs)
    buttons = [[button(lang, action) for action in _variants(est.query)]]
    return pack(
        "cards_needed",
        lang,
        "cards_needed",
        {"v": view},
        query=query,
        filled=job.query if job else est.query,
        buttons=buttons,
        facts=facts,
        chart=charts.cards_needed_chart(
            [(r["card"].name, r["needed"]) for r in rows],
            model_name=view["model_name"],
            query=view["q"],
            max_count=view["max_count"],
        ),
    )
