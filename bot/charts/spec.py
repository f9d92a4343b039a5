"""What a chart shows, as data: the figures of one answer, ready to draw, in no language.

A spec is built from the same typed result as the answer's text (bot/charts/adapter.py), so the picture
and the words cannot disagree. It holds no words: the drawing takes every label from templates/<lang>/
chart.j2. Specs are small JSON (a few hundred bytes to a few KB), so the bot keeps the one behind a
message's "📊 Chart" button in the session store and the button works after a restart. Bytes stay bytes;
GiB only when drawn.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

VerdictCode = Literal["fits", "tight", "no"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Segment(_Frozen):
    """One component of a job's memory on one card (weights, KV cache, activations …, or `total`)."""

    name: str
    bytes: int


class MemoryBar(_Frozen):
    """One setup's memory per card: the job as asked (stacked by component), a fix or another method."""

    role: Literal["asked", "fix", "method"]
    fix: str | None = None  # the fix's kind, or the method for role "method"
    card_name: str | None = None
    count: int = 1
    seq: int | None = None  # for "shorter context" and "smaller batch" labels
    batch: int | None = None
    segments: list[Segment]
    need_bytes: int  # per card
    capacity_bytes: int | None = None  # what one card of the setup can use
    verdict: VerdictCode | None = None


class CardLine(_Frozen):
    """A card's usable memory drawn across the chart (the cards that fit, when none was named)."""

    card_name: str
    count: int = 1
    capacity_bytes: int


class ChartJob(BaseModel):
    """What a chart title's words need of the job (templates/<lang>/chart.j2 `w_job`): its task, method and
    precision. Other keys (a vision job's, in specs stored before this type) are ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    task: str | None = None
    method: str | None = None
    precision: str | None = None


class MemoryChart(_Frozen):
    """The job's memory by component against each candidate card's usable memory, with the ± band."""

    kind: Literal["memory"] = "memory"
    family: Literal["llm", "vision"] = "llm"
    model_name: str
    job: ChartJob  # task / method / precision, for the title's words
    band: float  # the estimate's ± fraction
    bars: list[MemoryBar]
    lines: list[CardLine] = Field(default_factory=list)


class OptionPoint(_Frozen):
    """One option (card × count): cost on x, time or speed on y; `apart` says why it is not plotted."""

    card_name: str
    count: int = 1
    method: str | None = None  # plans: the plan's method and precision, written beside it
    precision: str | None = None
    x: float | None
    y: float | None
    fits: bool = True
    cheapest: bool = False
    fastest: bool = False
    apart: Literal["no_fit", "no_price", "no_speed"] | None = None


XMetric = Literal["cost_total", "cost_per_million", "cost_per_hour", "cost_per_thousand"]
YMetric = Literal["hours", "tokens_per_s", "seconds_per_item"]


class OptionsChart(_Frozen):
    """Compare and plan answers: each option as a point, time (or tokens/s) against cost."""

    kind: Literal["options"] = "options"
    source: Literal["compare", "plan", "vision_plan"]
    model_name: str
    job: ChartJob
    x_metric: XMetric
    y_metric: YMetric
    currency: str
    unit: str | None = None  # vision: image, video, step …
    points: list[OptionPoint]


class LargestRow(_Frozen):
    task: str
    method: str | None
    precision: str
    params_b: float | None
    examples: list[str] = Field(default_factory=list)  # display names


class LargestModelChart(_Frozen):
    """The largest model per task and precision for the cards asked."""

    kind: Literal["largest_model"] = "largest_model"
    card_name: str
    gpus: int
    rows: list[LargestRow]


class NeededRow(_Frozen):
    card_name: str
    count: int | None  # None: more than the search goes
    need_bytes: int | None = None  # per card at that count
    capacity_bytes: int | None = None


class CardsNeededChart(_Frozen):
    """How many cards the job needs, per card, with the memory each card holds at that count."""

    kind: Literal["cards_needed"] = "cards_needed"
    model_name: str
    job: ChartJob
    max_count: int
    rows: list[NeededRow]


ChartSpec = Annotated[
    MemoryChart | OptionsChart | LargestModelChart | CardsNeededChart, Field(discriminator="kind")
]
CHART_KINDS = ("memory", "options", "largest_model", "cards_needed")

_ADAPTER: TypeAdapter[ChartSpec] = TypeAdapter(ChartSpec)


def spec_json(spec: ChartSpec) -> str:
    """The spec as the session store keeps it."""
    return _ADAPTER.dump_json(spec).decode("utf-8")


def spec_from_json(text: str) -> ChartSpec:
    """A stored spec read back; raises pydantic's ValidationError when it no longer validates."""
    return _ADAPTER.validate_json(text)
