"""The held-out batch 9 (tests/corpus/answers_batch9.toml): questions as users type them in team chats over
VRAM + system RAM, the runtime named, RL and preference training, modded cards, budgets and monthly billing,
traffic, clusters, follow-ups, and models released recently (some the registry lacks, which must be named, not
swapped). Written and committed before it was first run; its first-look rate is in the README.

Checked with the fact language of tests/test_answer_corpus.py."""

from __future__ import annotations

from test_answer_corpus import (
    assert_batch_passes,
    assert_batch_varied,
    assert_batch_well_formed,
    load_entries,
)

BATCH = "answers_batch9.toml"
KINDS = (
    "host_ram",
    "runtime",
    "rl",
    "modded",
    "budget",
    "traffic",
    "cluster",
    "new_model",
    "fit",
    "follow_up",
)

ENTRIES = load_entries((BATCH,))
# 59/75 passed at first look (tests/corpus/answers_batch9_first_look.txt, the commit that added the file),
# 73/75 now; the bar is what the batch passes now less one entry's slack, so a regression shows (what still
# fails is listed in the README)
PASS_RATE = 0.96


def test_batch9_is_big_and_varied() -> None:
    assert_batch_varied(ENTRIES, KINDS, at_least=70)


def test_batch9_is_well_formed() -> None:
    assert_batch_well_formed(ENTRIES)


def test_batch9_pass_rate() -> None:
    assert_batch_passes("batch 9", ENTRIES, PASS_RATE)
