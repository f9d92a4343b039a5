"""How many cards: the count as the headline, then why (memory per card, the parallelism, nodes), and the
verdict for the count the user asked about. The search is core's (core/advisor/needed.py)."""

from __future__ import annotations

from bot.answer.buttons import button
from bot.answer.clarify import unknown_model_answer
from bot.answer.common import answer_currency, model_label, pack
from bot.answer.market import cluster_facts, platform_facts, traffic_facts
from bot.answer.model import Answer, Lang
from bot.answer.views import CardsNeededView, Heads
from bot.charts import adapter as charts
from core.advisor.cards_needed import MAX_NODES, NODE_SIZE
from core.advisor.fit_advice import card_named
from core.advisor.needed import advise_cards_needed
from core.contract import speed_json
from core.estimator import UnknownModelError, resolve_model
from core.jobs.facts import JobFacts
from core.query import Currency, Query, Task
from core.registry import load_registry
from core.report import serving_json


def _heads(query: Query) -> Heads:
    model = resolve_model(query, load_registry())
    return Heads(heads=model.heads, kv_heads=model.n_kv_heads, mla=model.is_mla)


def _variants(filled: Query) -> list[str]:
    """Buttons that ask the same question for a lighter job: another precision, another method."""
    if filled.task is Task.INFERENCE:
        return [f"precision={p}" for p in ("bf16", "int8", "int4") if p != filled.precision]
    if filled.task is Task.FINETUNE:
        return [f"method={m}" for m in ("full", "lora", "qlora") if m != filled.method]
    return []


def _job_facts(facts: JobFacts | None) -> dict[str, object]:
    """The JSON of those facts (the same keys as a fit answer's)."""
    if facts is None:
        return {}
    shown: dict[str, object] = {
        "runtime": facts.runtime,
        "rl": facts.rl.model_dump(mode="json") if facts.rl else None,
        "launch": facts.launch.model_dump(mode="json") if facts.launch else None,
    }
    if facts.context_rule is not None:
        shown["context_rule"] = facts.context_rule.model_dump(mode="json")
    return shown


def cards_needed_answer(query: Query, lang: Lang) -> Answer:
    """'要几张 L20' / 'how many H100s': the smallest count that runs the job, on the card named or, with
    none named, on each of the usual cards for the job."""
    currency = answer_currency(query, lang)
    named = card_named(query.card)
    try:
        advice = advise_cards_needed(query, named, Currency(currency))
    except UnknownModelError as err:
        return unknown_model_answer(lang, err.name, err.suggestions, query)
    est, main, job = advice.estimate, advice.main, advice.job
    view = CardsNeededView(
        model_name=model_label(est, lang),
        q=job.query if job else est.query,
        card=main.card,
        named=named is not None,
        needed=main.needed,
        rows=advice.options,
        asked=advice.asked,
        asked_stated="gpus" in advice.stated.said(),
        heads=_heads(est.query),
        speed=job.speed if job else None,
        time=job.time if job else None,
        cost=job.cost if job else None,
        currency=currency,
        max_count=MAX_NODES * NODE_SIZE,
        traffic=advice.traffic,
        replicas=advice.replicas,
        cluster=advice.cluster,
        jobs=advice.jobs,
        better=advice.better,
    )
    asked = advice.asked
    facts: dict[str, object] = {
        "model_name": est.model_name,
        "cards_needed": advice.cards_needed_json(),
        "traffic": traffic_facts(advice.traffic),
        "cluster": cluster_facts(advice.cluster),
        "platform": platform_facts(advice.stated, main.card.id),
        "verdict": asked.verdict.fits.value if asked.verdict else None,
        "options": [r.as_json() for r in advice.options],
        "better": advice.better.as_json() if advice.better else None,
        "speed": speed_json(view.speed),
        "time": view.time.as_json() if view.time else None,
        "serving": serving_json(job.estimate, job) if job else None,
        "cost": job.cost.model_dump(mode="json") if job and job.cost else None,
    } | _job_facts(advice.jobs)
    buttons = [[button(lang, action) for action in _variants(est.query)]]
    return pack(
        "cards_needed",
        lang,
        "cards_needed",
        view,
        query=advice.stated,
        filled=view.q,
        buttons=buttons,
        facts=facts,
        chart=charts.cards_needed_chart(
            [(r.card.name, r.needed) for r in advice.options],
            model_name=view.model_name,
            query=view.q,
            max_count=view.max_count,
        ),
    )
