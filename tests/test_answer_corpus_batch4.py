"""Issue 18's corpus batch (tests/corpus/answers_batch4.toml): offload, the runtime named, RL and preference
training, long context, pure bf16, Apple unified memory and launch lines. Written before the code; run once
through the code of that day (commit 655b907, with the verdict word fixed: the JSON says "fits", not
"yes"), 8 of its 105 entries passed.

It is checked with the fact language of tests/test_answer_corpus.py and is part of that corpus's 97% bar
(CORPUS_FILES); this module checks its shape and prints its own pass rate."""

from __future__ import annotations

from collections import Counter

from test_answer_corpus import check_fact, load_entries, report_pass_rate

BATCH = "answers_batch4.toml"
KINDS = ("offload", "runtime", "rl", "launch", "long_context", "precision", "apple", "follow_up")


ENTRIES = load_entries((BATCH,))


def test_batch4_is_big_and_varied() -> None:
    ids = [e.id for e in ENTRIES]
    assert len(ids) == len(set(ids))
    assert len(ENTRIES) >= 80
    assert sum(e.lang == "zh" for e in ENTRIES) * 2 > len(ENTRIES)
    assert sum(len(e.turns) > 1 for e in ENTRIES) >= 10
    assert set(Counter(e.kind for e in ENTRIES)) <= set(KINDS)
    assert check_fact({"answer": {"lang": "zh"}}, "lang", "zh") == []


def test_batch4_pass_rate_reported() -> None:
    report_pass_rate("batch 4", ENTRIES)
