"""Typed results in, chart specs out: the one place that reads core's results for pictures.

Each function takes the result an answer's text is rendered from (an `Estimate` with its fixes and plans,
a `Comparison`, plans, `LargestModel` rows, `CardsNeeded`, a vision estimate or its plans) and copies its
figures into a spec; it computes nothing but which option is plotted where. When the answers move to
typed views, only the calls into these functions move.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from bot.charts.spec import (
    CardLine,
    CardsNeededChart,
    ChartJob,
    LargestModelChart,
    LargestRow,
    MemoryBar,
    MemoryChart,
    NeededRow,
    OptionPoint,
    OptionsChart,
    Segment,
    VerdictCode,
    XMetric,
    YMetric,
)
from core.advisor import Comparison, Fix, Plan
from core.advisor.cards_needed import CardsNeeded
from core.advisor.largest_model import LargestModel
from core.catalog import load_catalog
from core.estimator import COMPONENTS, Estimate, Verdict
from core.query import Query, Task
from core.vision import VisionEstimate
from core.vision.plans import VisionPlan
from core.vision.result import VISION_COMPONENTS

MAX_FIX_BARS = 4
MAX_LINES = 5
MAX_PLAN_POINTS = 8  # the plan answer's text lists 8
_COST_METRIC: dict[str, XMetric] = {
    "total": "cost_total",
    "per_million_tokens": "cost_per_million",
    "per_hour": "cost_per_hour",
}


def card_name(card_id: str) -> str:
    """A catalog card's display name (the id when the catalog lacks it)."""
    card = load_catalog().by_id.get(card_id)
    return card.name if card is not None else card_id


def job_words(query: Query) -> ChartJob:
    """What the title's words need of the job (templates' `w.job`)."""
    return ChartJob(
        task=query.task.value,
        method=query.method.value if query.method else None,
        precision=query.precision.value if query.precision else None,
    )


def _segments(parts: Mapping[str, int], order: Sequence[str]) -> list[Segment]:
    return [Segment(name=name, bytes=int(parts[name])) for name in order if parts.get(name, 0) > 0]


def _code(verdict: Verdict | None) -> VerdictCode | None:
    return verdict.fits.value if verdict is not None else None


def memory_chart(
    est: Estimate,
    verdict: Verdict | None,
    *,
    model_name: str,
    fixes: Sequence[Fix] = (),
    plans: Sequence[Plan] = (),
) -> MemoryChart:
    """A fit answer: the job's bytes per card by component, the fixes offered as bars beside it, and the
    cards that fit as lines when no card was named."""
    asked = MemoryBar(
        role="asked",
        card_name=card_name(verdict.card) if verdict else None,
        count=verdict.count if verdict else 1,
        segments=_segments(est.breakdown.as_dict(), COMPONENTS),
        need_bytes=verdict.need_bytes if verdict else est.total_bytes,
        capacity_bytes=verdict.capacity_bytes if verdict else None,
        verdict=_code(verdict),
    )
    bars = [asked] + [_fix_bar(fix) for fix in fixes[:MAX_FIX_BARS]]
    lines: list[CardLine] = []
    for plan in plans:
        if len(lines) < MAX_LINES and all(line.card_name != plan.card_name for line in lines):
            line = CardLine(card_name=plan.card_name, count=plan.count, capacity_bytes=plan.capacity_bytes)
            lines.append(line)
    return MemoryChart(
        family="llm",
        model_name=model_name,
        job=job_words(est.query),
        band=est.uncertainty,
        bars=bars,
        lines=lines,
    )


def _fix_bar(fix: Fix) -> MemoryBar:
    return MemoryBar(
        role="fix",
        fix=fix.kind,
        card_name=card_name(fix.card),
        count=fix.count,
        seq=fix.query.seq,
        batch=fix.query.batch,
        segments=[Segment(name="total", bytes=fix.need_bytes)],
        need_bytes=fix.need_bytes,
        capacity_bytes=fix.capacity_bytes,
        verdict=fix.verdict.value,
    )


