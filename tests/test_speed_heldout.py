"""Speed against published figures the fit never sees (data/measured/speed_heldout.csv, sources in
speed_heldout_sources.toml): the outside check of issue 22, held as a test.

The figures were written down from their sources before gpufit's predictions for them were looked at. The
issue's bar is at least 80% within ±25% and all within 2x. The first look (the constants of commit a223acd)
gave 25 of 50 within ±25% (median x1.23), 49 of 50 within 2x (worst x2.80): the bar is NOT met yet. What
misses, and why as far as the sources tell (each an older or a different stack than the ones fitted):
- torchtitan on Grand Teton H100s (x1.3-1.6): HBM2e H100s at a 500 W limit (the source: peak "between SXM and
  NVL"), and torchtitan's FSDP2 reaching 33-39% MFU where Megatron-Core, which the fit saw, reaches ~50%.
  Issue 22's training terms (the framework's utilisation, the stated power cap, FSDP's gathers over NVLink or
  the network, tensor parallelism's all-reduces; none fitted to this table) bring the 11 torchtitan rows from
  2 to 5 within ±25% (x0.69-1.48, median x1.18): the 8B on 8 H100 without
  torch.compile (x1.43) and the 405B 1F1B pipeline (x1.48) still run slower than the fitted PyTorch-native
  framework (torchtune) predicts, the A100 70B (x0.69) faster;
- Hugging Face generate with transformers 4.38 / PyTorch 2.1 (Qwen1.5, Qwen2; x1.2-1.4): slower per layer than
  the 4.46 and 4.51 the fit saw;
- TensorRT-LLM 0.5 / 0.7a on H200 with long outputs (x1.5-2.8): its generation kernels for grouped-query
  attention before XQA (the 0.7a blog: GQA 2.4x faster than 0.5), the same cost that keeps the 70B
  2048/2048 row of speed.csv excluded;
- vLLM 0.4.2's MoE and long-context decode (Qwen2-57B-A14B x1.4-1.9).
So this test holds the level reached (FLOOR_WITHIN_25, MAX_OUTSIDE_2X), so that it can only rise, and the
target stays the issue's (speed_heldout_checks.TARGET_WITHIN_25).

Since then (issue 22, servespeed): TensorRT-LLM releases before the XQA kernel (0.8) re-read each KV head per
query head for GQA models (data/speed.toml legacy_gqa_kv_read_factor, fitted on speed.csv's 0.6.1 row only):
27 of 50 within ±25%, all 50 within 2x (worst x1.95, vLLM 0.4.2's Qwen2-57B-A14B at 30k); with the training
terms (trainspeed) merged: 30 of 50. With torchtitan's per-op selective activation checkpointing counted
(every second matmul recomputed) and FlashAttention-2's share of Hopper's peak for PyTorch-native stacks
(trainspeed, data/speed.toml): 34 of 50 (the torchtitan rows 9 of 11; left: the 70B on 64 A100 x0.77 and the
405B's plain 1F1B x1.41).

Then (servespeed, second shift): transformers' KV passes counted as its code makes them (core/speed/terms.py
kv_passes: DynamicCache's torch.cat reads and rewrites the held KV heads, repeat_kv copies them per query head
only under grouped-query attention, attention reads the copy) instead of one factor times the group: the seven
Qwen1.5 rows outside ±25% (no GQA, 6k-30k tokens, x1.25-1.33) come to x1.11-1.24, the fit stays 146 of 146 and
leave-one-source-out 111 -> 112: 41 of 50 within ±25% with trainspeed's terms (34 without this).

Then (servespeed, issue 22's serving pass): vLLM V0's eager decode past 8192 tokens of context (Qwen2 72B at
30k x1.38 -> x1.28) and the legacy GQA kernel's re-reads as a share per extra query head (the H200 launch
blog's Falcon-180B-page 70B row at 2048 tokens x0.79 -> x0.82): 42 of 50.
"""

from __future__ import annotations

