"""The fifth held-out speed table (data/measured/speed_heldout5.csv, sources in speed_heldout5_sources.toml):
SGLang 0.3.0 and vLLM 0.6.0 serving Llama 3.1 8B on one A100 and 70B on 4x H100 (ShareGPT, offline throughput
and the online medians of TPOT and TTFT), and SGLang 0.4.5 and vLLM 0.8.4 serving DeepSeek-R1 on 8x H200 at
fixed lengths, recorded and committed (2eed051) before any prediction for it was run, as the honest estimate
of the outside check.

First look (data/measured/speed_heldout5_first_look.txt): 10 of 28 within ±25%, 21 of 28 within 2x, median
x0.82, worst x0.14 (vLLM 0.6.0's median TTFT at request rate 8 on 4x H100: 207 ms where a lone prefill of the
~224-token prompt takes 29 ms; with --num-scheduler-steps 10 a new request waits for the running multi-step
batch). The floor holds the level reached; the target is the issue's (speed_heldout_checks.TARGET_WITHIN_25).
"""

from __future__ import annotations

from speed_heldout_checks import predicted_at_level, sourced_and_unseen

from core.speed.published import (
    FITTED_TABLE,
    HELD_OUT_2_TABLE,
    HELD_OUT_3_TABLE,
    HELD_OUT_4_TABLE,
    HELD_OUT_5_TABLE,
    HELD_OUT_TABLE,
)

FLOOR_WITHIN_25 = 10 / 28
MAX_OUTSIDE_2X = 7


def test_the_fifth_held_out_table_is_sourced_fresh_and_never_fitted() -> None:
    figures = sourced_and_unseen(
        HELD_OUT_5_TABLE,
        (FITTED_TABLE, HELD_OUT_TABLE, HELD_OUT_2_TABLE, HELD_OUT_3_TABLE, HELD_OUT_4_TABLE),
        at_least=20,
    )
    assert {f.kind for f in figures} >= {"serve", "generate", "ttft"}
    assert {f.runtime for f in figures} >= {"vllm", "sglang"}


def test_fifth_held_out_figures_are_predicted_at_the_level_reached() -> None:
    predicted_at_level(
        HELD_OUT_5_TABLE, floor=FLOOR_WITHIN_25, outside_2x_at_most=MAX_OUTSIDE_2X, median_within=1.3
    )