def methods_chart(
    best: Estimate,
    methods: Sequence[tuple[str, Estimate, Verdict | None]],
    *,
    model_name: str,
) -> MemoryChart:
    """'Fine-tune' with no method: full, LoRA and QLoRA side by side, each stacked by component."""
    bars = [
        MemoryBar(
            role="method",
            fix=method,
            card_name=card_name(verdict.card) if verdict else None,
            count=verdict.count if verdict else 1,
            segments=_segments(est.breakdown.as_dict(), COMPONENTS),
            need_bytes=verdict.need_bytes if verdict else est.total_bytes,
            capacity_bytes=verdict.capacity_bytes if verdict else None,
            verdict=_code(verdict),
        )
        for method, est, verdict in methods
    ]
    job = job_words(best.query).model_copy(update={"method": None, "task": Task.FINETUNE.value})
    return MemoryChart(family="llm", model_name=model_name, job=job, band=best.uncertainty, bars=bars)


def compare_chart(comparison: Comparison, *, model_name: str, currency: str) -> OptionsChart | None:
    """A compare answer: each card × count at its cost (x) and its time, or tokens/s (y); core's winners
    marked; cards that do not fit, or have no price on the chart's basis, set apart."""
    if not comparison.rows:
        return None
    bases = Counter(row.cost_basis for row in comparison.rows if row.fits and row.cost_basis)
    basis = bases.most_common(1)[0][0] if bases else "per_hour"
    by_time = basis == "total" and any(row.hours is not None for row in comparison.rows if row.fits)
    points = []
    for row in comparison.rows:
        y = row.hours if by_time else row.tokens_per_s
        x = row.cost if row.cost_basis == basis else None
        apart = None if row.fits else "no_fit"
        if apart is None and x is None:
            apart = "no_price"
        if apart is None and y is None:
            apart = "no_speed"
        points.append(
            OptionPoint(
                card_name=card_name(row.card),
                count=row.count,
                x=x if apart is None else None,
                y=y if apart is None else None,
                fits=row.fits,
                cheapest=apart is None and row.card == comparison.cost_winner,
                fastest=apart is None and row.card == comparison.speed_winner,
                apart=apart,
            )
        )
    query = comparison.rows[0].assessment.query
    return OptionsChart(
        source="compare",
        model_name=model_name,
        job=job_words(query),
        x_metric=_COST_METRIC[basis],
        y_metric="hours" if by_time else "tokens_per_s",
        currency=currency,
        points=points,
    )


def _plan_speed(plan: Plan) -> float | None:
    """The speed a plan's line in the text shows: training tokens/s, else one sequence's decode tokens/s."""
    return plan.training_tokens_per_s or plan.decode_tokens_per_s


def plan_chart(plans: Sequence[Plan], *, model_name: str, query: Query, currency: str) -> OptionsChart | None:
    """A plan answer, with the figures its lines show: each plan's cost for the whole job against its time
    when the job has a size (a run over a data set), else its cost per hour for all its cards against its
    tokens/s; the plan's precision (and method) written beside it."""
    plans = list(plans[:MAX_PLAN_POINTS])
    if not plans:
        return None
    by_run = all(p.total_cost is not None and p.training_hours is not None for p in plans)
    metric: tuple[XMetric, YMetric] = ("cost_total", "hours") if by_run else ("cost_per_hour", "tokens_per_s")
    figures = [
        (p.total_cost, p.training_hours) if by_run else (p.cost_per_hour, _plan_speed(p)) for p in plans
    ]
    plotted = [(i, x, y) for i, (x, y) in enumerate(figures) if x is not None and y is not None]
    cheapest = min(plotted, key=lambda t: t[1])[0] if plotted else None
    faster = (lambda t: t[2]) if by_run else (lambda t: -t[2])
    fastest = min(plotted, key=faster)[0] if plotted else None
    points = []
    for i, (plan, (x, y)) in enumerate(zip(plans, figures, strict=True)):
        apart = None if x is not None and y is not None else ("no_price" if x is None else "no_speed")
        points.append(
            OptionPoint(
                card_name=plan.card_name,
                count=plan.count,
                method=plan.method.value if plan.method else None,
                precision=plan.precision.value,
                x=x if apart is None else None,
                y=y if apart is None else None,
                cheapest=i == cheapest,
                fastest=i == fastest,
                apart=apart,
            )
        )
    return OptionsChart(
        source="plan",
        model_name=model_name,
        job=job_words(query),
        x_metric=metric[0],
        y_metric=metric[1],
        currency=currency,
        points=points,
    )


