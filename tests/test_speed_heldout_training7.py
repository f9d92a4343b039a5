"""Training speed against a seventh held-out set (data/measured/speed_heldout_training7.csv, sources in
speed_heldout_training7_sources.toml): 18 figures from sources none of data/measured's other speed
tables use — the Llama 3 (8B, 70B), Llama 3.2 (1B, 3B) and Llama 4 (Scout, Maverick MoE) cards' H100
GPU-hours, BLOOM-176B's iteration times on 384 A100s (TP 4 x PP 12 x DP 8 at global batch 2048 and
at the ramp's 16), XTuner's ZeRO-3 full fine-tunes of Llama 2 70B and Yi-34B on 32 A100s and
VectorLM's FSDP LoRA / full fine- tunes of Llama 3 8B on 1-4 A100s — recorded and committed before
any prediction for it was run: issue 22's outside check, never fitted, never tuned on.

First look (main 1d9d8d1, data/measured/speed_heldout_training7_first_look.txt): 8 of 18 within
±25%, 15 within 2x, median x0.82, worst x0.16. The floor below is that level; it may only rise. The
issue's bar (TARGET_WITHIN_25, all within 2x) is not met.
"""

from __future__ import annotations

from pathlib import Path

from speed_heldout_checks import TARGET_WITHIN_25, predicted_at_level, sourced_and_unseen

from core.speed.published import TABLES, TRAINING_HELD_OUT_7_TABLE, load_sources

TABLE = TRAINING_HELD_OUT_7_TABLE
ROOT = Path(__file__).resolve().parent.parent
FLOOR_WITHIN_25 = 8 / 18  # the first look; it may only rise
MAX_OUTSIDE_2X = 3  # the Llama 3 8B and Llama 3.2 1B / 3B cards' GPU-hours


def test_the_seventh_training_held_out_table_is_sourced_unseen_and_never_fitted() -> None:
    older = [other for other in TABLES if other != TABLE]
    figures = sourced_and_unseen(TABLE, older, at_least=18)
    assert all(figure.is_training for figure in figures)
    assert {f.kind for f in figures} == {"train", "pretrain_hours"}
    assert {f.method.value for f in figures} == {"full", "lora"}
    assert any(f.pp > 1 for f in figures) and any(f.gpus >= 384 for f in figures)
    sources = load_sources(TABLE)
    assert all(source.framework for source in sources.values())
    urls = {source.url for source in sources.values()}
    for other in older:
        assert not urls & {source.url for source in load_sources(other).values()}, other
    fitting = (ROOT / "tools" / "fit_speed.py").read_text()
    fitting += (ROOT / "core" / "speed" / "fitting.py").read_text()
    assert "training7" not in fitting and "TRAINING_HELD_OUT_7" not in fitting


def test_seventh_training_held_out_figures_are_predicted_at_the_level_reached() -> None:
    assert FLOOR_WITHIN_25 < TARGET_WITHIN_25  # the bar is still ahead
    predicted_at_level(TABLE, floor=FLOOR_WITHIN_25, outside_2x_at_most=MAX_OUTSIDE_2X, median_within=1.3)
