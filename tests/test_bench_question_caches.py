"""The benchmarks clear what remembers answers to questions, and only that (core/warm.py), as the bot's start
rehearsal does."""

from __future__ import annotations

from benchmarks.common import question_caches
from benchmarks.questions import QUESTIONS, fresh_questions
from bot.warm import REHEARSAL, rehearse
from core.estimator import memory
from core.jobs.constants import load_job_constants
from core.parser.normalize import normalize
from core.runtimes import load_runtimes


def test_question_caches_are_the_per_question_ones_not_the_loaders() -> None:
    load_runtimes(), load_job_constants(), normalize("a 4090?")
    caches = question_caches()
    assert memory._estimate_cached in caches and normalize in caches
    # a table read once per process is not an answer: a running bot keeps it, so a benchmark does too
    assert load_runtimes not in caches and load_job_constants not in caches


def test_the_start_rehearsal_leaves_no_answer_part_behind_and_is_no_benchmark_question() -> None:
    """bot/warm.py answers a few questions at start so the first users do not pay for first use; it leaves
    nothing cached for those questions' inputs, and none of them is a benchmark question (the fresh-start
    bench asks only questions new to the process)."""
    rehearse()
    assert all(cache.cache_info().currsize == 0 for cache in question_caches())
    asked = {q.text for q in QUESTIONS} | set(fresh_questions(750))
    assert not asked & set(REHEARSAL)
