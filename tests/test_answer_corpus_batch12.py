"""The held-out batch 12 (tests/corpus/answers_batch12.toml): question shapes no earlier batch used, about
equally in Chinese and English, from team chats and pre-rental checklists: checklists pasted as written
("key: value" lines, bullets, numbered items, a Markdown table, "|"-separated fields), deadlines ("一周内",
"within 24 hours": how many cards to finish by then), latency (time to first token of long prompts, a
first-token budget, a per-user speed target, batch 1), named runtimes on new cards and models (LMDeploy
with a VL model, ExLlamaV2 at 2.5 bpw, TGI, SGLang with Llama 4, MindIE on a 910B4, TensorRT-LLM on B200),
RL by recipe (DAPO, RLOO, REINFORCE++, GRPO on a T4, verl PPO, KTO with ZeRO-3, an LLM judge), modded
cards, yearly / daily / 3-month / spot / per-second billing and weekly budgets, traffic in tokens a day or
as a multiple of the average, clusters, vision / speech / diffusion / embeddings, and chats that switch
language, currency, runtime or add a deadline. Written and committed before it was first run (the first
look: tests/corpus/answers_batch12_first_look.txt).

Checked with the fact language of tests/test_answer_corpus.py."""

from __future__ import annotations

from test_answer_corpus import (
    assert_batch_passes,
    assert_batch_varied,
    assert_batch_well_formed,
    load_entries,
)

BATCH = "answers_batch12.toml"
KINDS = (
    "checklist",
    "deadline",
    "latency",
    "runtime",
    "rl",
    "modded",
    "budget",
    "traffic",
    "cluster",
    "vision",
    "follow_up",
)

ENTRIES = load_entries((BATCH,))
# FIRST LOOK: 49/82 passed (59.8%; tests/corpus/answers_batch12_first_look.txt, run after the commit that
# added the batch, before any fix); 76/82 now; the bar is what the batch passes now less one entry's slack,
# so a regression shows (never below the first look)
PASS_RATE = 75 / 82


def test_batch12_is_big_and_varied() -> None:
    assert_batch_varied(ENTRIES, KINDS, at_least=70)
    assert sum(len(e.turns) > 1 for e in ENTRIES) >= 10


def test_batch12_is_well_formed() -> None:
    assert_batch_well_formed(ENTRIES)


def test_batch12_pass_rate() -> None:
    assert_batch_passes("batch 12", ENTRIES, PASS_RATE)
