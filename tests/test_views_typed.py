"""The answers' templates read typed views (bot/answer/views.py, core/contract.py, core's results), never
records kept in dicts: every value an answer's template gets is walked, and a dict may only be a lookup
table (one kind of value by id: card names, cards, decode speeds), never a record of mixed fields."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from bot.answer import answer, common
from bot.render import render
from core.query import Query

QUESTIONS = (
    ("can a 4090 run llama 3.1 8b?", None),
    ("serve qwen2.5 72b with vllm on 4 L40S, 32k context", None),
    ("LoRA fine-tune llama 3.1 8b on one A100 80GB, 1B tokens", None),
    ("QLoRA 70B on one A6000, possible? gradient checkpointing on", None),
    ("fine-tune qwen2.5-7b on a 4090", None),
    ("跑 Qwen2.5-72B 要几张 L20", None),
    ("cheapest card to serve qwen2.5 32b", None),
    ("llama 3.1 70b on a 24GB card", None),
    ("run llama 3.1 70b q4_k_m with llama.cpp on a 4090", None),
    ("can my M2 Max 96GB run llama 3.1 70b with ollama?", None),
    ("generate 1024x1024 images with SDXL on a 4090", None),
    ("ComfyUI FLUX.1 dev fp8 on an RTX 3060 12GB", None),
    ("generate 1024x1024 images with SDXL", None),
    ("L40S or A100 for serving Qwen2.5-32B?", None),
    ("两张3090最大能LoRA多大的模型", None),
    ("H20适合训练吗", None),
    ("预算每月5000元 能租卡跑什么模型", None),
    ("batch -4 lora llama 3.1 8b on a 4090", None),
    ("/card 4090", None),
    ("what about 4 cards", Query(model="llama-3.1-70b", card="a100-80gb-sxm")),
)


def _records(value: object, path: str, seen: set[int]) -> Iterator[str]:
    """Paths of dicts that are records (values of more than one type) anywhere under `value`."""
    if id(value) in seen or isinstance(value, str | bytes | int | float | bool) or value is None:
        return
    seen.add(id(value))
    if isinstance(value, BaseModel):
        return  # core's typed results: their fields are checked by pydantic and mypy
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _records(getattr(value, f.name), f"{path}.{f.name}", seen)
    elif isinstance(value, Mapping):
        if len({type(v) for v in value.values()}) > 1:
            yield path
        for key, item in value.items():
            yield from _records(item, f"{path}[{key!r}]", seen)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _records(item, f"{path}[{index}]", seen)


@pytest.mark.parametrize(("text", "previous"), QUESTIONS)
def test_templates_get_typed_views(
    monkeypatch: pytest.MonkeyPatch, text: str, previous: Query | None
) -> None:
    contexts: list[dict[str, Any]] = []
    real = render

    def recording(template: str, lang: str, **data: Any) -> str:
        contexts.append(data)
        return real(template, lang, **data)

    monkeypatch.setattr(common, "render", recording)  # pack's renders: full and compact
    reply = answer(text + " ", previous=previous)  # a text of its own: not the answer cache's
    assert contexts, reply.kind
    for data in contexts:
        for name, value in data.items():
            assert not list(_records(value, name, set())), (text, reply.kind)
