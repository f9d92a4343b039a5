"""The benchmarks clear what remembers answers to questions, and only that (benchmarks/common.py)."""

from __future__ import annotations

from benchmarks.common import question_caches
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
