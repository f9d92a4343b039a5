"""What a parse returns: the intent, the language, and the structured query (public contract)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.answer_kind import AnswerKind
from core.query import Query
from core.vision.job import VisionJob


class Lang(StrEnum):
    EN = "en"
    ZH = "zh"


# The parser's decision is the answer's kind: one enum (core/answer_kind.py), not a parallel one.
Intent = AnswerKind


RejectedWhat = Literal["size", "batch", "gpus", "seq", "lora_rank", "card"]


class Rejected(BaseModel):
    """Something the message states that cannot be used as written ('batch -4', 'a 10000000B model',
    'RTX 9999'): the answer says so instead of answering with a default or the previous question's value."""

    model_config = ConfigDict(frozen=True)

    what: RejectedWhat
    typed: str  # as the user wrote it
    reason: Literal["not_positive", "too_large", "too_small", "unknown"]
    suggestions: list[str] = []  # card ids for an unknown card
    fixed: int | None = None  # the value a button may offer instead ('batch 4' for 'batch -4')


class Parsed(BaseModel):
    """One message understood; fields the message did not touch stay None / empty."""

    model_config = ConfigDict(frozen=True)

    intent: AnswerKind
    lang: Lang
    query: Query | None = None
    cards: list[str] = []
    ambiguous_card: str | None = None
    faq: str | None = None
    scenario: str | None = None
    follow_up: bool = False
    compare_methods: bool = False
    clarify: str | None = None
    unknown_model: str | None = None
    vision: VisionJob | None = None  # an image / video / vision / speech / embedding job (issue 12)
    wanted_memory_bytes: int | None = None  # 'upgrade my 3090 to 48GB': the memory the user wants
    rejected: list[Rejected] = []  # values the message states that cannot be used (answered, not dropped)
    card_counts: dict[str, int] = {}  # comparisons of setups ('8张4090和2张A100'): a count per card
