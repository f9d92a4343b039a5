"""The buttons of each step: choice ids (stored in callback data) and what each one means."""

from __future__ import annotations

from dataclasses import dataclass

from core.catalog import load_catalog
from core.checklist.model import ChecklistAnswers, Job, Step
from core.query import Task
from core.registry import load_registry

_MODEL_CHOICES = (
    "m:qwen2.5-7b",
    "m:llama-3.1-8b",
    "m:qwen2.5-14b",
    "m:qwen2.5-32b",
    "m:llama-3.1-70b",
    "m:qwen2.5-72b",
)
_SHAPE_CHOICES_SERVING = ("s:4096:1", "s:8192:8", "s:8192:32", "s:32768:8", "s:131072:1")
_SHAPE_CHOICES_TRAINING = ("s:512:8", "s:2048:4", "s:4096:2", "s:8192:1", "s:32768:1")
_WORKLOAD_SERVING = ("r:1000", "r:10000", "r:100000", "r:1000000")
_WORKLOAD_FINETUNE = ("t:10000000", "t:100000000", "t:1000000000", "t:10000000000")
_WORKLOAD_PRETRAIN = ("t:10000000000", "t:100000000000", "t:1000000000000", "t:10000000000000")
_BUDGET_CHOICES = {
    "zh": (
        "b:none",
        "b:h:CNY:5",
        "b:h:CNY:20",
        "b:h:CNY:100",
        "b:t:CNY:1000",
        "b:t:CNY:10000",
        "b:t:CNY:100000",
    ),
    "en": ("b:none", "b:h:USD:1", "b:h:USD:5", "b:h:USD:20", "b:t:USD:200", "b:t:USD:2000", "b:t:USD:20000"),
}
_CARD_CHOICES = (
    "c:rec",
    "c:rtx-4090:1",
    "c:rtx-4090:2",
    "c:rtx-5090:1",
    "c:l40s:1",
    "c:a100-80gb-sxm:1",
    "c:h20:1",
    "c:h100-sxm:1",
    "c:h100-sxm:8",
)


# System RAM: GB, DDR generation, channels (desktops: 2 channels; 256 GB and more: an 8-channel server)
_HOST_CHOICES = ("h:none", "h:32:ddr4:2", "h:64:ddr5:2", "h:128:ddr5:2", "h:256:ddr5:8", "h:512:ddr5:8")


def choices(step: Step, lang: str, answers: ChecklistAnswers | None = None) -> list[str]:
    """Button choice ids for a step (≤ 40 ASCII bytes each, so they fit in callback data)."""
    answers = answers or ChecklistAnswers()
    if step is Step.JOB:
        return [job.value for job in Job]
    if step is Step.MODEL:
        return ["p:7", "p:14", "p:32", "p:70", *_MODEL_CHOICES]
    if step is Step.PRECISION:
        if answers.job is Job.QLORA:
            return ["nf4", "int4"]
        if answers.task is not Task.INFERENCE and answers.job is not Job.LORA:
            return ["bf16", "fp16", "fp32"]
        return ["bf16", "fp16", "fp8", "int8", "int4"]
    if step is Step.SHAPE:
        return list(_SHAPE_CHOICES_SERVING if answers.serving else _SHAPE_CHOICES_TRAINING)
    if step is Step.WORKLOAD:
        if answers.serving:
            return list(_WORKLOAD_SERVING)
        return list(_WORKLOAD_PRETRAIN if answers.task is Task.PRETRAIN else _WORKLOAD_FINETUNE)
    if step is Step.BUDGET:
        return list(_BUDGET_CHOICES["zh" if lang == "zh" else "en"])
    if step is Step.HOST:
        return list(_HOST_CHOICES)
    return list(_CARD_CHOICES)


@dataclass(frozen=True, slots=True)
class Choice:
    """What one button of a step means, for the template that labels it (templates/checklist_words.j2
    `choice`): its id (the callback data), its kind, and the figures of that kind (None where not its own)."""

    kind: str  # size model shape requests tokens budget no_budget host no_host card recommend plain control
    id: str  # the choice id as stored in the callback data ("m:qwen2.5-7b", "_back")
    name: str | None = None  # a model's or a card's name as the registry / catalog give it
    short: str | None = None  # a card's name without the vendor words, for narrow buttons
    params_b: float | None = None
    seq: int | None = None
    batch: int | None = None
    per_day: float | None = None
    tokens: float | None = None
    per_hour: bool | None = None
    currency: str | None = None
    amount: float | None = None
    gb: int | None = None
    type: str | None = None
    channels: int | None = None
    gpus: int | None = None


def control(choice: str) -> Choice:
    """A control button (back, skip, cancel, resume, export …): labelled by its id alone."""
    return Choice(kind="control", id=choice)


def choice_data(choice: str) -> Choice:
    """What a choice id means, for templates that label buttons (numbers, names, currency)."""
    kind, _, rest = choice.partition(":")
    parts = rest.split(":") if rest else []
    if kind == "p" and parts:
        return Choice("size", choice, params_b=float(parts[0]))
    if kind == "m" and parts:
        model = load_registry().by_id.get(parts[0])
        return Choice("model", choice, name=model.name if model else parts[0])
    if kind == "s" and len(parts) == 2:
        return Choice("shape", choice, seq=int(parts[0]), batch=int(parts[1]))
    if kind == "r" and parts:
        return Choice("requests", choice, per_day=float(parts[0]))
    if kind == "t" and parts:
        return Choice("tokens", choice, tokens=float(parts[0]))
    if kind == "b" and parts == ["none"]:
        return Choice("no_budget", choice)
    if kind == "b" and len(parts) == 3:
        return Choice("budget", choice, per_hour=parts[0] == "h", currency=parts[1], amount=float(parts[2]))
    if kind == "h" and parts == ["none"]:
        return Choice("no_host", choice)
    if kind == "h" and len(parts) == 3:
        return Choice("host", choice, gb=int(parts[0]), type=parts[1], channels=int(parts[2]))
    if kind == "c" and parts == ["rec"]:
        return Choice("recommend", choice)
    if kind == "c" and len(parts) == 2:
        card = load_catalog().by_id.get(parts[0])
        return Choice("card", choice, name=card.name if card else parts[0], gpus=int(parts[1]))
    return Choice("plain", choice)
