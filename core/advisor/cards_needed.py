"""How many cards a job needs: the smallest count of one card that holds it, with the parallelism the job
would really use.

Inference across cards is tensor parallel (vLLM, SGLang, TensorRT-LLM): the tensor-parallel size must
divide the model's attention heads, and its KV heads unless it is a multiple of them (vLLM replicates a KV
head over the cards then), so 3 cards that would hold the weights become 4. Training across cards shards
weights, gradients and optimizer states (ZeRO-3 / FSDP full shard), which takes any count. Beyond one
machine, jobs grow in whole nodes of 8 cards: tensor parallel inside a node, pipeline stages across nodes.
Inference is sized under vLLM (its memory budget, its KV pool) unless the query names a runtime; a
multi-card Hugging Face pipeline (layers on one card after another, no head constraint) is used only when
the query asks for the transformers runtime.

Every figure comes from `assess`, the same assessment fit answers show.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.assessment import Assessment, assess
from core.catalog import Card
from core.cost import PriceBook
from core.estimator import Fit, resolve_model, short_of
from core.query import Currency, Query, Task
from core.registry import ModelArch, load_registry
from core.runtimes import load_runtimes
from core.speed import load_speed_constants

Parallelism = Literal["none", "tp", "tp_pp", "pipeline", "zero3"]

NODE_SIZE = 8  # cards in one server (HGX/DGX boards and the usual rented multi-card box)
MAX_NODES = 64  # the search stops here: 512 cards is beyond what anyone asks gpufit about


class CardsNeeded(BaseModel):
    """The smallest count of `card` that runs the job, and how the job is spread over the cards."""

    model_config = ConfigDict(frozen=True)

    card: str
    count: int
    parallelism: Parallelism
    nodes: int
    tensor_parallel: int | None
    # the smallest count that holds the job by memory alone, when the head constraint rounds it up
    memory_count: int | None
    # the smallest count that runs the job with users queued, when `count` is what runs them all at once
    runs_count: int | None = None
    job: Assessment

    @property
    def rounded_for_heads(self) -> bool:
        return self.memory_count is not None and self.memory_count < self.count

    def as_json(self) -> dict[str, object]:
        """The answers' `cards_needed` (issue 10's contract, plus how the count was reached)."""
        return {
            "card": self.card,
            "count": self.count,
            "parallelism": self.parallelism,
            "nodes": self.nodes,
            "tensor_parallel": self.tensor_parallel,
            "memory_count": self.memory_count,
            "runs_count": self.runs_count,
            "queued": _queued(self.job),
            "verdict": self.job.verdict.fits.value if self.job.verdict else None,
        }


def as_served(query: Query) -> Query:
    """Inference over several cards means a tensor-parallel serving engine: the serving default (vLLM)
    unless the query names a runtime (recorded as assumed)."""
    if query.task is not Task.INFERENCE or query.runtime is not None:
        return query
    serving = load_runtimes().serving_default.id
    return query.model_copy(update={"runtime": serving, "defaulted": (*query.defaulted, "runtime")})


def _uses_tensor_parallel(query: Query) -> bool:
    engine = load_runtimes().get(query.runtime) if query.runtime else load_runtimes().serving_default
    return query.task is Task.INFERENCE and load_speed_constants().runtime(engine.speed_terms).tensor_parallel


def _node_tensor_parallel(model: ModelArch) -> int:
    """The tensor-parallel size inside one node of 8 for multi-node jobs: the largest allowed size ≤ 8."""
    return max(size for size in range(1, NODE_SIZE + 1) if model.tensor_parallel_ok(size))


def _layout(query: Query, model: ModelArch, count: int) -> tuple[Parallelism, int | None] | None:
    """How `count` cards would run the job, or None when this count is not a layout the job can use."""
    if count > NODE_SIZE and count % NODE_SIZE:
        return None
    if count == 1:
        return "none", None
    if query.task is not Task.INFERENCE:
        return "zero3", None
    if not _uses_tensor_parallel(query):
        return "pipeline", None
    if count <= NODE_SIZE:
        return ("tp", count) if model.tensor_parallel_ok(count) else None
    return "tp_pp", _node_tensor_parallel(model)


def candidate_counts() -> list[int]:
    """1..8 cards in one node, then whole nodes of 8."""
    return [*range(1, NODE_SIZE + 1), *range(2 * NODE_SIZE, MAX_NODES * NODE_SIZE + 1, NODE_SIZE)]


def floor_shrinks_over_nodes(query: Query) -> bool:
    """Whether the bytes every card holds whatever the card (`short_floor`) can only shrink from one count
    of whole nodes to a larger one, so that the first count of nodes the screen lets through can be found
    by bisection (`_counts_to_try`).

    Over whole nodes (16, 24, … cards) each term of a card's floor is either the same at every count — the
    CUDA context, NCCL and an engine's tensor-parallel buffers, ZeRO-3's gathered parameters and reduce
    bucket, one micro-batch's activations and logits — or a share that shrinks with the count: ZeRO-3 / FSDP
    shards (states ÷ count), tensor-parallel weights (÷ count) and KV heads (⌈heads ÷ count⌉), a sequence
    split over min(said degree, count) cards; the allocator's slack is a share of what is tracked. Nothing
    on a count's layout (which counts of one node tensor parallelism accepts) enters the floor. The one
    exception is RL training: its rollout engine's tensor-parallel size is the largest divisor of the count
    the model's heads allow (core/jobs/rl.py), 6 on 24 cards but 4 on 32 for 12 heads, so its weights per
    card can grow with the count: those jobs are screened count by count. tests/test_cards_needed_pruning.py
    holds the property, and the search's results, against the exhaustive screen over many jobs."""
    return query.algorithm is None


