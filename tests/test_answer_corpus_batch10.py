"""The held-out batch 10 (tests/corpus/answers_batch10.toml): questions as users type them in team chats over
VRAM + system RAM (llama.cpp, Ollama, LM Studio, ComfyUI, DeepSpeed ZeRO offload, KTransformers, vLLM CPU
offload), the runtime named (vLLM, SGLang, TensorRT-LLM, LMDeploy, TGI, llama.cpp, Ollama), RL and preference
training with verl / TRL / OpenRLHF / LLaMA-Factory, modded cards, budgets and monthly billing, traffic,
clusters, long context and MoE, on models and cards the earlier batches used little. Written and committed
before it was first run: 58/72 passed at first look (tests/corpus/answers_batch10_first_look.txt).

Checked with the fact language of tests/test_answer_corpus.py."""

from __future__ import annotations

from test_answer_corpus import (
    assert_batch_passes,
    assert_batch_varied,
    assert_batch_well_formed,
    load_entries,
)

BATCH = "answers_batch10.toml"
KINDS = (
    "host_ram",
    "runtime",
    "rl",
    "modded",
    "budget",
    "traffic",
    "cluster",
    "long_context",
    "moe",
    "follow_up",
)

ENTRIES = load_entries((BATCH,))
# FIRST LOOK: 58/72 passed (80.6%; tests/corpus/answers_batch10_first_look.txt, the commit that added the
# batch, before any fix); 70/72 now; the bar is what the batch passes now less one entry's slack, so a
# regression shows (what still fails is listed in the README)
PASS_RATE = 0.95


def test_batch10_is_big_and_varied() -> None:
    assert_batch_varied(ENTRIES, KINDS, at_least=70)
    assert sum(len(e.turns) > 1 for e in ENTRIES) >= 8


def test_batch10_is_well_formed() -> None:
    assert_batch_well_formed(ENTRIES)


def test_batch10_pass_rate() -> None:
    assert_batch_passes("batch 10", ENTRIES, PASS_RATE)
