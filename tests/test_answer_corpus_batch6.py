"""The held-out batch for what issue 18 still lacked (tests/corpus/answers_batch6.toml): Apple silicon as a
device, a card given only by its size, sequence parallelism and offload speed, beside more offload, runtime,
RL and long-context questions. Written before that code; its first-time rate is in the README.

Checked with the fact language of tests/test_answer_corpus.py."""

from __future__ import annotations

from collections import Counter

from test_answer_corpus import load_entries, report_pass_rate

BATCH = "answers_batch6.toml"
KINDS = ("offload", "runtime", "rl", "long_context", "apple", "size_only", "follow_up")

ENTRIES = load_entries((BATCH,))


def test_batch6_is_big_and_varied() -> None:
    ids = [e.id for e in ENTRIES]
    assert len(ids) == len(set(ids))
    assert len(ENTRIES) >= 40
    assert sum(e.lang == "zh" for e in ENTRIES) * 2 > len(ENTRIES)
    assert sum(len(e.turns) > 1 for e in ENTRIES) >= 5
    assert set(Counter(e.kind for e in ENTRIES)) <= set(KINDS)


def test_batch6_pass_rate() -> None:
    report_pass_rate("batch 6", ENTRIES)
