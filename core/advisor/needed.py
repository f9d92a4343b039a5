"""The cards-needed search as answers ask it: on the count the user asked about, and the smallest count when
that one does not run the job (fit answers, 'how many cards' answers)."""

from __future__ import annotations

from dataclasses import dataclass

from core.advisor.card_advice import usual_cards
from core.advisor.cards_needed import NODE_SIZE, CardsNeeded, as_served, cards_needed, fits_as_asked
from core.advisor.cluster import Cluster, cluster_for
from core.advisor.traffic import Replicas, Traffic, apply_traffic, size_replicas
from core.assessment import Assessment, assess
from core.catalog import Card
from core.cost import price_book_in_force
from core.estimator import Estimate, estimate
from core.jobs.facts import JobFacts, job_facts
from core.query import Currency, Query


def needed_for(query: Query, card: Card, currency: Currency) -> CardsNeeded | None:
    """The smallest count of `card` for the job, priced in the answer's currency."""
    stripped = query.model_copy(update={"kind": None, "sort": None})
    return cards_needed(stripped, card, book=price_book_in_force(), currency=currency)


def asked_count(query: Query, card: Card, currency: Currency) -> Assessment:
    """The job on the count the user asked about (one card when they named none), sized as the search
    sizes it, so its verdict and the search's count never disagree."""
    stripped = as_served(
        query.model_copy(update={"kind": None, "sort": None, "card": card.id, "card_memory_bytes": None})
    )
    count = stripped.gpus or 1
    return assess(stripped, card, count, book=None, currency=currency, speed=False)


def needed_when_short(stated: Query, card: Card, currency: Currency) -> CardsNeeded | None:
    """The smallest count of `card` for a job whose asked count does not run it (None when it does). Sized
    from what the user stated, so unsaid details get this search's defaults (inference over several cards
    under a tensor-parallel engine)."""
    if fits_as_asked(asked_count(stated, card, currency)):
        return None
    on_card = stated.model_copy(update={"card": card.id, "card_memory_bytes": None})
    return needed_for(on_card, card, currency)


@dataclass(frozen=True, slots=True)
class NeededOption:
    """The smallest count of one card for the job (None: no count within the search's limit runs it)."""

    card: Card
    needed: CardsNeeded | None

    @property
    def job(self) -> Assessment | None:
        return self.needed.job if self.needed is not None else None


@dataclass(frozen=True, slots=True)
class CardsNeededAdvice:
    """'要几张 L20' / 'how many H100s': the count per card (the card named, else the usual cards for the job),
    the job on the count asked, and for the first card its replicas for the traffic, cluster and job facts."""

    stated: Query  # the question sized for its traffic
    estimate: Estimate
    named: Card | None
    options: list[NeededOption]
    asked: Assessment  # the job on the count the user asked about, on the first card
    traffic: Traffic | None
    replicas: Replicas | None
    cluster: Cluster | None
    jobs: JobFacts | None

    @property
    def main(self) -> NeededOption:
        return self.options[0]

    @property
    def job(self) -> Assessment | None:
        """The job on the count that runs it, on the first card."""
        return self.main.job

    def cards_needed_json(self) -> dict[str, object] | None:
        """The answer's `cards_needed`: the count, or — for traffic — copies of the setup side by side, each
        holding its share of the concurrent sequences and keeping up with the generation."""
        needed = self.main.needed
        if needed is None:
            return None
        counted = needed.as_json()
        replicas, traffic = self.replicas, self.traffic
        if replicas is None or traffic is None:
            return counted
        return counted | {
            "count": replicas.total,
            "replicas": replicas.replicas,
            "per_replica": replicas.count,
            "tensor_parallel": replicas.count if replicas.count > 1 else None,
            "nodes": -(-replicas.total // NODE_SIZE),
            "queued": max(0, traffic.concurrent - replicas.replicas * replicas.per_replica_sequences),
        }


def advise_cards_needed(query: Query, named: Card | None, currency: Currency) -> CardsNeededAdvice:
    """The counts for `query` on the card named (else the usual cards for its task), priced in
    `currency`. Raises UnknownModelError for a model the registry lacks."""
    query, traffic = apply_traffic(query)
    est = estimate(query.model_copy(update={"kind": None, "sort": None}))
    cards = [named] if named is not None else usual_cards(est.query.task)
    options = [NeededOption(card=card, needed=needed_for(query, card, currency)) for card in cards]
    main = options[0]
    asked = asked_count(query, main.card, currency)
    needed, job = main.needed, main.job
    book = price_book_in_force()
    replicas = None
    if traffic is not None and needed is not None:
        replicas = size_replicas(query, main.card, needed.count, traffic, book=book, currency=currency)
    cluster = cluster_for(query, main.card, job, book=book, currency=currency) if job is not None else None
    jobs = None
    if job is not None and job.card is not None:
        # the runtime, RL layout and launch line of the count that runs (core/jobs/facts.py)
        jobs = job_facts(job.estimate, job.card, job.count, job.verdict.fits if job.verdict else None)
    return CardsNeededAdvice(
        stated=query,
        estimate=est,
        named=named,
        options=options,
        asked=asked,
        traffic=traffic,
        replicas=replicas,
        cluster=cluster,
        jobs=jobs,
    )


__all__ = [
    "CardsNeededAdvice",
    "NeededOption",
    "advise_cards_needed",
    "asked_count",
    "needed_for",
    "needed_when_short",
]