from pathlib import Path

from speed_heldout_checks import predicted_at_level, sourced_and_unseen

from core.speed.published import FITTED_TABLE, HELD_OUT_2_TABLE, HELD_OUT_3_TABLE, HELD_OUT_TABLE

FLOOR_WITHIN_25 = 42 / 50  # the level reached: it may only rise
MAX_OUTSIDE_2X = 0
ROOT = Path(__file__).resolve().parent.parent


def test_the_held_out_table_is_sourced_and_never_fitted() -> None:
    figures = sourced_and_unseen(HELD_OUT_TABLE, (FITTED_TABLE,), at_least=30)
    assert {f.kind for f in figures} >= {"generate", "static_batch", "train"}
    assert {f.runtime for f in figures if not f.is_training} >= {"vllm", "transformers", "tensorrt-llm"}
    for path in ("tools/fit_speed.py", "core/speed/fitting.py"):
        text = (ROOT / path).read_text()
        assert "heldout" not in text and "HELD_OUT" not in text, f"{path} reads the held-out table"


def test_held_out_figures_are_predicted_at_the_level_reached() -> None:
    predicted_at_level(
        HELD_OUT_TABLE, floor=FLOOR_WITHIN_25, outside_2x_at_most=MAX_OUTSIDE_2X, median_within=1.3
    )


# The second held-out set (speed_heldout2.csv): serving at saturation (trtllm-bench), static batches and TTFT
# of TensorRT-LLM 0.9.0, SGLang on 8x B200 and llama.cpp, written down before any prediction was looked at.
# First look (the constants of commit e4c6b28, before any change of the speed model made after reading it):
# 16 of 26 within ±25% (median x0.98), 25 of 26 within 2x (worst x0.40, Qwen3-235B at saturation
# under TensorRT-LLM's expert parallelism + attention DP). The floor holds the level reached; the
# target is the issue's. Since: TensorRT-LLM's own batch cap (max_batch_size 2048, not vLLM's 256) for the
# requests that run at once, and the pre-XQA GQA term (which leaves 0.9.0 and 1.0 as they were):
# 19 of 26 within ±25%, all within 2x (worst x0.52, Llama 3.1 8B at saturation: the page does not say the
# KV dtype; 16-bit is assumed, which halves the requests the pool holds if the checkpoint's KV is FP8).
# Then (servespeed, with the third set): the 1.0 rows' KV read as FP8 — TensorRT-LLM's own 0.17 page runs the
# same nvidia/*-FP8 ModelOpt checkpoints with an FP8 KV cache and publishes the same throughputs (H200 8B
# 1000/1000: 17,538 on 0.17 against 17,744 on 1.0) — a re-reading made after the first look, so said here;
# each kernel on its own roofline (a step's GEMMs, then its attention), TensorRT-LLM's KV pool as a share of
# the memory free after loading, and MoE prompts reading the experts their tokens route to: 19 of 26 within
# ±25%, all within 2x (worst x0.59, SGLang's Qwen3-235B on 8x B200 at concurrency 1; with the 1.0 rows' KV
# left 16-bit it would be 15 of 26). Then llama.cpp builds since CUDA graphs (PR #6766, May 2024) save 22 µs a
# layer (derived from the PR's tables; the fitted llama.cpp tables are older builds): 20 of 26.
# Then (servespeed, issue 22's serving pass): TensorRT-LLM 0.8-0.10 ran its precompiled XQA kernels only
# for 1, 8 or 16 query heads per KV head (DecoderXQAImplPrecompiled::shouldUse), so 0.9's Mistral 7B and
# Mixtral (4 per KV head) decoded with the legacy kernel, whose re-reads are now 1 + (group - 1) x a fitted
# share (0.58) instead of one factor at any group: Mistral x1.69 -> x0.97, Mixtral x1.27 / x1.32 -> x1.04 /
# x1.19; 23 of 26.
HELD_OUT_2 = HELD_OUT_2_TABLE
FLOOR_2_WITHIN_25 = 23 / 26
MAX_2_OUTSIDE_2X = 0


