"""The parallel layout a multi-node pretraining job runs in, chosen once and read by memory and speed.

A cluster pretraining answer runs as such clusters pretrain: Megatron-LM / NeMo's 3D parallelism (tensor
parallel inside each NVLink node, pipeline stages and data-parallel replicas across the nodes), not ZeRO-3
flat over every card across the network. `pretraining_layout` decides it; core/estimator/memory.py puts it in
the job (`Query.tensor_parallel`, `pipeline_parallel`, `data_parallel`) before sizing the memory, and
core/speed/training.py reads the same fields back (`layout_of`), so the memory and the time of one answer
always assume the same layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.catalog import Card
from core.query import Method, Query, Task
from core.registry import ModelArch

if TYPE_CHECKING:
    from core.speed.constants import SpeedConstants

LAYOUT_FIELDS = ("tensor_parallel", "pipeline_parallel", "data_parallel")
NODE_GPUS = 8  # cards in one NVLink node (data/speed.toml [link] gpus_per_node)

LayoutReason = Literal["cards", "node", "heads", "method", "layers"]


class LayoutProblem(BaseModel):
    """Why a layout the question named cannot run as asked (the answer says so, in its words, and which
    layout its figures are for instead): t·p·d is not the card count, tensor parallelism wider than one
    NVLink node, a width that does not divide the attention heads (Megatron and vLLM refuse to start), more
    pipeline stages than layers, or a LoRA / QLoRA job (a named Megatron layout sizes full training only)."""

    model_config = ConfigDict(frozen=True)

    reason: LayoutReason
    tensor_parallel: int
    pipeline_parallel: int
    data_parallel: int | None = None
    cards: int
    node: int = NODE_GPUS
    heads: int = 0
    layers: int = 0


class TrainingLayout(BaseModel):
    """How a cluster pretraining answer splits the job over its cards: Megatron-LM / NeMo's 3D parallelism,
    tensor parallel inside each node, pipeline stages and data-parallel replicas across the nodes
    (pretraining_layout)."""

    model_config = ConfigDict(frozen=True)

    framework: str = "megatron"
    tensor_parallel: int
    pipeline_parallel: int
    data_parallel: int
    # the question named it ('TP8 PP4'); kept out of the JSON dump (answer.layout says it as `said`)
    said: bool = Field(default=False, exclude=True)

    @property
    def cards(self) -> int:
        return self.tensor_parallel * self.pipeline_parallel * self.data_parallel


def layout_of(query: Query, gpus: int | None = None) -> TrainingLayout | None:
    """The layout a job carries (chosen by `pretraining_layout`, or named by the user), when it covers the
    `gpus` cards it runs on; None: ZeRO-3 / FSDP over all the cards."""
    if query.tensor_parallel is None or query.task is Task.INFERENCE:
        return None
    tp = query.tensor_parallel
    pp = query.pipeline_parallel or 1
    count = gpus or query.gpus or 1
    dp = query.data_parallel or max(1, count // (tp * pp))
    if tp * pp * dp != count:
        return None
    return TrainingLayout(
        tensor_parallel=tp, pipeline_parallel=pp, data_parallel=dp, said=names_layout(query)
    )


def names_layout(query: Query) -> bool:
    """The question named a tensor / pipeline / data-parallel size itself ('TP8 PP4', '张量并行8')."""
    return any(getattr(query, f) is not None and f not in query.defaulted for f in LAYOUT_FIELDS)


def named_cards(query: Query) -> int | None:
    """The cards a named layout spans when the question gave no count: t·p·d (1 for what it left out)."""
    if not names_layout(query) or ("gpus" not in query.defaulted and query.gpus is not None):
        return None
    tp, pp, dp = (getattr(query, f) or 1 for f in LAYOUT_FIELDS)
    return tp * pp * (dp if query.task is not Task.INFERENCE else 1)


def resolve_named(query: Query, model: ModelArch) -> tuple[Query, LayoutProblem | None]:
    """The job with the layout its question named, completed (pipeline 1 and data parallel over the rest of
    the cards when unsaid), or — when it cannot run — without it, and the reason. Serving: the engine's
    tensor x pipeline sizes span the cards (no data parallelism inside one engine)."""
    tp = query.tensor_parallel or 1
    pp = query.pipeline_parallel or 1
    cards = query.gpus or 1
    training = query.task is not Task.INFERENCE
    dp_said = query.data_parallel if "data_parallel" not in query.defaulted else None
    dp = dp_said if dp_said is not None and training else None
    layers = model.decoder_layers or model.layers
    reason: LayoutReason | None = None
    if (
        tp * pp * (dp or 1) > cards
        or cards % (tp * pp)
        or (dp is not None and tp * pp * dp != cards)
        or (not training and tp * pp != cards)
    ):
        reason = "cards"
    elif tp > NODE_GPUS:
        reason = "node"
    elif not model.tensor_parallel_ok(tp):
        reason = "heads"
    elif pp > layers:
        reason = "layers"
    elif training and (query.method or Method.FULL) is not Method.FULL and (tp > 1 or pp > 1):
        reason = "method"
    cleared = dict.fromkeys(LAYOUT_FIELDS)
    if training and query.algorithm is not None:
        return query.model_copy(update=cleared), None  # RL: an engine flag's -tp sizes the rollout (gpus)
    if reason is not None:
        problem = LayoutProblem(
            reason=reason,
            tensor_parallel=tp,
            pipeline_parallel=pp,
            data_parallel=dp_said,
            cards=cards,
            heads=model.heads,
            layers=layers,
        )
        return query.model_copy(update=cleared), problem
    if not training:
        return query.model_copy(update={"tensor_parallel": tp, "pipeline_parallel": pp}), None
    if (query.method or Method.FULL) is not Method.FULL:
        return query.model_copy(update=cleared), None  # a data-parallel-only LoRA: ZeRO / DDP as before
    filled = [f for f in LAYOUT_FIELDS if getattr(query, f) is None and f not in query.defaulted]
    defaulted = tuple(query.defaulted) + tuple(filled)
    update: dict[str, object] = {
        "tensor_parallel": tp,
        "pipeline_parallel": pp,
        "data_parallel": cards // (tp * pp),
        "defaulted": defaulted,
    }
    return query.model_copy(update=update), None


def may_choose_layout(query: Query, gpus: int) -> bool:
    """Whether some card could give this job a chosen 3D layout (`pretraining_layout`): what a screen of
    cards by a card-free floor must not prune on (the floor is ZeRO-3's, the card's layout may hold less)."""
    return (
        query.task is Task.PRETRAIN
        and (query.method or Method.FULL) is Method.FULL
        and gpus > NODE_GPUS
        and query.zero_stage is None
        and query.offload is None
    )


def with_layout(query: Query, layout: TrainingLayout | None) -> Query:
    """The job with `layout` in its fields (marked as assumed), or unchanged without one."""
    if layout is None:
        return query
    defaulted = tuple(query.defaulted) + tuple(f for f in LAYOUT_FIELDS if f not in query.defaulted)
    return query.model_copy(
        update={
            "tensor_parallel": layout.tensor_parallel,
            "pipeline_parallel": layout.pipeline_parallel,
            "data_parallel": layout.data_parallel,
            "defaulted": defaulted,
        }
    )


def pretraining_layout(
    query: Query, model: ModelArch, card: Card, gpus: int, c: SpeedConstants
) -> TrainingLayout | None:
    """The layout a cluster pretraining job runs in: Megatron-LM / NeMo's 3D parallelism, as real teams
    pretrain on several 8-card NVLink nodes, not ZeRO-3 flat over every card across the network. Tensor
    parallelism first, up to the node's cards (over NVLink), then pipeline stages across the nodes, data
    parallelism over the rest (Narayanan et al. 2021, Takeaways #1-#2): the smallest tensor width, then the
    fewest stages, whose states fit (Megatron's distributed optimizer: 6 bytes a parameter on each
    data-parallel rank, 12 sharded over them; data/speed.toml layout_*). None, and ZeRO-3 / FSDP over all
    the cards as before, for a fine-tune, LoRA, one node, cards without NVLink, a question that names a
    trainer, a ZeRO stage or an offload, or a model no layout holds."""
    node = c.link.gpus_per_node
    named = (
        ("zero_stage" not in query.defaulted)
        or (query.runtime is not None and "runtime" not in query.defaulted)
        or query.offload is not None
        or bool(query.offload_activations)
        or query.sequence_parallel is not None
    )
    if (
        query.task is not Task.PRETRAIN
        or (query.method or Method.FULL) is not Method.FULL
        or gpus <= node
        or not card.has_nvlink
        or named
    ):
        return None
    from core.estimator import terms  # core.estimator imports this module

    t = c.training
    params = float(model.total_params)
    budget = t.layout_states_share * card.memory_bytes

    def fits(tp: int, pp: int) -> bool:
        states = terms.megatron_state_bytes(
            params,
            tp,
            pp,
            gpus // (tp * pp),
            replicated_bytes_per_param=t.layout_replicated_bytes_per_param,
            sharded_bytes_per_param=t.layout_sharded_bytes_per_param,
        )
        return sum(states) <= budget

    widths = [w for w in (1, 2, 4, 8) if w <= node and model.tensor_parallel_ok(w) and gpus % w == 0]
    layers = model.decoder_layers or model.layers
    for tp in widths:
        if fits(tp, 1):
            return TrainingLayout(tensor_parallel=tp, pipeline_parallel=1, data_parallel=gpus // tp)
    if not widths:
        return None
    tp = widths[-1]
    pp = 2
    while pp <= layers and gpus % (tp * pp) == 0:
        if fits(tp, pp):
            return TrainingLayout(tensor_parallel=tp, pipeline_parallel=pp, data_parallel=gpus // (tp * pp))
        pp *= 2
    return None
