"""Big training jobs as a cluster (issue 19): cards × nodes, wall time, GPU-hours and cost, on the count the
question gave ("两台机器每台8张H100" = 16 cards) or, when none was given and one card would take more than a
month, the smallest cluster of 8-card nodes that finishes within one. A time the question sets ("一周内训完",
"done within 24 hours", "in 60 days": `Query.deadline_hours`) replaces the month: the count asked when it
finishes by then, else the smallest count that does (powers of two up to a node, then whole 8-card nodes).

The link between cards is an assumption stated with the figures: NVLink inside a node and InfiniBand between
nodes for data-centre cards (the MFU in data/speed.toml is measured on such clusters); PCIe and Ethernet for
consumer cards, where the collectives of a sharded job can outlast the compute (core/speed.py slows the step
to the link) and are the main risk.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.assessment import Assessment, assess
from core.catalog import Card
from core.cost import PriceBook
from core.layout import TrainingLayout
from core.query import Currency, Query, Task
from core.speed.constants import load_speed_constants

GPUS_PER_NODE = 8
MONTH_HOURS = 720.0  # a job longer than this on the count asked is answered as a cluster
MAX_GPUS = 4096

Interconnect = Literal["nvlink", "pcie"]


class Cluster(BaseModel):
    model_config = ConfigDict(frozen=True)

    card: str
    gpus: int
    nodes: int
    gpus_per_node: int
    hours: float | None  # None: the question gives no data amount (a fit on the cluster named, no time)
    gpu_hours: float | None
    cost: float | None
    currency: Currency | None
    interconnect: Interconnect  # inside a node; between nodes InfiniBand (NVLink cards) or Ethernet (PCIe)
    between_nodes: Literal["infiniband", "ethernet", "none"]  # the question's network, else the card's kind
    network_gbit_s: float | None = None  # plain Ethernet the question names: a node's link in Gb/s
    network_speed_said: bool = False  # that speed is the question's (else data/speed.toml's assumption)
    network_said: bool = False  # the network between nodes is the question's, echoed as said, not assumed
    asked: bool  # the count is the one the question gave
    fits: bool
    # the 3D layout the time assumes (a pretraining cluster: tensor parallel inside each node, pipeline and
    # data parallel across them); None: ZeRO-3 / FSDP over all the cards
    layout: TrainingLayout | None = None
    deadline_hours: float | None = None  # the time the question set the run to finish within
    meets_deadline: bool | None = None  # whether these cards finish by then (None: no deadline, or no time)


def _cluster(
    job: Assessment,
    card: Card,
    asked: bool,
    nodes_said: int | None,
    network: Literal["infiniband", "ethernet"] | None = None,
    *,
    timed: bool = True,
) -> Cluster | None:
    hours = job.training.training_hours if job.training is not None else None
    if timed and hours is None:
        return None
    gpus = job.count
    nodes = nodes_said or max(1, math.ceil(gpus / GPUS_PER_NODE))
    per_node = math.ceil(gpus / nodes)
    cost = job.cost.per_hour * hours if job.cost is not None and hours is not None else None
    link: Interconnect = "nvlink" if card.has_nvlink else "pcie"
    deadline = job.query.deadline_hours
    said_gbit = job.query.network_gbit_s if network == "ethernet" else None
    gbit = said_gbit or (load_speed_constants().link.ethernet_node_gbit_s if network == "ethernet" else None)
    return Cluster(
        card=card.id,
        gpus=gpus,
        nodes=nodes,
        gpus_per_node=per_node,
        hours=round(hours, 2) if hours is not None else None,
        gpu_hours=round(hours * gpus, 1) if hours is not None else None,
        cost=round(cost, 2) if cost is not None else None,
        currency=job.cost.currency if job.cost is not None else None,
        interconnect=link,
        between_nodes="none" if nodes == 1 else network or ("infiniband" if card.has_nvlink else "ethernet"),
        network_gbit_s=gbit if nodes > 1 else None,
        network_speed_said=said_gbit is not None,
        network_said=network is not None and nodes > 1,
        asked=asked,
        fits=job.fits,
        layout=job.training.layout if job.training is not None else None,
        deadline_hours=deadline,
        meets_deadline=hours <= deadline if deadline is not None and hours is not None else None,
    )


def _hours(job: Assessment) -> float:
    """The job's wall time where it fits, else infinity (a count that does not fit finishes nothing)."""
    if not job.fits or job.training is None or job.training.training_hours is None:
        return math.inf
    return job.training.training_hours


