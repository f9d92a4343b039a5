"""Benchmark 1: the answer pipeline in-process, `bot.answer.answer(text)` over the 200 questions.

Three regimes, reported separately because they differ by orders of magnitude:
- cold: the first pass in a fresh process (data files, templates and regexes load on first use);
- warm, new questions: data loaded, but every per-question cache cleared before the pass (what a running bot
  pays for a question it has not seen);
- warm, repeated: the same 200 again, per-question caches hot (what it pays for one it has seen).
Stages (parse / compute / render) are measured by timing `core.parser.parse`, `bot.answer.render` and
`bot.answer._call_macro` from the inside (compute = the rest), then the same pass runs under cProfile to name
the hot spots and count how many estimates one answer makes.
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks.calls import calls_per_question
from benchmarks.calls import table as calls_table
from benchmarks.common import Row, clear_question_caches, env_for_children, fmt_rate, question_caches
from benchmarks.questions import QUESTIONS, Question

TARGET_PER_S = 5_000
WARM_REPEATS = 20


class StageClock:
    """Seconds spent inside patched functions, by stage; re-entrant calls are counted once."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()
        self._depth: Counter[str] = Counter()

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.calls[stage] += 1
            if self._depth[stage]:
                return fn(*args, **kwargs)
            self._depth[stage] += 1
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[stage] += time.perf_counter() - start
                self._depth[stage] -= 1

        return timed


@contextmanager
def patched(targets: dict[str, tuple[tuple[str, str], ...]], clock: StageClock) -> Iterator[None]:
    """Wrap `module.attr` wherever each stage's function is bound (every module that imported it);
    missing names are skipped (core may change)."""
    import importlib

    saved: list[tuple[Any, str, Any]] = []
    for stage, places in targets.items():
        for module_name, attr in places:
            module = importlib.import_module(module_name)
            original = getattr(module, attr, None)
            if original is None:
                continue
            saved.append((module, attr, original))
            setattr(module, attr, clock.wrap(stage, original))
    try:
        yield
    finally:
        for module, attr, original in reversed(saved):
            setattr(module, attr, original)


_ANSWER = (
    "bot.answer.buttons",
    "bot.answer.cards",
    "bot.answer.common",
    "bot.answer.fit",
    "bot.answer.info",
)


def _everywhere(attr: str) -> tuple[tuple[str, str], ...]:
    return tuple((module, attr) for module in _ANSWER)


STAGES = {
    "parse": (("core.parser", "parse"), ("bot.answer.service", "parse")),
    "detect_lang": (("core.parser", "detect_lang"),),
    "render": _everywhere("render"),
    "render_macro": _everywhere("call_macro"),
}
COUNTED = {
    "estimate (answer)": _everywhere("estimate"),
    "estimate (advisor)": tuple(
        (f"core.advisor.{name}", "estimate") for name in ("plan_search", "fit_fixes", "scenarios", "shared")
    ),
    "estimate computed": (("core.estimator.memory", "_estimate"),),
    "memory computed": (("core.estimator.memory", "_memory"),),
    "render": _everywhere("render"),
    "render_macro": _everywhere("call_macro"),
    "plans": (("core.advisor", "plans"),),  # bot.answer calls advisor.plans / advisor.fixes by attribute
    "fixes": (("core.advisor", "fixes"),),
}


def run_pass(questions: list[Question]) -> tuple[float, list[float], list[str]]:
    """One pass: total seconds, seconds per question, answer kinds."""
    from bot.answer import answer

    times: list[float] = []
    kinds: list[str] = []
    start = time.perf_counter()
    for q in questions:
        t0 = time.perf_counter()
        reply = answer(q.text, previous=q.previous)
        times.append(time.perf_counter() - t0)
        kinds.append(reply.kind)
    return time.perf_counter() - start, times, kinds


def staged_pass(questions: list[Question]) -> dict[str, Any]:
    clock = StageClock()
    with patched(STAGES, clock):
        total, times, kinds = run_pass(questions)
    parse = clock.seconds["parse"] + clock.seconds["detect_lang"]
    render = clock.seconds["render"] + clock.seconds["render_macro"]
    return {
        "total_s": total,
        "per_s": len(questions) / total,
        "parse_s": parse,
        "render_s": render,
        "compute_s": total - parse - render,
        "times": times,
        "kinds": kinds,
    }


def cold_main() -> None:
    """In a fresh process: import, then one staged pass; prints JSON."""
    t0 = time.perf_counter()
    import bot.answer

    imported = time.perf_counter() - t0
    first = time.perf_counter()
    bot.answer.answer(QUESTIONS[0].text, previous=QUESTIONS[0].previous)
    first_answer = time.perf_counter() - first
    clear_question_caches()
    result = staged_pass(QUESTIONS)
    result.pop("times")
    result.pop("kinds")
    print(json.dumps({"import_s": imported, "first_answer_s": first_answer, **result}))


def cold_in_subprocess() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.pipeline", "--cold"],
        capture_output=True,
        text=True,
        env=env_for_children(),
        check=True,
        timeout=120,
    )
    parsed: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return parsed


def counted_pass(questions: list[Question]) -> dict[str, dict[str, float]]:
    """Calls per answer, by category→answer kind, every per-question cache cleared before each question."""
    from bot.answer import answer

    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    answers: Counter[str] = Counter()
    for q in questions:
        clear_question_caches()
        clock = StageClock()
        with patched(COUNTED, clock):
            reply = answer(q.text, previous=q.previous)
        key = f"{q.category}→{reply.kind}"
        answers[key] += 1
        per_kind[key].update(clock.calls)
    return {
        key: {name: per_kind[key][name] / answers[key] for name in COUNTED} | {"n": answers[key]}
        for key in sorted(answers)
    }


