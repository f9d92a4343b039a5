"""The ninth held-out speed table (data/measured/speed_heldout9.csv, sources in
speed_heldout9_sources.toml): 118 serving figures from sources none of data/measured's other speed
tables use — LMDeploy v0.1.0a1's static inference on A100-80G (InternLM/lmdeploy
docs/en/benchmark/a100_fp16.md: Llama 2 7B / 13B / 70B at batch 1 and 64), mlc-ai/llm-perf-bench's
Oct-2023 batch-1 decode of vLLM, llama.cpp and ExLlamaV2 (Llama 2 7B / 13B on one RTX 3090 Ti / 4090;
Llama 2 70B in FP16 and 4-bit on 2-8 PCIe A100, 2-8 A10G and 2 RTX 4090) and GPUStack's performance-lab
burst runs (500 requests at once, 2K / 4K inputs) of vLLM 0.10-0.13, SGLang 0.5 and TensorRT-LLM 1.2
with Qwen3 14B / 32B / 235B-A22B, gpt-oss 20B / 120B, GLM-4.6, DeepSeek-R1 and DeepSeek-V3.2 on A100,
H100 and H200, and (a second batch, recorded after the first look and before its own predictions)
Ollama's batch-1 decode of Llama 3.2 / 3.3, the DeepSeek-R1 distills and Qwen2.5 on one RTX 4060 Ti
16GB, one Tesla P40 and two P40s (dambergn/ollama-benchmarks) — recorded and committed (8c0815d; the
second batch 6525a39) before any prediction for it was run: issue 22's outside check, never fitted,
never tuned on.

First look (main 6036dae, data/measured/speed_heldout9_first_look.txt): 52 of 94 within ±25%, 85 within
2x, median x1.04, worst x4.14. After main's 8dd5586 (ExLlamaV2's own kernels, landed from heldout8's
evidence, not this table's) it is 54 of 94: the four ExLlamaV2 rows x0.73-0.84 -> x0.92-1.06. The second
batch's first look (main d30ee2d): 11 of 24 within ±25%, 22 within 2x; the whole table 65 of 118 within
±25%, 107 within 2x, median x1.10, worst x4.14 (vLLM 0.2's batch-1 decode of 4-bit Llama 2 70B on 8 PCIe
A100s). The floor below is that whole-table level, so main stays green while the speed model changes; it
may only rise. The issue's bar (speed_heldout_checks.TARGET_WITHIN_25: at least 80% within ±25%, all
within 2x) is not met.
"""

from __future__ import annotations

from pathlib import Path

from speed_heldout_checks import TARGET_WITHIN_25, predicted_at_level, sourced_and_unseen

from core.speed.published import FITTED_TABLE, HELD_OUT_9_TABLE, TABLES, load_sources

TABLE = HELD_OUT_9_TABLE
ROOT = Path(__file__).resolve().parent.parent
FLOOR_WITHIN_25 = 65 / 118  # the level after the second batch's first look; it may only rise
MAX_OUTSIDE_2X = 11  # the same


def test_the_ninth_held_out_table_is_sourced_unseen_and_never_fitted() -> None:
    older = [other for other in TABLES if other != TABLE]
    figures = sourced_and_unseen(TABLE, older, at_least=118)
    assert not any(figure.is_training for figure in figures)
    runtimes = {"lmdeploy", "vllm", "llama.cpp", "exllamav2", "sglang", "tensorrt-llm", "ollama"}
    assert {f.runtime for f in figures} == runtimes
    cards = {"h100-sxm", "h200-sxm", "a100-80gb-sxm", "a10g", "rtx-4090", "rtx-4060-ti-16gb", "tesla-p40"}
    assert cards <= {f.card for f in figures}
    assert any(f.batch == 1 for f in figures) and any(f.batch >= 500 for f in figures)
    assert any(f.gpus >= 8 for f in figures)
    urls = {source.url for source in load_sources(TABLE).values()}
    for other in older:
        assert not urls & {source.url for source in load_sources(other).values()}, other


def test_the_fitting_tool_reads_only_the_fitted_table() -> None:
    fitting = (ROOT / "tools" / "fit_speed.py").read_text()
    fitting += (ROOT / "core" / "speed" / "fitting.py").read_text()
    assert "heldout9" not in fitting and "HELD_OUT_9" not in fitting
    assert FITTED_TABLE == "speed" and TABLE != FITTED_TABLE


def test_ninth_held_out_figures_are_predicted_at_the_level_reached() -> None:
    assert FLOOR_WITHIN_25 < TARGET_WITHIN_25  # the bar is still ahead
    predicted_at_level(TABLE, floor=FLOOR_WITHIN_25, outside_2x_at_most=MAX_OUTSIDE_2X, median_within=1.3)
