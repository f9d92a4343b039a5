"""Runtimes as data (data/runtimes.toml, core/runtimes.py): each engine is one profile; the parser names it
from the profile's words, the estimator, speed model and advisor read its fields, never its id."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.cli import main
from core.estimator import estimate
from core.parser import parse
from core.paths import ROOT
from core.query import Precision, Query, Task
from core.runtimes import load_runtimes, runtime_profile
from core.speed import load_speed_constants


def test_every_profile_is_complete() -> None:
    table = load_runtimes()
    assert table.serving_default.kv_pool and table.training_default.id == "transformers"
    for profile in table.profiles:
        assert profile.name and profile.source and profile.words
        if profile.defaults.precision is not None:
            Precision(profile.defaults.precision)
        terms = load_speed_constants().runtime(profile.speed_terms)  # every profile has its speed terms
        if profile.kv_pool:
            assert profile.memory.memory_share is not None and terms.continuous_batching


@pytest.mark.parametrize(
    ("text", "runtime"),
    [
        ("serve qwen2.5-7b with sglang on an h100", "sglang"),
        ("用SGLang部署qwen2.5 72b，4张H100", "sglang"),
        ("qwen2.5-72b-instruct-awq 用 sglang 还是 vllm 部署，2 张 L20", "vllm"),
        ("ollama 跑 qwen2.5 14b，3060 12G够吗", "ollama"),
        ("run llama 3.1 8b in llama.cpp on a 4060", "llama.cpp"),
        ("qwen2.5 7b with hf transformers on a 4090", "transformers"),
        ("serve qwen2.5 7b for 20 users on an L40S", "vllm"),
    ],
)
def test_questions_name_their_runtime(text: str, runtime: str) -> None:
    parsed = parse(text)
    assert parsed.query is not None and parsed.query.runtime == runtime


def test_sglang_takes_its_own_share_of_the_card() -> None:
    result = estimate(Query(task=Task.INFERENCE, model="qwen2.5-7b", card="h100-sxm", runtime="sglang"))
    assert result.query.gpu_memory_utilization == pytest.approx(0.88)
    assert result.vllm is not None and "gpu_memory_utilization" in result.query.defaulted
    vllm = estimate(Query(task=Task.INFERENCE, model="qwen2.5-7b", card="h100-sxm", runtime="vllm"))
    assert vllm.vllm is not None and result.vllm.kv_pool_bytes < vllm.vllm.kv_pool_bytes
    assert result.uncertainty > vllm.uncertainty  # SGLang's own buffers are not measured


def test_ollama_defaults_to_a_4bit_gguf_and_a_4k_context() -> None:
    filled = Query(task=Task.INFERENCE, model="qwen2.5-14b", runtime="ollama").with_defaults()
    assert (filled.precision, filled.seq) == (Precision.Q4_K_M, 4096)
    assert {"precision", "seq"} <= set(filled.defaulted)


def test_llama_cpp_prefills_in_micro_batches() -> None:
    long = {"task": Task.INFERENCE, "model": "llama-3.1-8b", "seq": 32_768, "precision": Precision.Q4_K_M}
    chunked = estimate(Query(runtime="llama.cpp", **long)).breakdown
    whole = estimate(Query(runtime="transformers", **long)).breakdown
    assert chunked.kv_cache == whole.kv_cache and chunked.activations < whole.activations / 8


def test_unknown_runtime_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown runtime"):
        Query(runtime="tensorflow-lite")


def test_core_names_no_runtime_but_the_data() -> None:
    """Adding a runtime is a profile row: no module of core tests an engine by its id."""
    ids = [p.id for p in load_runtimes().profiles if p.id not in ("transformers", "vllm")]
    pattern = re.compile("|".join(rf"[\"']{re.escape(i)}[\"']" for i in ids))
    # core/speed names its fitted speed-term tables (data/speed.toml), which profiles point to
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "core").rglob("*.py")
        if "speed" not in path.parts and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    assert not re.search(
        r"Runtime\.VLLM|Runtime\.TRANSFORMERS",
        _core_text(exclude=("query.py", "measured.py", "published.py")),
    )


def _core_text(exclude: tuple[str, ...]) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "core").rglob("*.py") if p.name not in exclude
    )


def test_estimate_takes_any_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = [
        "estimate",
        "--model",
        "qwen2.5-7b",
        "--task",
        "inference",
        "--runtime",
        "sglang",
        "--card",
        "h100",
    ]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["query"]["runtime"] == "sglang" and data["query"]["gpu_memory_utilization"] == 0.88
    assert runtime_profile("sglang").name == "SGLang"
