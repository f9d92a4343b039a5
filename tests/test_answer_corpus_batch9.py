"""The held-out batch 9 (tests/corpus/answers_batch9.toml): questions as users type them in team chats over
VRAM + system RAM, the runtime named, RL and preference training, modded cards, budgets and monthly billing,
traffic, clusters, follow-ups, and models released recently (some the registry lacks, which must be named, not
swapped). Written and committed before it was first run; its first-look rate is in the README.

Checked with the fact language of tests/test_answer_corpus.py."""

from __future__ import annotations

from collections import Counter

from test_answer_corpus import assert_facts_well_formed, load_entries, report_pass_rate, run_entry

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
    ids = [e.id for e in ENTRIES]
    assert len(ids) == len(set(ids))
    assert len(ENTRIES) >= 70
    assert sum(e.lang == "zh" for e in ENTRIES) * 2 > len(ENTRIES)
    assert sum(len(e.turns) > 1 for e in ENTRIES) >= 5
    assert set(Counter(e.kind for e in ENTRIES)) == set(KINDS)


def test_batch9_is_well_formed() -> None:
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


def test_batch9_pass_rate() -> None:
    report_pass_rate("batch 9", ENTRIES)
    passed = sum(not run_entry(e) for e in ENTRIES)
    assert passed / len(ENTRIES) >= PASS_RATE, f"batch 9: {passed}/{len(ENTRIES)}"
