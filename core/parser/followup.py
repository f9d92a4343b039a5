"""Follow-ups in a chat: a new message changes only what it says; the rest comes from `previous`."""

from __future__ import annotations

import re

from pydantic import ValidationError

from core.query import Method, Query, Task
from core.registry import load_registry

# Fields that name the same thing two ways: saying one replaces the other.
_EXCLUSIVE = (("card", "card_memory_bytes"), ("model", "params_b"), ("batch", "users"))


def merge(previous: Query, stated: dict[str, object], gpus_added: int = 0) -> dict[str, object]:
    """previous.said() overridden by the newly stated fields (a field said earlier stays said)."""
    merged = dict(previous.said())
    stated = _same_family(previous, stated)
    if gpus_added and "gpus" not in stated:
        stated = {**stated, "gpus": (previous.gpus or 1) + gpus_added}
    for first, second in _EXCLUSIVE:
        if first in stated:
            merged.pop(second, None)
        if second in stated:
            merged.pop(first, None)
    if ("card" in stated or "card_memory_bytes" in stated) and "card_name" not in stated:
        merged.pop("card_name", None)  # "那4090呢", "and on a 24 GB card?": the unlisted card's name goes
    if stated.get("cpu_only"):
        for name in ("card", "card_memory_bytes", "card_name", "gpus"):
            merged.pop(name, None)  # "那纯CPU呢": no card any more
    elif "card" in stated or "card_memory_bytes" in stated:
        merged.pop("cpu_only", None)  # "换成4090呢" after a CPU-only question: on the card now
    if "stated_hourly_price" in stated:
        merged.pop("stated_price_card", None)  # a new price is for the card the chat is on now
    if "network" in stated and "network_gbit_s" not in stated:
        merged.pop("network_gbit_s", None)  # "what about InfiniBand?" after 100G Ethernet: no speed for IB
    if "method" in stated and "task" not in stated and merged.get("task") is not Task.PRETRAIN:
        merged["task"] = Task.FINETUNE
    if stated.get("task") is Task.INFERENCE:
        merged.pop("method", None)
    if stated.get("task") is Task.PRETRAIN and merged.get("method") in (Method.LORA, Method.QLORA):
        merged.pop("method", None)
    merged.update(stated)
    return merged


_SIZE_IN_ID = re.compile(r"(?<![0-9.])\d+(?:\.\d+)?b$")


def _same_family(previous: Query, stated: dict[str, object]) -> dict[str, object]:
    """'ollama 跑 qwen2.5 14b' → '那32b呢': a bare size after a model means that model's family at that size,
    when the registry has it (qwen2.5-32b); otherwise the size stays a bare size."""
    size = stated.get("params_b")
    if "model" in stated or not isinstance(size, int | float) or not previous.model:
        return stated
    if not _SIZE_IN_ID.search(previous.model):
        return stated
    candidate = _SIZE_IN_ID.sub(f"{size:g}b", previous.model)
    if candidate == previous.model or candidate not in load_registry().by_id:
        return stated
    return {**{k: v for k, v in stated.items() if k != "params_b"}, "model": candidate}


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
