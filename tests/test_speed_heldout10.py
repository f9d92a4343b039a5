"""The tenth held-out speed table (data/measured/speed_heldout10.csv, sources in
speed_heldout10_sources.toml): 52 serving figures from sources none of data/measured's other speed
tables use — a later TensorRT-LLM perf-overview (docs/source/developer-guide/, @03e27c7): every H100 and
H200 cell of DeepSeek-R1-0528, gpt-oss 120B / 20B, Llama 3.3 70B, Llama 4 Maverick and Qwen3 235B-A22B
(trtllm-bench throughput, 1,000-3,000 requests queued at once, 1K-32K in or out, attention DP + EP for the
MoE models), and Ollama 0.7.0's batch-1 decode of Mistral 7B, Phi-4 and two DeepSeek-R1 distills on one
RTX 5090 and one RTX 3090, and (a second batch, recorded after the first look and before its own
predictions) vLLM's performance-benchmark CI latency tests (batch 8, 32 in / 128 out: Llama 3.1 8B, Llama 3
70B, Mixtral 8x7B on H200, A100 and H100) — recorded and committed (d2e2cdb; the second batch d988872) before
any prediction for it was run: issue 22's outside check, never fitted, never tuned on. Engineers changing
the speed model never open it (tools/speed_heldout.py --exclude 10).

First look (main b7d1671, data/measured/speed_heldout10_first_look.txt): 23 of 52 within ±25%, 45 within
2x, median x1.28, worst x2.47. The second batch's first look (main 583250b): 6 of 9 within ±25% (the three
Mixtral rows x0.53-0.68); the whole table 29 of 61 within ±25%, 54 within 2x, median x1.20, worst x2.47. The
floor below is that whole-table level, so main stays green while the speed model changes; it may only rise.
The median bound leaves the first look's median some room (x1.4). The issue's bar
(speed_heldout_checks.TARGET_WITHIN_25: at least 80% within ±25%, all within 2x) is not met.
"""

from __future__ import annotations

from pathlib import Path

from speed_heldout_checks import TARGET_WITHIN_25, predicted_at_level, sourced_and_unseen

from core.speed.published import FITTED_TABLE, HELD_OUT_10_TABLE, TABLES, load_sources

TABLE = HELD_OUT_10_TABLE
ROOT = Path(__file__).resolve().parent.parent
FLOOR_WITHIN_25 = 29 / 61  # the level after the second batch's first look; it may only rise
MAX_OUTSIDE_2X = 7  # the same (the second batch adds none outside 2x)


def test_the_tenth_held_out_table_is_sourced_unseen_and_never_fitted() -> None:
    older = [other for other in TABLES if other != TABLE]
    figures = sourced_and_unseen(TABLE, older, at_least=61)
    assert not any(figure.is_training for figure in figures)
    assert {f.runtime for f in figures} == {"tensorrt-llm", "ollama", "vllm"}
    assert {"h100-sxm", "h200-sxm", "a100-80gb-sxm", "rtx-5090", "rtx-3090"} <= {f.card for f in figures}
    assert any(f.batch == 1 for f in figures) and any(f.batch >= 1000 for f in figures)
    assert any(f.ep > 1 for f in figures) and any(f.input_len >= 32768 for f in figures)
    urls = {source.url for source in load_sources(TABLE).values()}
    for other in older:
        assert not urls & {source.url for source in load_sources(other).values()}, other


def test_the_fitting_tool_reads_only_the_fitted_table() -> None:
    fitting = (ROOT / "tools" / "fit_speed.py").read_text()
    fitting += (ROOT / "core" / "speed" / "fitting.py").read_text()
    assert "heldout10" not in fitting and "HELD_OUT_10" not in fitting
    assert FITTED_TABLE == "speed" and TABLE != FITTED_TABLE


def test_tenth_held_out_figures_are_predicted_at_the_level_reached() -> None:
    assert FLOOR_WITHIN_25 < TARGET_WITHIN_25  # the bar is still ahead
    predicted_at_level(TABLE, floor=FLOOR_WITHIN_25, outside_2x_at_most=MAX_OUTSIDE_2X, median_within=1.4)
