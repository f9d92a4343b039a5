"""Ollama's default context, as its source sets it, stated in the answer with the version it holds for.

ollama/ollama server/routes.go (commit 0334ffa62, released in v0.15.5 on 2026-02-05) sets num_ctx by the total
VRAM of all GPUs: 262,144 from 47 GiB, 32,768 from 23 GiB, else 4,096 (the thresholds sit 1 GiB under 48 / 24
"to account for small differences in the exact value"); v0.6.7 (2025-04-30, commit 44b466eeb) to v0.15.4
used 4,096 on every card, 2,048 before. An answer on a 24 GB card therefore assumes 32,768 tokens and says
why, with the older default beside it, so a user on an older Ollama knows to read 4,096."""

from __future__ import annotations

import pytest

from bot.answer import answer
from core.jobs.constants import load_job_constants
from core.jobs.defaults import ollama_context, ollama_context_rule
from core.units import GIB


@pytest.mark.parametrize(
    ("gib", "tokens"),
    [(8, 4096), (22.9, 4096), (23.99, 32_768), (46.9, 32_768), (47, 262_144), (80 * 8, 262_144)],
)
def test_the_tiers_of_the_source(gib: float, tokens: int) -> None:
    assert ollama_context(int(gib * GIB), 0) == tokens
    assert ollama_context_rule(int(gib * GIB)).tokens == tokens


def test_the_versions_are_the_sources() -> None:
    c = load_job_constants().ollama
    assert (c.context_tiers_since, c.context_before_since) == ("0.15.5", "0.6.7")
    assert (c.context_before, c.context_first) == (4096, 2048)
    assert "0334ffa62" in open_jobs_toml() and "44b466eeb" in open_jobs_toml()


def open_jobs_toml() -> str:
    from core.paths import DATA_DIR

    return (DATA_DIR / "jobs.toml").read_text(encoding="utf-8")


def test_a_24gb_card_assumes_32k_and_says_why() -> None:
    reply = answer("ollama run qwen2.5 14b on a 4090", lang="en")
    assert "context 32,768 tokens" in reply.html
    rule = reply.facts["context_rule"]
    assert isinstance(rule, dict) and rule["tokens"] == 32_768
    assert "Ollama 0.15.5 and later set num_ctx by the cards' total VRAM, 32,768 tokens for 23–47 GiB" in (
        reply.html
    )
    assert "from 0.6.7 until 0.15.5 it was 4,096 on every card (2,048 before that)" in reply.html


def test_in_chinese() -> None:
    reply = answer("用ollama在3060上跑llama 3.1 8b", lang="zh")
    assert "上下文 4,096 token" in reply.html
    assert "Ollama 0.15.5 起按所有卡的显存总量设 num_ctx，不到 23 GiB 为 4,096 token" in reply.html
    assert "0.6.7 到 0.15.5 之前每张卡都是 4,096（更早是 2,048）" in reply.html


def test_a_model_shorter_than_the_tier_is_capped_and_said() -> None:
    reply = answer("ollama run llama 3 8b on an A100 80GB", lang="en")
    assert "context 8,192 tokens" in reply.html
    assert "262,144 tokens from 47 GiB, capped at the model's own 8,192" in reply.html


def test_a_context_asked_is_not_explained() -> None:
    reply = answer("ollama run qwen2.5 14b on a 4090 with num_ctx 8192", lang="en")
    assert "context 8,192 tokens" in reply.html and "context_rule" not in reply.facts
    assert "set num_ctx by the cards' total VRAM" not in reply.html


def test_the_cap_is_the_gguf_context_not_the_base_models() -> None:
    """Ollama caps num_ctx at the GGUF's n_ctx_train: Qwen2.5's Instruct configs say 32,768 ("The current
    config.json is set for context length up to 32,768 tokens", YaRN beyond), not the base model's 131,072."""
    reply = answer("ollama run qwen2.5 72b on two 3090s", lang="en")
    assert "context 32,768 tokens" in reply.html
    assert "262,144 tokens from 47 GiB, capped at the model's own 32,768" in reply.html
