"""The parallel layout a multi-node pretraining job runs in, chosen once and read by memory and speed.

A cluster pretraining answer runs as such clusters pretrain: Megatron-LM / NeMo's 3D parallelism (tensor
parallel inside each NVLink node, pipeline stages and data-parallel replicas across the nodes), not ZeRO-3
flat over every card across the network. `pretraining_layout` decides it; core/estimator/memory.py puts it in
the job (`Query.tensor_parallel`, `pipeline_parallel`, `data_parallel`) before sizing the memory, and
core/speed/training.py reads the same fields back (`layout_of`), so the memory and the time of one answer
always assume the same layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from core.catalog import Card
from core.query import Method, Query, Task
from core.registry import ModelArch

if TYPE_CHECKING:
    from core.speed.constants import SpeedConstants

LAYOUT_FIELDS = ("tensor_parallel", "pipeline_parallel", "data_parallel")


class TrainingLayout(BaseModel):
    """How a cluster pretraining answer splits the job over its cards: Megatron-LM / NeMo's 3D parallelism,
    tensor parallel inside each node, pipeline stages and data-parallel replicas across the nodes
    (pretraining_layout)."""

    model_config = ConfigDict(frozen=True)

    framework: str = "megatron"
    tensor_parallel: int
    pipeline_parallel: int
    data_parallel: int

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
    return TrainingLayout(tensor_parallel=tp, pipeline_parallel=pp, data_parallel=dp)


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
    t = c.training
    params = float(model.total_params)
    budget = t.layout_states_share * card.memory_bytes

    def fits(tp: int, pp: int) -> bool:
        shards = tp * pp
        replicas = gpus // shards
        per_card = params * (
            t.layout_replicated_bytes_per_param / shards
            + t.layout_sharded_bytes_per_param / (shards * replicas)
        )
        return per_card <= budget

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
