"""Calls per question: how often one answer parses, estimates and assesses, on a fixed question mix.

Counted by code object (a profile hook), so every binding of a function is seen whichever module imported
it. Per-question caches are cleared before each question, as for a question new to the process. "repeated"
counts assessments computed again for a (job, card, count) the same answer had already assessed (calls
that find the answer's own assessment are "assess" but not "assess computed"). "screened" counts the
searches' checks of a card or count known too small without an estimate (core.estimator.short_of, a cached
card-free memory figure against the card's memory): those cards and counts are neither estimated nor
assessed.

`python -m benchmarks.calls` prints the table; `make bench` prints it as part of the pipeline benchmark.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

from benchmarks.questions import QUESTIONS, Question


@dataclass
class CallCounter:
    """Calls of the watched functions, and the distinct (job, card, count) keys `assess` saw."""

    codes: dict[CodeType, str]
    calls: Counter[str] = field(default_factory=Counter)
    assessed: Counter[tuple[Any, ...]] = field(default_factory=Counter)

    def hook(self, frame: FrameType, event: str, _arg: object) -> None:
        if event != "call":
            return
        name = self.codes.get(frame.f_code)
        if name is None:
            return
        self.calls[name] += 1
        if name == "assess computed":
            local = frame.f_locals
            card = local.get("card")
            result = local.get("result")
            query = result.query if result is not None else None
            job = query.model_copy(update={"kind": None, "sort": None}) if query is not None else None
            key = (job, getattr(card, "id", card), local.get("count"), local.get("speed"))
            self.assessed[key] += 1


def _watched() -> dict[CodeType, str]:
    from core.assessment import _compose, assess
    from core.estimator import memory
    from core.parser import pipeline

    return {
        pipeline.parse.__code__: "parse",
        memory.short_of.__code__: "screened",
        memory.estimate.__code__: "estimate",
        memory._estimate.__code__: "estimate computed",
        assess.__code__: "assess",
        _compose.__code__: "assess computed",
    }


@contextmanager
def counting(counter: CallCounter) -> Iterator[None]:
    previous = sys.getprofile()
    sys.setprofile(counter.hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


NAMES = ("parse", "screened", "estimate", "estimate computed", "assess", "assess computed", "assess repeated")


def calls_per_question(questions: list[Question]) -> dict[str, dict[str, float]]:
    """Mean calls per answer, by answer kind (and "all")."""
    from benchmarks.common import clear_question_caches
    from bot.answer import answer

    codes = _watched()
    totals: dict[str, Counter[str]] = {}
    answers: Counter[str] = Counter()
    for q in questions:
        clear_question_caches()
        counter = CallCounter(codes)
        with counting(counter):
            reply = answer(q.text, previous=q.previous)
        counter.calls["assess repeated"] = sum(n - 1 for n in counter.assessed.values())
        for kind in (str(reply.kind), "all"):
            answers[kind] += 1
            totals.setdefault(kind, Counter()).update(counter.calls)
    return {
        kind: {name: totals[kind][name] / answers[kind] for name in NAMES} | {"n": answers[kind]}
        for kind in sorted(answers)
    }


def table(rows: dict[str, dict[str, float]]) -> str:
    lines = ["     " + " ".join(f"{n:>17s}" for n in NAMES) + "  kind (n)"]
    for kind, row in rows.items():
        cells = " ".join(f"{row[name]:17.1f}" for name in NAMES)
        lines.append(f"     {cells}  {kind} ({row['n']:.0f})")
    return "\n".join(lines)


if __name__ == "__main__":
    print(f"calls per answer, {len(QUESTIONS)} questions, per-question caches cleared before each:")
    print(table(calls_per_question(QUESTIONS)))