def profile_pass(questions: list[Question], top: int = 18) -> str:
    from bot.answer import answer

    clear_question_caches()
    profiler = cProfile.Profile()
    profiler.enable()
    for q in questions:
        answer(q.text, previous=q.previous)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top + 12)
    return _trim_pstats(out.getvalue())


def _trim_pstats(text: str) -> str:
    keep = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("Ordered by", "List reduced", "Random listing")):
            continue
        keep.append(line.replace(sys.prefix, "<venv>"))
    return "\n".join(keep)


def run(*, verbose: bool = True) -> list[Row]:
    cold = cold_in_subprocess()

    from bot.answer import answer  # noqa: F401  (imported here so the cold figures above stay cold)

    run_pass(QUESTIONS)  # load everything once
    uncached = []
    for _ in range(3):
        clear_question_caches()
        uncached.append(run_pass(QUESTIONS))
    best_uncached = min(uncached, key=lambda r: r[0])
    cached_totals = [run_pass(QUESTIONS)[0] for _ in range(WARM_REPEATS)]
    cached_per_s = len(QUESTIONS) / statistics.median(cached_totals)
    uncached_per_s = len(QUESTIONS) / statistics.median(r[0] for r in uncached)

    clear_question_caches()
    staged = staged_pass(QUESTIONS)
    by_kind: dict[str, list[float]] = defaultdict(list)
    for q, t, kind in zip(QUESTIONS, best_uncached[1], best_uncached[2], strict=True):
        by_kind[kind].append(t)
        by_kind[f"[{q.lang}]"].append(t)
    counts = counted_pass(QUESTIONS)
    per_question = calls_per_question(QUESTIONS)
    profile = profile_pass(QUESTIONS)

    if verbose:
        n = len(QUESTIONS)
        print(f"== 1. answer pipeline: {n} questions ({Counter(q.lang for q in QUESTIONS)}), one core")
        print(f"   per-question caches found in core: {len(question_caches())}")
        print(
            f"   cold (fresh process): import {cold['import_s'] * 1e3:.0f} ms, first answer "
            f"{cold['first_answer_s'] * 1e3:.0f} ms, first pass {cold['total_s']:.2f} s"
            f" = {cold['per_s']:.0f}/s"
            f" [parse {cold['parse_s'] * 1e3:.0f} ms, compute {cold['compute_s'] * 1e3:.0f} ms,"
            f" render {cold['render_s'] * 1e3:.0f} ms]"
        )
        print(
            f"   warm, new questions (caches cleared): {uncached_per_s:,.0f}/s; staged pass "
            f"{staged['total_s'] * 1e3:.0f} ms = parse {staged['parse_s'] * 1e3:.0f} ms "
            f"({staged['parse_s'] / staged['total_s']:.0%}), compute {staged['compute_s'] * 1e3:.0f} ms "
            f"({staged['compute_s'] / staged['total_s']:.0%}), render {staged['render_s'] * 1e3:.0f} ms "
            f"({staged['render_s'] / staged['total_s']:.0%})"
        )
        print(f"   warm, repeated (caches hot): {cached_per_s:,.0f}/s (median of {WARM_REPEATS} passes)")
        print("   ms per answer, warm new questions, by answer kind: mean / max (n)")
        for kind, values in sorted(by_kind.items()):
            print(
                f"     {kind:10s} {statistics.mean(values) * 1e3:7.2f} / {max(values) * 1e3:7.2f}"
                f"  ({len(values)})"
            )
        print("   calls per answer by category→kind (per-question caches cleared before each question):")
        names = list(COUNTED)
        print("     " + " ".join(f"{n[:18]:>18s}" for n in names) + "  category→kind (n)")
        for key, row in counts.items():
            cells = " ".join(f"{row[name]:18.1f}" for name in names)
            print(f"     {cells}  {key} ({row['n']:.0f})")
        print("   calls per question (parse, estimate, assess; repeated: a (job, card, count) again):")
        print(calls_table(per_question))
        print("   cProfile, one warm pass over new questions:")
        print("\n".join("     " + line for line in profile.splitlines()))

    return [
        Row(
            "1 pipeline",
            "answers/s, warm, repeated questions",
            f">= {TARGET_PER_S:,}/s",
            fmt_rate(cached_per_s),
            cached_per_s >= TARGET_PER_S,
        ),
        Row(
            "1 pipeline",
            "answers/s, warm, new questions",
            f">= {TARGET_PER_S:,}/s",
            fmt_rate(uncached_per_s),
            uncached_per_s >= TARGET_PER_S,
        ),
        Row("1 pipeline", "answers/s, cold first pass", "-", fmt_rate(cold["per_s"])),
        Row(
            "1 pipeline",
            "calls per question: parse / estimate / assess (mean, 200 new questions)",
            "parse 1",
            f"{per_question['all']['parse']:.1f} / {per_question['all']['estimate']:.1f}"
            f" / {per_question['all']['assess']:.1f}",
            per_question["all"]["parse"] == 1.0,
        ),
        Row(
            "1 pipeline",
            "the same (job, card, count) assessed again in one answer",
            "0",
            f"{per_question['all']['assess repeated']:.2f} per answer",
            per_question["all"]["assess repeated"] == 0,
        ),
        Row(
            "1 pipeline",
            "stage split, new questions",
            "-",
            f"parse {staged['parse_s'] / staged['total_s']:.0%}"
            f" / compute {staged['compute_s'] / staged['total_s']:.0%}"
            f" / render {staged['render_s'] / staged['total_s']:.0%}",
        ),
    ]


if __name__ == "__main__":
    if "--cold" in sys.argv:
        cold_main()
    else:
        from benchmarks.common import print_table

        print_table(run())
