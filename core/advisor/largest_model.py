"""The largest model a setup can take: for cards × count and each job, the largest parameter count that
runs, with real models of at most that size that run too.

Sizes are searched with the representative dense shape the estimator uses for a bare size ("13B"): a
modern GQA model of that many parameters. Real models differ in shape (MoE, wide vocabularies, MHA), so
each example is checked with its own estimate, not assumed from its size.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Sequence
from functools import cache, lru_cache

from pydantic import BaseModel, ConfigDict

from core.assessment import assess
from core.catalog import Card, load_catalog
from core.estimator import short_of
from core.estimator.terms import BYTES_PER_WEIGHT
from core.paths import DATA_DIR
from core.query import Currency, Method, Precision, Query, Task
from core.registry import load_registry

# Bounds of the search, billions of parameters: below the smallest model anyone asks about, above the largest.
SMALLEST_B = 0.1
LARGEST_B = 4000.0
EXAMPLES = 3


class LargestJob(BaseModel):
    """One job of the largest-model question: what is done, how, at which precision."""

    model_config = ConfigDict(frozen=True)

    task: Task
    method: Method | None
    precision: Precision


class LargestModel(BaseModel):
    """The largest size that runs one job on `gpus` × `card` (None: not even SMALLEST_B), with examples."""

    model_config = ConfigDict(frozen=True)

    job: LargestJob
    card: str
    gpus: int
    params_b: float | None
    examples: list[str]

    def as_json(self) -> dict[str, object]:
        """One row of the answers' `largest_model` list (issue 10's contract)."""
        return {
            "task": self.job.task.value,
            "method": self.job.method.value if self.job.method else None,
            "precision": self.job.precision.value,
            "gpus": self.gpus,
            "card": self.card,
            "params_b": self.params_b,
            "examples": self.examples,
        }


INFERENCE_JOBS = tuple(
    LargestJob(task=Task.INFERENCE, method=None, precision=p)
    for p in (Precision.BF16, Precision.INT8, Precision.INT4)
)
FINETUNE_JOBS = (
    LargestJob(task=Task.FINETUNE, method=Method.LORA, precision=Precision.BF16),
    LargestJob(task=Task.FINETUNE, method=Method.QLORA, precision=Precision.NF4),
    LargestJob(task=Task.FINETUNE, method=Method.FULL, precision=Precision.BF16),
)
PRETRAIN_JOB = LargestJob(task=Task.PRETRAIN, method=Method.FULL, precision=Precision.BF16)


def jobs_for(query: Query | None) -> tuple[LargestJob, ...]:
    """The jobs to answer for: only the one asked when the question names one, else inference and
    fine-tuning (pretraining only when asked)."""
    if query is None or "task" in query.defaulted:
        if query is not None and query.method is not None:
            return tuple(j for j in FINETUNE_JOBS if j.method is query.method)
        return (*INFERENCE_JOBS, *FINETUNE_JOBS)
    if query.task is Task.PRETRAIN:
        return (PRETRAIN_JOB,)
    if query.task is Task.INFERENCE:
        if query.precision is not None:
            return (LargestJob(task=Task.INFERENCE, method=None, precision=query.precision),)
        return INFERENCE_JOBS
    if query.method is not None:
        chosen = [j for j in FINETUNE_JOBS if j.method is query.method]
        if query.method is Method.FREEZE or not chosen:
            return FINETUNE_JOBS
        if query.precision is not None and query.method is not Method.QLORA:
            return (chosen[0].model_copy(update={"precision": query.precision}),)
        return tuple(chosen)
    return FINETUNE_JOBS


def _job_query(job: LargestJob, base: Query, card: Card, gpus: int) -> Query:
    """The stated details that shape memory (context, batch, runtime, optimizer…) kept; the job replaced."""
    kept = {
        name: value
        for name, value in base.said().items()
        if name in ("seq", "batch", "runtime", "grad_checkpointing", "lora_rank", "optimizer", "zero_stage")
    }
    if job.task is Task.INFERENCE:
        kept = {k: v for k, v in kept.items() if k in ("seq", "batch", "runtime")}
    job_fields: dict[str, object] = {"task": job.task, "method": job.method, "precision": job.precision}
    if job.task is Task.PRETRAIN and "grad_checkpointing" not in kept:
        # pushing the size to the limit of the cards is done with activation recomputation (Megatron-LM's
        # --recompute-activations); stated in the answer
        job_fields["grad_checkpointing"] = True
    return Query.model_validate(kept | job_fields | {"card": card.id, "gpus": gpus})


def _runs(query: Query, card: Card, gpus: int) -> bool:
    if short_of(query, card, gpus):
        return False  # known without the estimate on the card
    return assess(query, card, gpus, book=None, currency=Currency.USD, speed=False).fits


def _round_down(params_b: float) -> float:
    """Two significant figures, rounded down: a size the answer can state without overclaiming."""
    if params_b <= 0:
        return 0.0
    digits = 1 - math.floor(math.log10(params_b))
    return float(round(math.floor(params_b * 10**digits + 1e-9) / 10**digits, max(digits, 0)))


def largest_size(query: Query, card: Card, gpus: int) -> float | None:
    """The largest bare size (billions) that runs: a bisection in log size over the representative shapes,
    whose memory grows with size."""

    def runs(size: float) -> bool:
        return _runs(query.model_copy(update={"params_b": round(size, 3)}), card, gpus)

    if not runs(SMALLEST_B):
        return None
    low, high = SMALLEST_B, LARGEST_B
    if runs(high):
        return high
    while high / low > 1.005:
        middle = math.sqrt(low * high)
        if runs(middle):
            low = middle
        else:
            high = middle
    size = _round_down(low)
    while size > SMALLEST_B and not runs(size):  # a shape switch just below the bound: step down
        size = _round_down(size * 0.97)
    return size


@cache
def preferred_examples() -> tuple[str, ...]:
    """data/example_models.toml: registry ids in the order answers prefer them as examples."""
    with open(DATA_DIR / "example_models.toml", "rb") as handle:
        ids = tomllib.load(handle)["preferred"]
    registry = load_registry()
    return tuple(i for i in ids if i in registry.by_id)


def examples_for(query: Query, card: Card, gpus: int, params_b: float, limit: int = EXAMPLES) -> list[str]:
    """Real models of at most `params_b` that run this job themselves, in the data file's order (largest
    class first, popular first within a class), one per family before a second of the same family."""
    registry = load_registry()
    fitting = []
    wanted = query.precision or Precision.BF16
    for model_id in preferred_examples():
        model = registry.get(model_id)
        if model.total_params / 1e9 > params_b * 1.005:
            continue
        native = Precision(model.native_precision) if model.native_precision else None
        if native is not None and BYTES_PER_WEIGHT[native] < BYTES_PER_WEIGHT[wanted]:
            continue  # released quantized (gpt-oss, DeepSeek-V3): not an example of a bf16 job
        if _runs(query.model_copy(update={"params_b": None, "model": model_id}), card, gpus):
            fitting.append(model)
        if len(fitting) >= 4 * limit:
            break
    chosen: list[str] = []
    families: set[str] = set()
    for model in fitting:
        if model.family not in families:
            chosen.append(model.id)
            families.add(model.family)
    for model in fitting:
        if model.id not in chosen:
            chosen.append(model.id)
    return chosen[:limit]


def on_card(job: LargestJob, card: Card) -> LargestJob:
    """A bf16 job on a card without bf16 (V100, T4) runs in fp16: same bytes, the precision it really uses."""
    if job.precision is Precision.BF16 and card.bf16_tflops == 0:
        return job.model_copy(update={"precision": Precision.FP16})
    return job


def largest_sizes(card: Card, gpus: int, jobs: Sequence[LargestJob]) -> list[tuple[LargestJob, float | None]]:
    """Per job, the largest size that runs (no examples): the card sheet's figures, the same search as
    `largest_models` so that a card's sheet and the largest-model answer never disagree.

    A pure function of the catalog's card, the count and the jobs (no question's details enter it), so it
    is remembered: a card's sheet is four bisections of ~14 estimates each, the costliest answer a card
    question gets, and the same for everyone who asks about that card."""
    if load_catalog().by_id.get(card.id) is not card:  # a card not from the catalog: worked out each time
        return _largest_sizes(card, gpus, tuple(jobs))
    return list(_catalog_largest_sizes(card.id, gpus, tuple(jobs)))


@lru_cache(maxsize=256)
def _catalog_largest_sizes(
    card_id: str, gpus: int, jobs: tuple[LargestJob, ...]
) -> tuple[tuple[LargestJob, float | None], ...]:
    return tuple(_largest_sizes(load_catalog().get(card_id), gpus, jobs))


def _largest_sizes(
    card: Card, gpus: int, jobs: tuple[LargestJob, ...]
) -> list[tuple[LargestJob, float | None]]:
    found: list[tuple[LargestJob, float | None]] = []
    for job in (on_card(j, card) for j in jobs):
        found.append((job, largest_size(_job_query(job, Query(), card, gpus), card, gpus)))
    return found


def largest_models(
    card: Card, gpus: int, jobs: Sequence[LargestJob], base: Query | None = None
) -> list[LargestModel]:
    """Per job, the largest size that runs on `gpus` × `card`, with examples."""
    rows: list[LargestModel] = []
    for job in (on_card(j, card) for j in jobs):
        query = _job_query(job, base or Query(), card, gpus)
        size = largest_size(query, card, gpus)
        examples = examples_for(query, card, gpus, size) if size is not None else []
        rows.append(LargestModel(job=job, card=card.id, gpus=gpus, params_b=size, examples=examples))
    return rows
