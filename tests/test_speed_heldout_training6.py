"""Training speed against a sixth held-out set (data/measured/speed_heldout_training6.csv, sources in
speed_heldout_training6_sources.toml): 11 figures from sources none of data/measured's other speed
tables use — the LLaMA paper's GPU-hours of LLaMA 7B/13B/33B/65B and OPT-175B (Table 15) and its 380
tokens/s/GPU for 65B on 2048 A100-80GB, Falcon-180B's ~7M GPU-hours (Hugging Face's launch post),
DeepSeek-V2's 172.8K H800 GPU-hours per trillion tokens, Phi-3-mini's 512 H100 x 7 days, Colossal-AI's
LLaMA-65B ZeRO-3 (Gemini) run on 32 A800 and Hugging Face's Llama 2 70B FSDP fine-tune on 2 x 8 A100 —
committed (eab63eb) before any prediction for it was run: issue 22's outside check, never fitted, never
tuned on.

First look (main 957ffb4, data/measured/speed_heldout_training6_first_look.txt): 6 of 11 within ±25%, 9
within 2x, median x1.20, worst x21.44. One recording slip corrected after it (DeepSeek-V2's row had no
global batch, so its 16-stage pipeline was read as idle 15/16 of the time): 6 of 11, 10 within 2x, worst
x11.78 (the HF FSDP 70B run). The floor is that level; it may only rise. The issue's bar
(TARGET_WITHIN_25, all within 2x) is not met.

Second batch (5 rows, t6b-*: the Phi-3-medium, Phi-3.5-MoE and Phi-4 cards' GPUs x days, the Falcon-7B and
Falcon-40B cards' 384 A100 40GB runs), committed (6095a52) after that first look and before its own, which
ran at main c158b71 (the same speed model): 4 of 5 within ±25%. The whole table: 10 of 16 within ±25%, 14
within 2x, median x1.18, worst x11.78. The floor is that level.
"""

from __future__ import annotations

from speed_heldout_checks import TARGET_WITHIN_25, predicted_at_level, sourced_and_unseen

from core.speed.published import TABLES, TRAINING_HELD_OUT_6_TABLE, load_sources

TABLE = TRAINING_HELD_OUT_6_TABLE
FLOOR_WITHIN_25 = 10 / 16  # the two batches' first looks together (6 / 11, then 4 / 5); it may only rise
# the HF FSDP 70B fine-tune (x13.10); Phi-3.5-MoE's GPU-hours (x3.68) came inside (x0.98) once a whole
# pretraining run shards its optimizer over its data-parallel ranks and steps at 4M tokens
MAX_OUTSIDE_2X = 1


def test_the_sixth_training_held_out_table_is_sourced_unseen_and_never_fitted() -> None:
    older = [other for other in TABLES if other != TABLE]
    figures = sourced_and_unseen(TABLE, older, at_least=16)
    assert all(figure.is_training for figure in figures)
    assert {f.kind for f in figures} == {"train", "pretrain_hours"}
    sources = load_sources(TABLE)
    assert all(source.framework for source in sources.values())
    urls = {source.url for source in sources.values()}
    for other in older:
        assert not urls & {source.url for source in load_sources(other).values()}, other


def test_sixth_training_held_out_figures_are_predicted_at_the_level_reached() -> None:
    assert FLOOR_WITHIN_25 < TARGET_WITHIN_25  # the bar is still ahead
    predicted_at_level(TABLE, floor=FLOOR_WITHIN_25, outside_2x_at_most=MAX_OUTSIDE_2X, median_within=1.3)
