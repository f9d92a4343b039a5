"""The VRAM tables trainers publish by model size (LLaMA-Factory's README, Unsloth's requirements page), read
for a fine-tune as the table would: the nearest size's figure for the method, scaled by the model's
parameters. They state no context length or batch, so they count about the weights and a margin; an answer
shows them beside its exact figure, with what it counts on top, so "the table says 24 GB" and "26.5 GiB"
can be told apart (data/jobs.toml [size_tables])."""

from __future__ import annotations

import tomllib
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from core.paths import DATA_DIR
from core.query import Method, Precision, Query, Task

GB = 10**9


class SizeTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    sizes_b: list[float]
    full_amp: list[float] | None = None
    full_pure_bf16: list[float] | None = None
    lora: list[float] | None = None
    qlora_8: list[float] | None = None
    qlora_4: list[float] | None = None
    source: str


class TableFigure(BaseModel):
    """One table's figure for the job: the row read, its figure, and the figure scaled to the model."""

    model_config = ConfigDict(frozen=True)

    table: str
    name: str
    row: str
    size_b: float
    row_bytes: int
    scaled_bytes: int
    source: str


@lru_cache(maxsize=1)
def size_tables() -> dict[str, SizeTable]:
    with (DATA_DIR / "jobs.toml").open("rb") as handle:
        raw = tomllib.load(handle).get("size_tables", {})
    return {key: SizeTable.model_validate(value) for key, value in raw.items()}


def _row(query: Query) -> str | None:
    """The table row of the job's method (None: the tables have none)."""
    method = query.method or Method.FULL
    if method is Method.FULL:
        return "full_amp" if query.master_weights is not False else "full_pure_bf16"
    if method in (Method.LORA, Method.FREEZE):
        return "lora"
    if method is Method.QLORA:
        return "qlora_8" if query.precision is Precision.INT8 else "qlora_4"
    return None


def table_figures(query: Query, params: int) -> list[TableFigure]:
    """Each table's figure for a fine-tune of a `params`-parameter model (preference / RL jobs, pretraining
    and inference are not what the tables list)."""
    if query.task is not Task.FINETUNE or query.algorithm is not None:
        return []
    row = _row(query)
    if row is None:
        return []
    size = params / 1e9
    out: list[TableFigure] = []
    for key, table in size_tables().items():
        values = getattr(table, row)
        if values is None:
            continue
        index = min(range(len(table.sizes_b)), key=lambda i: abs(table.sizes_b[i] - size))
        figure = values[index] * GB
        out.append(
            TableFigure(
                table=key,
                name=table.name,
                row=row,
                size_b=table.sizes_b[index],
                row_bytes=int(figure),
                scaled_bytes=int(figure * size / table.sizes_b[index]),
                source=table.source,
            )
        )
    return out