def _counts_to_try(base: Query, card: Card) -> Iterator[int]:
    """The counts `cards_needed` tries, in order: every count of one node, then the counts of whole nodes
    from the first that `short_of` does not rule out. Those before it are all ruled out when the floor only
    shrinks over nodes (floor_shrinks_over_nodes), so it is found by a galloping search: whole nodes probed
    at the 1st, 2nd, 4th, 8th … count until one is not ruled out, then bisection between the last two
    probes. A job that needs two nodes costs the one screen the count-by-count search makes, a job that no
    count holds 7 screens instead of 63 (each a card-free estimate). It runs only when the search gets past
    one node."""
    counts = candidate_counts()
    yield from (count for count in counts if count <= NODE_SIZE)
    nodes = [count for count in counts if count > NODE_SIZE]
    if not floor_shrinks_over_nodes(base):
        yield from nodes
        return

    def ruled_out(index: int) -> bool:
        return short_of(base.model_copy(update={"gpus": nodes[index]}), card, nodes[index])

    low, probe = 0, 0  # every count before `low` is ruled out
    while probe < len(nodes) and ruled_out(probe):
        low, probe = probe + 1, min(2 * probe + 1, len(nodes) - 1) if probe < len(nodes) - 1 else len(nodes)
    high = probe  # nodes[high] is not ruled out (or high is past the last count)
    while low < high:
        middle = (low + high) // 2
        if ruled_out(middle):
            low = middle + 1
        else:
            high = middle
    yield from nodes[low:]


def _queued(job: Assessment) -> int:
    """Requests a serving job leaves waiting in the engine's queue (0 when every one runs at once)."""
    pool = job.estimate.vllm
    return pool.queued_sequences if pool is not None else 0


def cards_needed(
    query: Query,
    card: Card,
    *,
    book: PriceBook | None = None,
    currency: Currency = Currency.USD,
) -> CardsNeeded | None:
    """The smallest count of `card` on which the job runs (fits or tight), or None when even
    MAX_NODES nodes do not hold it. The returned assessment has speed and price for that count.

    Serving several users at once asks for the count whose KV pool runs them all at once; when no count
    within one node does, the smallest count that runs is returned (the engine queues the rest)."""
    base = as_served(query.model_copy(update={"card": card.id, "card_memory_bytes": None, "gpus": None}))
    model = resolve_model(base, load_registry())
    memory_count: int | None = None
    first: CardsNeeded | None = None
    for count in _counts_to_try(base, card):
        trial = base.model_copy(update={"gpus": count})
        if short_of(trial, card, count):
            continue  # too few of the card, known without its estimate
        if not assess(trial, card, count, book=None, currency=currency, speed=False).fits:
            continue
        if memory_count is None:
            memory_count = count
        layout = _layout(base, model, count)
        if layout is None:
            continue
        parallelism, tensor_parallel = layout
        anchor = first.count if first is not None else count
        found = CardsNeeded(
            card=card.id,
            count=count,
            parallelism=parallelism,
            nodes=max(1, -(-count // NODE_SIZE)),
            tensor_parallel=tensor_parallel,
            memory_count=memory_count if memory_count < anchor else None,
            job=assess(trial, card, count, book=book, currency=currency),
        )
        first = first or found
        if _queued(found.job) == 0:
            return found if found is first else found.model_copy(update={"runs_count": first.count})
        if count >= NODE_SIZE:
            break  # more nodes for concurrency alone: serve with replicas instead, the rest wait
    return first


def fits_as_asked(job: Assessment) -> bool:
    """The asked count runs and is a layout the job can use (a tight fit counts as running)."""
    if job.verdict is None or job.verdict.fits is Fit.NO:
        return False
    model = resolve_model(job.query, load_registry())
    return _layout(job.query, model, job.count) is not None
