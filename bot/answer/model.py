"""What an answer is: the reply the bot sends (full, compact, buttons) and the JSON contract."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Generic, Literal, NamedTuple, TypedDict, TypeVar

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler
from pydantic_core import core_schema

from bot.charts.spec import ChartSpec
from bot.render import (
    plain_text,
)
from core.answer_kind import AnswerKind
from core.query import Method, Precision, Query, Task
from core.report import query_json as contract_query_json
from core.report import with_params_b
from core.vision.job import VisionJob
from core.vision.result import VisionQuery

log = logging.getLogger(__name__)

Kind = AnswerKind  # one enum for the kind of answer, shared with the parser and the query
Lang = Literal["en", "zh"]

FAQ_IDS = ("card_vs_vram", "vram_price", "vram_upgrade", "bandwidth", "folk_rule")
SCENARIO_IDS = ("learning", "production_inference", "pretraining", "vision")
# Suggested models when the question names none (registry ids; labels come from the registry).
SUGGESTED_MODELS = ("llama-3.1-8b", "qwen2.5-7b")
SUGGESTED_SIZE_B = 13.0
TRAINING_METHODS = (Method.FULL, Method.LORA, Method.QLORA)
CONTEXT_CHOICES = (4096, 8192, 32768)
PRECISION_CHOICES = (Precision.BF16, Precision.INT8, Precision.INT4)
CHART_ACTION = "chart"  # the button that sends the answer's chart as a picture


class TypedNames(NamedTuple):
    """Names the user typed that gpufit had to read something into; the answer says how it read them."""

    card: str | None = None  # a family name ("A100") read as its most-rented variant
    model: str | None = None  # a model not in the registry, estimated as a typical dense model of its size


NOTHING_READ_IN = TypedNames()


class Button(BaseModel):
    """One inline-keyboard button; `action` is a core-level instruction the bot maps to callback data."""

    label: str
    action: str


class AnswerJson(TypedDict):
    """`gpufit ask --json`: what was understood (the `gpufit estimate --json` query, or a vision job's) and
    the answer: its kind, words and buttons, then the kind's facts (the same job keys as `estimate`)."""

    query: dict[str, object] | None
    answer: dict[str, object]


Rendered = tuple[str, str, str]  # a compact form: (HTML, title, summary)
T = TypeVar("T")


class Deferred(Generic[T]):
    """A part of an answer worked out the first time it is read, then kept (CompactForm, Facts). Answers are
    cached and shared between threads: two threads reading it at once only work out the same value twice.
    With a fallback, a failure to work it out is logged and the fallback stands in, never an error at the
    time it is read."""

    __slots__ = ("_done", "_fallback", "_make")

    def __init__(self, make: Callable[[], T], fallback: Callable[[], T] | None = None) -> None:
        self._make: Callable[[], T] | None = make
        self._fallback = fallback
        self._done: tuple[T] | None = None

    def rendered(self) -> T:
        """The value, worked out now if not yet."""
        done = self._done
        if done is None:
            make = self._make
            assert make is not None
            try:
                done = (make(),)
            except Exception:
                if self._fallback is None:
                    raise
                log.exception("working out a deferred part of an answer failed; its fallback stands in")
                done = (self._fallback(),)
            self._done, self._make, self._fallback = done, None, None  # what it was made from is let go
        return done[0]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Deferred) or type(other) is not type(self):
            return False
        return bool(self.rendered() == other.rendered())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = repr(self._done[0]) if self._done is not None else "<not yet>"
        return f"{type(self).__name__}({shown})"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """Validated as itself; dumped as its value."""
        dump = core_schema.plain_serializer_function_ser_schema(lambda part: part.rendered())
        return core_schema.is_instance_schema(cls, serialization=dump)


class CompactForm(Deferred[Rendered]):
    """An answer's compact form (groups, inline results) and the title and summary read from it, rendered
    the first time one of them is read.

    Private chats never send the compact form, and rendering it (a second template, then its plain text for
    the title) cost about a fifth of an answer's rendering; so an answer carries how to render it, and the
    entry points that send it (groups, inline mode) read it in their worker thread (`answer_message(...,
    compact=True)`). A form that fails to render falls back to the answer's full form (logged)."""

    __slots__ = ()

    @classmethod
    def of(cls, html: str, title: str, summary: str) -> CompactForm:
        """A form already rendered."""
        form = cls(lambda: (html, title, summary))
        form.rendered()
        return form

    @property
    def html(self) -> str:
        return self.rendered()[0]

    def with_html(self, change: Callable[[str], str]) -> CompactForm:
        """The same form with its HTML changed (a note above it), title and summary kept; still lazy."""
        return CompactForm(lambda: (change(self.html), *self.rendered()[1:]))


