"""The held-out batch 8 (tests/corpus/answers_batch8.toml): questions as new users type them in Telegram
over VRAM + system RAM, the runtime named, RL and preference training, modded cards, budgets and monthly vs
hourly billing, traffic, clusters, vision / video / speech, Apple silicon, plain fit questions, newer models
and cards, and models, cards and runtimes the data lacks. Written and committed before it was first run; its
first-look rate is in the README.

Checked with the fact language of tests/test_answer_corpus.py."""

from __future__ import annotations

from collections import Counter

from test_answer_corpus import assert_facts_well_formed, load_entries, report_pass_rate, run_entry

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
    ids = [e.id for e in ENTRIES]
    assert len(ids) == len(set(ids))
    assert len(ENTRIES) >= 60
    assert sum(e.lang == "zh" for e in ENTRIES) * 2 > len(ENTRIES)
    assert sum(len(e.turns) > 1 for e in ENTRIES) >= 5
    assert set(Counter(e.kind for e in ENTRIES)) == set(KINDS)


def test_batch8_is_well_formed() -> None:
    """Every fact in the fact language; the cards and models it names are ids of the catalog / registries."""
    from core.catalog import load_catalog
    from core.registry import load_registry
    from core.vision.registry import load_vision_registry

    catalog = load_catalog().by_id
    models = set(load_registry().by_id) | set(load_vision_registry().models)
    for e in ENTRIES:
        assert e.lang in ("zh", "en"), e
        assert e.expect, e
        assert_facts_well_formed(e, catalog, models)


def test_batch8_pass_rate() -> None:
    report_pass_rate("batch 8", ENTRIES)
    passed = sum(not run_entry(e) for e in ENTRIES)
    assert passed / len(ENTRIES) >= PASS_RATE, f"batch 8: {passed}/{len(ENTRIES)}"
