"""Training speed against a second held-out set (data/measured/speed_heldout_training.csv, sources in
speed_heldout_training_sources.toml): training figures from sources in neither the fitted table nor the first
held-out one, recorded before gpufit's predictions for them were looked at and before the training model of
issue 22 was changed.

First look (the constants and training model of main at e4c6b28, before any training term was added): 11 of 15
within ±25% (median x0.96), all 15 within 2x, worst x0.71 (fms-l2-70b-128: FSDP1 over 128 A100 with activation
checkpointing, gpufit too slow). The misses: NeMo 24.07's Llama 2 13B and 70B SFT with a pipeline of 4 and no
virtual stages (x0.74, x0.80: the bubble is charged in full), fms-fsdp's 70B (x0.71) and its whole 7B run's
GPU-hours (x1.31, gpufit slower).

After issue 22's training terms (framework utilisation, tensor parallelism's all-reduces and FSDP's gathers
over NVLink or the network, QLoRA's per-micro-batch dequantisation, a stated power cap; fitted to
data/measured/speed.csv only, with Qwen's Hugging Face Trainer profile added there): 12 of 15 within ±25%
(median x0.98), all within 2x. Still outside: NeMo's Llama 2 13B SFT with a pipeline of 4 (x0.78), fms-fsdp's
70B FSDP over 128 A100 (x0.70: 72% of the A100's peak counting the recompute, above what the fitted PyTorch
framework reaches) and its 7B run's GPU-hours (x1.68: IBM's run lost almost nothing to restarts, while the
goodput is fitted to Meta's 2,048-GPU runs).

With v3's terms (FSDP rings across nodes split over the node's NICs, PyTorch's tensor parallelism
unoverlapped, attention at the BF16 peak under FP8): still 12 of 15 (median x0.97), the 7B run's GPU-hours
x1.47.

The test holds the level reached (FLOOR_WITHIN_25), so that it can only rise; the issue's bar (80% within
±25%, all within 2x) is speed_heldout_checks.TARGET_WITHIN_25.
"""

from __future__ import annotations

from speed_heldout_checks import predicted_at_level, sourced_and_unseen

from core.speed.published import FITTED_TABLE, HELD_OUT_TABLE

TABLE = "speed_heldout_training"
# the level reached (first look 11 / 15; 13 / 15 once the fms run's GPU-hours are read as its tokens over its
# own 3,700 tokens/s/GPU, no goodput: published.Source.hours_from_throughput); it may only rise
FLOOR_WITHIN_25 = 13 / 15


def test_the_training_held_out_table_is_sourced_new_and_never_fitted() -> None:
    figures = sourced_and_unseen(TABLE, (FITTED_TABLE, HELD_OUT_TABLE), at_least=15)
    assert all(figure.is_training for figure in figures)


def test_training_held_out_figures_are_predicted_at_the_level_reached() -> None:
    predicted_at_level(TABLE, floor=FLOOR_WITHIN_25, outside_2x_at_most=0, median_within=1.2)