class Facts(Deferred[dict[str, object]]):
    """An answer's facts for `gpufit ask --json` (the kind's typed results dumped): only the JSON contract
    reads them, never a chat, so they are dumped when first read. Facts that fail to dump fall back to none
    (logged)."""

    __slots__ = ()

    @classmethod
    def of(cls, facts: Mapping[str, object]) -> Facts:
        """Facts already worked out."""
        done = cls(lambda: dict(facts))
        done.rendered()
        return done

    @classmethod
    def later(cls, make: Callable[[], Mapping[str, object]]) -> Facts:
        return cls(lambda: dict(make()), dict)

    def with_more(self, more: Mapping[str, object]) -> Facts:
        """These facts and `more` (a note's), still dumped when first read."""
        return Facts(lambda: self.rendered() | dict(more))


class Answer(BaseModel):
    """One reply, ready to send; frozen because answers are cached and shared."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    lang: Lang
    query: Query | None = None
    filled_query: Query | None = None
    html: str
    compact: CompactForm = Field(description="the compact form, its title and summary (rendered when read)")
    buttons: list[list[Button]] = Field(default_factory=list)
    lazy_facts: Facts = Field(
        default_factory=lambda: Facts.of({}),
        description="the kind's facts, dumped (JSON-ready) from core's typed results when first read",
    )
    vision: VisionJob | None = Field(default=None, description="the vision job answered (for follow-ups)")
    understood: VisionQuery | None = Field(
        default=None, description="what was understood of a question that is not a Query (a vision job)"
    )
    chart: ChartSpec | None = Field(default=None, description="the figures to draw (the '📊 Chart' button)")

    @property
    def compact_html(self) -> str:
        """The compact form (groups, inline results): the verdict and the few lines that carry it."""
        return self.compact.rendered()[0]

    @property
    def title(self) -> str:
        """The compact form's first line (an inline result's title)."""
        return self.compact.rendered()[1]

    @property
    def summary(self) -> str:
        """The compact form's other lines in one (an inline result's description)."""
        return self.compact.rendered()[2]

    @property
    def facts(self) -> dict[str, object]:
        """The kind's facts (`gpufit ask --json`), dumped from core's typed results."""
        return self.lazy_facts.rendered()

    def to_json(self) -> AnswerJson:
        """`gpufit ask --json`: what was understood (the `gpufit estimate --json` query, or a vision job's)
        and the answer: its kind, words and buttons, then the kind's facts (the same job keys as
        `estimate`), all dumped from typed objects."""
        if self.query or self.filled_query:
            understood = query_json(self.query, self.filled_query)
        else:
            understood = self.understood.model_dump(mode="json") if self.understood is not None else None
        return {
            "query": understood,
            "answer": {
                "kind": self.kind,
                "lang": self.lang,
                "title": self.title,
                "summary": self.summary,
                "text": plain_text(self.html),
                "html": self.html,
                "compact_html": self.compact_html,
                "buttons": [[b.model_dump() for b in row] for row in self.buttons],
                **self.facts,
            },
        }


def query_json(query: Query | None, filled: Query | None) -> dict[str, object] | None:
    """The filled query (with the model's size); `defaulted` is exactly the fields the user did not state
    (recomputed, so a stated field is never reported as assumed whatever the fill-in step recorded)."""
    if filled is None:
        return contract_query_json(query) if query is not None else None
    stated = query or Query()
    answered = with_params_b(filled)
    stated_fields = set(stated.said())
    if stated.task is not Task.INFERENCE or "task" in stated.model_fields_set:
        stated_fields.add("task")
    defaulted = tuple(
        name
        for name in Query.model_fields
        if name not in ("defaulted", "task")
        and getattr(answered, name) is not None
        and name not in stated_fields
    )
    return answered.model_copy(update={"defaulted": defaulted}).model_dump(mode="json")
