"""The held-out batch 8 (tests/corpus/answers_batch8.toml): questions as new users type them in Telegram
over VRAM + system RAM, the runtime named, RL and preference training, modded cards, budgets and monthly vs
hourly billing, traffic, clusters, vision / video / speech, Apple silicon, plain fit questions, newer models
and cards, and models, cards and runtimes the data lacks. Written and committed before it was first run; its
first-look rate is in the README.

Checked with the fact language of tests/test_answer_corpus.py."""

from __future__ import annotations

from test_answer_corpus import (
    assert_batch_passes,
    assert_batch_varied,
    assert_batch_well_formed,
    load_entries,
)

BATCH = "answers_batch8.toml"
KINDS = (
    "host_ram",
    "runtime",
    "rl",
    "modded",
    "budget",
    "traffic",
    "cluster",
    "vision",
    "apple",
    "unknown_model",
    "fit",
    "follow_up",
)

ENTRIES = load_entries((BATCH,))
# 63/74 passed at first look (the commit that added the file), 73/74 now; the bar is what the batch passes now
# less one entry's slack, so a regression shows (what still fails is listed in the README)
PASS_RATE = 0.97


def test_batch8_is_big_and_varied() -> None:
    assert_batch_varied(ENTRIES, KINDS, at_least=60)


def test_batch8_is_well_formed() -> None:
    assert_batch_well_formed(ENTRIES)


def test_batch8_pass_rate() -> None:
    assert_batch_passes("batch 8", ENTRIES, PASS_RATE)
