"""The answers' templates read typed views (bot/answer/views.py, core/contract.py, core's results), never
records kept in dicts: an answer's template gets one view, `v` (a frozen dataclass or a pydantic model),
beside the `compact` / `short` switches, and no loose names; every value under it is walked, and a dict may
only be a lookup table (one kind of value by id: card names, cards, decode speeds), never a record of mixed
fields. The questions reach every kind of answer and every view builder (card sheet, comparison, the
questions asked back, unknown names, rejected values, help, out of scope, methods side by side …)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bot.answer import answer, common
from bot.answer.clarify import error_answer
from bot.render import render
from core.estimator import estimate
from core.query import Query

# the module (bot.answer's `estimate_view` is its function)
estimate_view = importlib.import_module("bot.answer.estimate_view")

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
    ("4090 specs", None),
    ("4090 vs A100 vs H100", None),
    ("4090 vs A100 for llama 3.1 8b inference", None),
    ("fine-tune something on a 4090", None),
    ("llama 3.1 8b", None),
    ("can I run llama-9000-turbo on a 4090?", None),
    ("can an rtx 9999 run llama 3.1 8b?", None),
    ("/help", None),
    ("what's the weather tomorrow?", None),
    ("asdf qwer zxcv", None),
    ("why do cards with more memory cost more?", None),
    ("what card should I get for learning deep learning?", None),
    ("autodl 4090 包月还是按小时", None),
    ("哪些卡有48G显存", None),
    ("serve llama 3.1 8b with 10 users on 2 h100", None),
)

# What every render of an answer's template is given: its view and the two layout switches.
NAMES = {"v", "compact", "short"}


def _assert_one_typed_view(data: Mapping[str, Any], what: object) -> None:
    assert set(data) <= NAMES and "v" in data, (what, sorted(data))
    view = data["v"]
    assert isinstance(view, BaseModel) or (dataclasses.is_dataclass(view) and not isinstance(view, type)), (
        what,
        type(view),
    )
    for name, value in data.items():
        assert not list(_records(value, name, set())), what


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
        _assert_one_typed_view(data, (text, reply.kind))


def test_every_kind_reached() -> None:
    """The questions above cover every view builder: each kind of answer at least once."""
    kinds = {answer(text + " ", previous=previous).kind for text, previous in QUESTIONS}
    assert {"fit", "plan", "card", "compare", "clarify", "out_of_scope", "help", "faq", "scenario"} <= kinds
    assert {"cards_needed", "largest_model", "card_advice", "budget", "billing", "cards_with_memory"} <= kinds


def test_error_and_estimate_views_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    contexts: list[dict[str, Any]] = []
    real = render

    def recording(template: str, lang: str, **data: Any) -> str:
        contexts.append(data)
        return real(template, lang, **data)

    monkeypatch.setattr(common, "render", recording)
    monkeypatch.setattr(estimate_view, "render", recording)
    assert error_answer("zh", "internal").compact_html  # read, so rendered (its compact form is lazy)
    estimate_view.render_estimate(estimate(Query(model="llama-3.1-8b", card="rtx-4090")))
    assert len(contexts) >= 3
    for data in contexts:
        _assert_one_typed_view(data, "error / estimate")


def test_view_builders_hand_templates_a_view() -> None:
    """pack() takes one typed view (bot/answer/views.py `View`), and no view builder in bot/answer/ keeps a
    record as `dict[str, Any]`."""
    assert inspect.signature(common.pack).parameters["view"].annotation == "View"
    folder = Path(common.__file__).parent
    for path in sorted(folder.glob("*.py")):
        assert "dict[str, Any]" not in path.read_text(encoding="utf-8"), path.name
