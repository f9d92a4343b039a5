"""The cards-needed search as answers ask it: on the count the user asked about, and the smallest count when
that one does not run the job (fit answers, 'how many cards' answers)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.advisor.card_advice import usual_cards
from core.advisor.cards_needed import (
    MAX_NODES,
    NODE_SIZE,
    CardsNeeded,
    as_served,
    cards_needed,
    fits_as_asked,
)
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


# A card is a poor choice for a job when it needs more than one machine of it, what every card holds
# whatever the count (activations, logits, ZeRO buffers, a colocated engine's copy, the runtime) takes at
# least POOR_FLOOR_SHARE of each card, and the cards it takes hold at least POOR_MEMORY_RATIO times the memory
# of the usual card that needs the least: each added card brings little room for the shards, so the count
# balloons.
POOR_FLOOR_SHARE = 0.5
POOR_MEMORY_RATIO = 2.0


def per_card_floor_bytes(query: Query, card: Card) -> int:
    """The bytes one card holds however many cards share the job: the job's per-card need at the search's
    largest count, where the sharded states have shrunk to almost nothing."""
    most = MAX_NODES * NODE_SIZE
    on_card = as_served(
        query.model_copy(
            update={"kind": None, "sort": None, "card": card.id, "card_memory_bytes": None, "gpus": most}
        )
    )
    return estimate(on_card).breakdown.total


@dataclass(frozen=True, slots=True)
class NeededOption:
    """The smallest count of one card for the job (None: no count within the search's limit runs it), the
    bytes each card holds whatever the count, and whether that makes the card a poor choice for the job."""

    card: Card
    needed: CardsNeeded | None
    floor_bytes: int = 0
    poor_choice: bool = False

    @property
    def job(self) -> Assessment | None:
        return self.needed.job if self.needed is not None else None

    @property
    def floor_share(self) -> float:
        return self.floor_bytes / self.card.memory_bytes

    @property
    def bought_bytes(self) -> float:
        """The memory of the cards the job takes (infinite when no count within the limit runs it)."""
        return self.needed.count * self.card.memory_bytes if self.needed else float("inf")

    @property
    def may_be_poor(self) -> bool:
        """More than one machine of this card, most of each card spent on what every card holds."""
        many = self.needed is None or self.needed.count > NODE_SIZE
        return many and self.floor_share >= POOR_FLOOR_SHARE

    def as_json(self) -> dict[str, object]:
        counted = self.needed.as_json() if self.needed else {"card": self.card.id, "count": None}
        return counted | {"per_card_floor_bytes": self.floor_bytes, "poor_choice": self.poor_choice}


def needed_option(query: Query, card: Card, currency: Currency) -> NeededOption:
    return NeededOption(
        card=card,
        needed=needed_for(query, card, currency),
        floor_bytes=per_card_floor_bytes(query, card),
    )


def judged(options: list[NeededOption], against: list[NeededOption]) -> list[NeededOption]:
    """`options` with poor_choice set, judged against the usual cards' options `against`."""
    least = min((o.bought_bytes for o in against), default=float("inf"))
    return [
        replace(o, poor_choice=o.may_be_poor and o.bought_bytes >= POOR_MEMORY_RATIO * least) for o in options
    ]


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
    better: NeededOption | None = None  # when the first card is a poor choice: a usual card that suits it

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
        counted = self.main.as_json()
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
    options = [needed_option(query, card, currency) for card in cards]
    better = None
    if named is None:
        options = judged(options, options)
    elif options[0].may_be_poor:
        # a card named that may suit the job badly: judged against the usual cards, the best of them offered
        usual = [
            needed_option(query, card, currency) for card in usual_cards(est.query.task) if card != named
        ]
        options = judged(options, [*options, *usual])
        if options[0].poor_choice:
            better = min(usual, key=lambda o: o.bought_bytes)
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
        better=better,
    )


__all__ = [
    "CardsNeededAdvice",
    "NeededOption",
    "advise_cards_needed",
    "asked_count",
    "judged",
    "needed_for",
    "needed_option",
    "needed_when_short",
    "per_card_floor_bytes",
]
