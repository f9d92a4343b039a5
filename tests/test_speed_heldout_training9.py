"""Training speed against a ninth held-out set (data/measured/speed_heldout_training9.csv, sources in
speed_heldout_training9_sources.toml): 38 figures from sources none of data/measured's other speed
tables use — InternLM-7B's TGS on 8 to 1,024 A100s (InternLM's train_performance.md, with and without
activation checkpointing), FlagPerf's NVIDIA LLM training cases (Megatron-Core / FlagScale / Megatron-
DeepSpeed 3D layouts of Llama 2 / 3 7B-70B, Mixtral 8x7B and Qwen1.5-MoE on A800, H800 and H100 up to
440 GPUs, FP8 rows, DeepSpeed ZeRO-1 / ZeRO-3 runs of Baichuan2-13B, ChatGLM3-6B and Llama 2 7B, a LoRA
fine-tune on one A100 40GB), Megatron-MoE-ModelZoo's Qwen3-235B-A22B / Qwen3-Next-80B-A3B on 128-256
H100s, and Colossal-LLaMA-2-7B's GPU-hours on 64 A800s — recorded and committed (8c0815d) before any
prediction for it was run: issue 22's outside check, never fitted, never tuned on.

First look (main 6036dae, data/measured/speed_heldout_training9_first_look.txt): 19 of 38 within ±25%, 37
within 2x, median x1.04, worst x0.40. The floor below is that level; it may only rise. The issue's bar
(TARGET_WITHIN_25, all within 2x) is not met. 25 of 38 once FlagPerf's Megatron scripts were read: none
turns on --tp-comm-overlap, so their tensor-parallel collectives are counted as Megatron runs them without
it (data/speed.toml tp_backward_exposed_without_overlap; the sources file's tp_comm_overlap). 27 once the
network a source states is the one its collectives cross (InternLM's "4 x 100Gb RoCE", FlagPerf's
"InfiniBand, 200Gb/s" between machines: the node's, shared by its 8 cards; network_gbit_s_per_node).
"""

from __future__ import annotations

from pathlib import Path

from speed_heldout_checks import TARGET_WITHIN_25, predicted_at_level, sourced_and_unseen

from core.speed.published import TABLES, TRAINING_HELD_OUT_9_TABLE, load_sources

TABLE = TRAINING_HELD_OUT_9_TABLE
ROOT = Path(__file__).resolve().parent.parent
FLOOR_WITHIN_25 = 27 / 38  # 19 at the first look; it may only rise
MAX_OUTSIDE_2X = 1  # the first look's count


def test_the_ninth_training_held_out_table_is_sourced_unseen_and_never_fitted() -> None:
    older = [other for other in TABLES if other != TABLE]
    figures = sourced_and_unseen(TABLE, older, at_least=38)
    assert all(figure.is_training for figure in figures)
    assert {f.kind for f in figures} == {"train", "pretrain_hours"}
    assert {f.method.value for f in figures} == {"full", "lora"}
    assert any(f.pp > 1 for f in figures) and any(f.ep > 1 for f in figures)
    assert any(f.gpus >= 1024 for f in figures)
    assert any(f.gpus == 1 for f in figures)
    sources = load_sources(TABLE)
    assert all(source.framework for source in sources.values())
    urls = {source.url for source in sources.values()}
    for other in older:
        assert not urls & {source.url for source in load_sources(other).values()}, other
    fitting = (ROOT / "tools" / "fit_speed.py").read_text()
    fitting += (ROOT / "core" / "speed" / "fitting.py").read_text()
    assert "training9" not in fitting and "TRAINING_HELD_OUT_9" not in fitting


def test_ninth_training_held_out_figures_are_predicted_at_the_level_reached() -> None:
    assert FLOOR_WITHIN_25 < TARGET_WITHIN_25  # the bar is still ahead
    predicted_at_level(TABLE, floor=FLOOR_WITHIN_25, outside_2x_at_most=MAX_OUTSIDE_2X, median_within=1.3)
