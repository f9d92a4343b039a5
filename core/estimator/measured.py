"""The peaks PyTorch really allocated (data/measured/memory.csv, from tools/measure_memory.py).

The estimator is tested against these and the calibration is fitted to them.
"""

from __future__ import annotations

import csv
from functools import cache

from pydantic import BaseModel, ConfigDict

from core.paths import DATA_DIR
from core.query import Algorithm, Method, Precision, Query, Runtime, Task

_FULL: dict[str, object] = {"task": Task.FINETUNE, "method": Method.FULL, "master_weights": True}
_LORA: dict[str, object] = {"task": Task.FINETUNE, "method": Method.LORA, "lora_targets": "all-linear"}
# GRPO's update step alone: the rollout engine is not part of the measured step (it runs on other cards)
_GRPO: dict[str, object] = {"algorithm": Algorithm.GRPO, "rollout": "separate"}
_RECIPES: dict[str, dict[str, object]] = {
    "inference": {"task": Task.INFERENCE, "runtime": Runtime.TRANSFORMERS},
    "full": _FULL,
    "full-bf16": {"task": Task.FINETUNE, "method": Method.FULL, "master_weights": False},
    "lora": _LORA,
    "full-chunked": _FULL | {"chunked_loss": True},
    "dpo-full": _FULL | {"algorithm": Algorithm.DPO},
    "dpo-lora": _LORA | {"algorithm": Algorithm.DPO},
    "grpo-full": _FULL | _GRPO,
    "grpo-lora": _LORA | _GRPO,
}


class MeasuredCase(BaseModel):
    model_config = ConfigDict(frozen=True)

    case_id: str
    recipe: str
    query: Query
    peak_bytes: int


def _query(row: dict[str, str]) -> Query:
    fields = dict(_RECIPES[row["recipe"]])
    fields.update(
        model=row["model"],
        precision=Precision.BF16,
        batch=int(row["batch"]),
        seq=int(row["seq"]),
        gpus=1,
    )
    if fields["task"] is not Task.INFERENCE:
        fields["grad_checkpointing"] = row["gc"] == "1"
    if fields.get("method") is Method.LORA:
        fields["lora_rank"] = int(row["lora_rank"] or 16)
    if fields.get("algorithm") is Algorithm.GRPO:
        # batch = the completions of one prompt (num_generations), seq = the prompt
        fields.update(batch=1, num_generations=int(row["batch"]), completion_tokens=int(row["completion"]))
    return Query.model_validate(fields)


@cache
def measured_cases() -> tuple[MeasuredCase, ...]:
    path = DATA_DIR / "measured" / "memory.csv"
    if not path.exists():
        return ()
    with open(path, newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row.get("peak_bytes") and row["recipe"] in _RECIPES]
    return tuple(
        MeasuredCase(
            case_id=row["case_id"], recipe=row["recipe"], query=_query(row), peak_bytes=int(row["peak_bytes"])
        )
        for row in rows
    )