def _by_deadline(
    query: Query, card: Card, start: int, deadline: float, *, book: PriceBook | None, currency: Currency
) -> Cluster | None:
    """The smallest count from `start` up that fits and finishes within `deadline` hours: powers of two up to
    one node, then whole 8-card nodes (doubled until one finishes, then halved back between the two). The
    largest tried when none does (the answer says it misses)."""

    def run(gpus: int) -> Assessment:
        return assess(query.model_copy(update={"gpus": gpus}), card, gpus, book=book, currency=currency)

    gpus = max(1, start)
    last_short = 0
    while True:
        job = run(gpus)
        if _hours(job) <= deadline:
            break
        if gpus * 2 > MAX_GPUS:
            return _cluster(job, card, False, None, query.network)
        last_short = gpus
        # the next power of two up to a node (3 → 4 → 8), then twice the whole nodes (8 → 16 → 32)
        nodes = -(-gpus // GPUS_PER_NODE)
        gpus = 1 << gpus.bit_length() if gpus < GPUS_PER_NODE else nodes * 2 * GPUS_PER_NODE
    # between the last count that missed and the first that finishes, in whole nodes past one node
    low, high = last_short // GPUS_PER_NODE, gpus // GPUS_PER_NODE
    while gpus > GPUS_PER_NODE and high - low > 1:
        middle = (low + high) // 2
        tried = run(middle * GPUS_PER_NODE)
        if _hours(tried) <= deadline:
            high, job, gpus = middle, tried, middle * GPUS_PER_NODE
        else:
            low = middle
    return _cluster(job, card, False, None, query.network)


def cluster_for(
    query: Query, card: Card, job: Assessment, *, book: PriceBook | None, currency: Currency
) -> Cluster | None:
    """The cluster a training job with its data runs on: the count asked when it is more than one node or
    names nodes, else — when the job on the count it was answered for takes over a month — the smallest
    power-of-two number of 8-card nodes that finishes within a month. Without a data amount, the cluster the
    question names ('4台机器 每台4张4090 万兆网'), untimed, so the answer says the nodes and the network
    between them it assumed. None for a job that is no cluster."""
    if query.task is Task.INFERENCE:
        return None
    asked = "gpus" not in query.defaulted and query.gpus is not None
    if not query.has_data_amount:
        if asked and (job.count > GPUS_PER_NODE or (query.nodes or 0) > 1):
            return _cluster(job, card, True, query.nodes, query.network, timed=False)
        return None
    deadline = query.deadline_hours
    if deadline is not None:
        if _hours(job) <= deadline:
            return _cluster(job, card, asked, query.nodes, query.network)
        # the count asked misses the time set: the smallest that makes it (from the count it was answered for)
        return _by_deadline(query, card, job.count, deadline, book=book, currency=currency)
    if asked:
        # the count asked is kept: a cluster when it is more than one node or names nodes
        if job.count <= GPUS_PER_NODE and not query.nodes:
            return None
        return _cluster(job, card, True, query.nodes, query.network)
    hours = job.training.training_hours if job.training is not None and job.fits else None
    if hours is not None and hours <= MONTH_HOURS:
        return None
    gpus = GPUS_PER_NODE
    while True:
        bigger = assess(query.model_copy(update={"gpus": gpus}), card, gpus, book=book, currency=currency)
        done = bigger.training is not None and (bigger.training.training_hours or math.inf) <= MONTH_HOURS
        if (done and bigger.fits) or gpus * 2 > MAX_GPUS:
            return _cluster(bigger, card, False, None, query.network)
        gpus *= 2
