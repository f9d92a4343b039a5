"""Benchmark 1c: CPU per answer by stage — parse, advise, view, render — for questions new to a warm process.

What a running bot pays per new question outside the Telegram plumbing: the process is warmed as the bot warms
itself (bot.warm: tables loaded, templates compiled, the collector set) and by one pass over the benchmark's
200 questions, then answers questions it has never seen (benchmarks.questions.fresh_questions, the mix
benchmark 5 sends; per-question caches cleared once before, as a bot that has just started has them empty).
The CPU per answer is the answering thread's own, in a pass without sampling; how it splits is sampled in a
second pass over the same questions (caches cleared again): a thread looks at the answering thread's stack
every millisecond and charges the sample to the innermost frame of gpufit's own code — core/parser → parse,
the rest of core → advise (assessment, advisor, estimator, typed results), bot/answer and bot/charts → view
(views, buttons, the JSON facts), bot/render.py and the templates → render (jinja2 and markupsafe under them
included). Run as `python -m benchmarks.stages [--questions N]`.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import FrameType

from benchmarks.common import ROOT, Row, clear_question_caches

STAGES = ("parse", "advise", "view", "render", "other")
SAMPLE_S = 0.001


def stage_of(frame: FrameType | None) -> str:
    """The stage of the innermost frame that is gpufit's own code (see the module's docstring)."""
    templates, root = str(ROOT / "templates"), str(ROOT)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(templates) or name.endswith(".j2"):
            return "render"
        if name.startswith(root) and ".venv" not in name:
            rel = Path(name).relative_to(ROOT).as_posix()
            if rel.startswith("core/parser/"):
                return "parse"
            if rel.startswith("core/"):
                return "advise"
            if rel == "bot/render.py":
                return "render"
            if rel.startswith(("bot/answer/", "bot/charts/")):
                return "view"
        frame = frame.f_back
    return "other"


def measure(count: int) -> tuple[float, Counter[str], int]:
    """(CPU seconds per answer, samples by stage, answers) over `count` new questions."""
    from benchmarks.questions import QUESTIONS, fresh_questions
    from bot.answer import answer, service
    from bot.warm import warm

    answer_caches = [service._parse, service._answer_text, service._answer_query]
    warm()
    for question in QUESTIONS:  # every kind's code paths run once before measuring
        answer(question.text, previous=question.previous)
    seen = {question.text for question in QUESTIONS}
    questions = [text for text in fresh_questions(count + len(seen), seed=29) if text not in seen][:count]

    def one_pass() -> float:
        clear_question_caches()
        for cache in answer_caches:
            cache.cache_clear()
        start = time.thread_time()
        for text in questions:
            answer(text)
        return time.thread_time() - start

    cpu = one_pass()
    samples: Counter[str] = Counter()
    main = threading.main_thread().ident or 0
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_S):
            samples[stage_of(sys._current_frames().get(main))] += 1

    switch = sys.getswitchinterval()
    sys.setswitchinterval(SAMPLE_S / 2)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        one_pass()
    finally:
        done.set()
        sampler.join()
        sys.setswitchinterval(switch)
    return cpu / len(questions), samples, len(questions)


def run(*, verbose: bool = True, count: int = 300) -> list[Row]:
    per_answer, samples, answered = measure(count)
    total = sum(samples.values()) or 1
    split = {stage: per_answer * samples[stage] / total for stage in STAGES}
    if verbose:
        print(f"== 1c. CPU per new answer by stage: {answered} fresh questions in a warm process")
        print(
            f"   {per_answer * 1e3:.2f} ms per answer: "
            + ", ".join(f"{stage} {split[stage] * 1e3:.2f} ms" for stage in STAGES)
            + f" ({total} samples)"
        )
    return [
        Row(
            "1c stages",
            "CPU per new answer: parse / advise / view / render / other",
            "-",
            " / ".join(f"{split[stage] * 1e3:.2f}" for stage in STAGES)
            + f" ms (= {per_answer * 1e3:.2f} ms)",
            None,
        )
    ]


if __name__ == "__main__":
    from benchmarks.common import print_table

    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=300, help="how many new questions (default 300)")
    print_table(run(count=parser.parse_args().questions))
