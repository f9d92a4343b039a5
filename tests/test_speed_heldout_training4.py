"""Training speed against a fourth held-out set (data/measured/speed_heldout_training4.csv, sources in
speed_heldout_training4_sources.toml): 19 training figures from three sources in none of data/measured's other
tables (NVIDIA's DGX Cloud Benchmarking recipes v25.02 on H100: Llama 3.1 8B / 70B / 405B and GPT-3 175B
pretraining over 8 to 2,048 cards, Llama 3 8B / 70B SFT and LoRA; AI2's OLMo-core throughput table for its
1B / 7B / 13B training scripts on H100), recorded and committed before gpufit's predictions for them were
looked at. Never fitted.
"""

from __future__ import annotations

from speed_heldout_checks import sourced_and_unseen

from core.speed.published import TABLES, TRAINING_HELD_OUT_4_TABLE, load_sources

TABLE = TRAINING_HELD_OUT_4_TABLE


def test_the_fourth_training_held_out_table_is_sourced_new_and_never_fitted() -> None:
    older = [other for other in TABLES if other != TABLE]
    figures = sourced_and_unseen(TABLE, older, at_least=15)
    assert all(figure.is_training for figure in figures)
    assert all(source.framework for source in load_sources(TABLE).values())