def largest_model_chart(
    rows: Sequence[LargestModel], *, card_name: str, gpus: int, names: Mapping[str, str]
) -> LargestModelChart:
    """The largest size per task and precision that runs on `gpus` × the card, with example models."""
    return LargestModelChart(
        card_name=card_name,
        gpus=gpus,
        rows=[
            LargestRow(
                task=row.job.task.value,
                method=row.job.method.value if row.job.method else None,
                precision=row.job.precision.value,
                params_b=row.params_b,
                examples=[names.get(m, m) for m in row.examples[:2]],
            )
            for row in rows
        ],
    )


def cards_needed_chart(
    rows: Sequence[tuple[str, CardsNeeded | None]], *, model_name: str, query: Query, max_count: int
) -> CardsNeededChart:
    """Per card, how many the job needs and what each of them then holds."""
    out = []
    for card_name, needed in rows:
        verdict = needed.job.verdict if needed is not None else None
        out.append(
            NeededRow(
                card_name=card_name,
                count=needed.count if needed is not None else None,
                need_bytes=verdict.need_bytes if verdict else None,
                capacity_bytes=verdict.capacity_bytes if verdict else None,
            )
        )
    return CardsNeededChart(model_name=model_name, job=job_words(query), max_count=max_count, rows=out)


def _vision_code(fits: bool | None) -> VerdictCode | None:
    return None if fits is None else "fits" if fits else "no"


def vision_memory_chart(est: VisionEstimate, *, card_name: str | None) -> MemoryChart:
    """A vision job: memory by component (encoders, denoiser, VAE, activations) and the fixes offered."""
    verdict = est.verdicts[0] if est.verdicts else None
    asked = MemoryBar(
        role="asked",
        card_name=card_name,
        count=verdict.count if verdict else 1,
        segments=_segments(est.breakdown.as_dict(), VISION_COMPONENTS),
        need_bytes=verdict.need_bytes if verdict else est.total_bytes,
        capacity_bytes=verdict.capacity_bytes if verdict else None,
        verdict=_code(verdict),
    )
    fixes = [
        MemoryBar(
            role="fix",
            fix=fix.code,
            card_name=card_name,
            segments=[Segment(name="total", bytes=fix.total_bytes)],
            need_bytes=fix.total_bytes,
            capacity_bytes=verdict.capacity_bytes if verdict else None,
            verdict=_vision_code(fix.fits),
        )
        for fix in est.fixes[:MAX_FIX_BARS]
    ]
    return MemoryChart(
        family="vision",
        model_name=est.model_name,
        job=ChartJob.model_validate(est.job.model_dump(mode="json")),
        band=est.uncertainty,
        bars=[asked, *fixes],
    )


def vision_plan_chart(
    plans: Sequence[VisionPlan],
    *,
    model_name: str,
    job: Mapping[str, object],
    unit: str | None,
    currency: str,
) -> OptionsChart | None:
    """A vision job on the cards that hold it: seconds per image (y) against cost per 1,000 (x)."""
    if not plans:
        return None
    per_thousand = all(p.cost_per_thousand_items is not None for p in plans)
    figures = [
        (p.cost_per_thousand_items if per_thousand else p.cost_per_hour, p.seconds_per_item) for p in plans
    ]
    plotted = [(i, x, y) for i, (x, y) in enumerate(figures) if x is not None and y is not None]
    cheapest = min(plotted, key=lambda t: t[1])[0] if plotted else None
    fastest = min(plotted, key=lambda t: t[2])[0] if plotted else None
    points = [
        OptionPoint(
            card_name=plan.card_name,
            x=x if y is not None else None,
            y=y,
            cheapest=i == cheapest,
            fastest=i == fastest,
            apart=None if y is not None else "no_speed",
        )
        for i, (plan, (x, y)) in enumerate(zip(plans, figures, strict=True))
    ]
    return OptionsChart(
        source="vision_plan",
        model_name=model_name,
        job=ChartJob.model_validate(job),
        x_metric="cost_per_thousand" if per_thousand else "cost_per_hour",
        y_metric="seconds_per_item",
        currency=currency,
        unit=unit,
        points=points,
    )
