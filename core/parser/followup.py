"""Follow-ups in a chat: a new message changes only what it says; the rest comes from `previous`."""

from __future__ import annotations

from pydantic import ValidationError

from core.query import Method, Query, Task

# Fields that name the same thing two ways: saying one replaces the other.
_EXCLUSIVE = (("card", "card_memory_bytes"), ("model", "params_b"))


def merge(previous: Query, stated: dict[str, object], gpus_added: int = 0) -> dict[str, object]:
    """previous.said() overridden by the newly stated fields (a field said earlier stays said)."""
    merged = dict(previous.said())
    if gpus_added and "gpus" not in stated:
        stated = {**stated, "gpus": (previous.gpus or 1) + gpus_added}
    for first, second in _EXCLUSIVE:
        if first in stated:
            merged.pop(second, None)
        if second in stated:
            merged.pop(first, None)
    if "method" in stated and "task" not in stated and merged.get("task") is not Task.PRETRAIN:
        merged["task"] = Task.FINETUNE
    if stated.get("task") is Task.INFERENCE:
        merged.pop("method", None)
    if stated.get("task") is Task.PRETRAIN and merged.get("method") in (Method.LORA, Method.QLORA):
        merged.pop("method", None)
    merged.update(stated)
    return merged


def build_query(fields: dict[str, object]) -> Query:
    """A Query of the stated fields; `defaulted` lists 'task' when no task was said.

    A value the schema refuses (a 0-card count, a 10^9 batch) is dropped rather than failing the message.
    """
    data = dict(fields)
    data.pop("defaulted", None)
    defaulted = [] if "task" in data else ["task"]
    for _ in range(len(data) + 1):
        try:
            return Query.model_validate({**data, "defaulted": defaulted})
        except ValidationError as error:
            bad = {str(e["loc"][0]) for e in error.errors() if e.get("loc")}
            if not bad & data.keys():
                break
            for name in bad:
                data.pop(name, None)
    return Query(defaulted=["task"])