def test_the_second_held_out_table_is_sourced_fresh_and_never_fitted() -> None:
    figures = sourced_and_unseen(HELD_OUT_2, (FITTED_TABLE, HELD_OUT_TABLE), at_least=20)
    assert {f.kind for f in figures} >= {"serve", "static_batch", "ttft", "generate"}
    assert {f.runtime for f in figures} >= {"tensorrt-llm", "sglang", "llama.cpp"}


def test_second_held_out_figures_are_predicted_at_the_level_reached() -> None:
    predicted_at_level(
        HELD_OUT_2, floor=FLOOR_2_WITHIN_25, outside_2x_at_most=MAX_2_OUTSIDE_2X, median_within=1.3
    )


# The third held-out set (speed_heldout3.csv, serving): TensorRT-LLM 0.17's trtllm-bench saturation table
# (H200, H100, L40S in FP8 with FP8 KV, A100 in FP16; 8B to 405B, Mistral, Mixtral 8x7B / 8x22B) and the 0.14
# Triton serving table (BF16: 500 requests at once, and ITL / TTFT at QPS 2), recorded and committed (before
# any prediction for it was run) as the honest estimate of the outside check. First look (commit 1718fc1's
# constants, data/measured/speed_heldout3_first_look.txt): 14 of 35 within ±25%, 32 of 35 within 2x, median
# x1.21, worst x0.04 (70B FP8 on one H100: its KV pool read as vLLM's share of the card, one sequence, where
# TensorRT-LLM gives the KV 0.95 of the memory left free: ~19). Now, after the terms that first look prompted
# (each kernel on its own roofline, TensorRT-LLM's pool of free memory, MoE prompts reading the experts their
# tokens route to): 24 of 35 within ±25%, 34 within 2x (median x1.07). Still outside: Mixtral at saturation
# (x1.34-1.59), the L40S over PCIe and the A100 at TP4 (x1.28-1.36), 70B FP8 on one H100 (x0.70), Triton's
# 202/214 rows (x1.9-2.1: the page's 202-in/214-out throughput is below its 467/256 one on the same setup,
# which no cost that grows with length reproduces) and Triton's TTFT at QPS 2 (x0.58-0.64: its HTTP front end
# and the decodes running alongside, which gpufit's first token does not count).
# Then (servespeed, with the fourth set): NCCL's all-reduce over PCIe reaches ~0.63 of the link (8 RTX PRO
# 6000 on PCIe Gen5 measure 37.6-41.7 GB/s bus bandwidth, voipmonitor/rtx6kpro), not NVLink's 0.77: the L40S
# TP4 rows come to x1.22 (70B) and x1.29 (Mixtral): 25 of 35. Then (servespeed, with the fifth set): a TTFT
# measured under load waits for the step in progress (half a decode step on average) before its prompt runs
# beside the decodes (inference.loaded_ttft_s); the two QPS-2 TTFT rows, recorded with batch 1, now carry
# their ITL rows' running requests (4, 11): x0.82 and x0.76, 26 of 35.
HELD_OUT_3 = HELD_OUT_3_TABLE
FLOOR_3_WITHIN_25 = 26 / 35
MAX_3_OUTSIDE_2X = 1


def test_the_third_held_out_table_is_sourced_fresh_and_never_fitted() -> None:
    figures = sourced_and_unseen(HELD_OUT_3, (FITTED_TABLE, HELD_OUT_TABLE, HELD_OUT_2), at_least=20)
    assert {f.kind for f in figures} >= {"serve", "generate", "ttft"}


def test_third_held_out_figures_are_predicted_at_the_level_reached() -> None:
    predicted_at_level(
        HELD_OUT_3, floor=FLOOR_3_WITHIN_25, outside_2x_at_most=MAX_3_OUTSIDE_2X, median_within=1.3
    )
