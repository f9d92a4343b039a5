"""Serving terms of issue 22's serving pass, each as its formula says: a KV pool allocated on demand holds
sequences at their present length, sliding-window layers read only their window, and a runtime's MoE costs
fitted on DeepSeek-V3 alone stay with that architecture (and with releases older than its newer MoE path).

The published figures these answer to are checked in tests/test_speed_published.py (fitted) and the held-out
tests (tests/test_speed_heldout*.py).
"""

from __future__ import annotations

import pytest

from core.catalog import load_catalog
from core.query import Precision
from core.registry import load_registry
from core.speed import load_speed_constants
from core.speed import terms as speed_terms
from core.speed.inference import Generation, attention_windows, generation, runtime_for


def _generation(model_id: str, runtime: str = "vllm", **flags: bool) -> Generation:
    model = load_registry().get(model_id)
    card = load_catalog().get("h100-sxm")
    return generation(
        model,
        card,
        runtime=runtime,
        precision=Precision.BF16,
        kv_dtype_bytes=2.0,
        ranks=1,
        batches=(1, 8),
        **flags,
    )


def test_on_demand_pool_holds_sequences_at_their_average_length() -> None:
    # 1,000 prompt + 1,000 output tokens: reserved whole, 100 of them; at 1,500 on average, 133
    final = 2_000 * 1_000.0
    pool = 100 * final
    assert speed_terms.resident_sequences(pool, final, 1_000, 1_000, on_demand=False) == 100
    assert speed_terms.resident_sequences(pool, final, 1_000, 1_000, on_demand=True) == 133
    assert speed_terms.resident_sequences(pool, 0.0, 1_000, 1_000, on_demand=True) == 0


def test_only_paged_schedulers_admit_on_demand() -> None:
    c = load_speed_constants()
    assert c.runtime("vllm").kv_on_demand and c.runtime("sglang").kv_on_demand
    # TensorRT-LLM's default GUARANTEED_NO_EVICT scheduler reserves a request's final length
    assert not c.runtime("tensorrt-llm").kv_on_demand


def test_sliding_window_layers_read_only_their_window() -> None:
    gpt_oss = _generation("gpt-oss-20b")
    model = load_registry().get("gpt-oss-20b")
    assert attention_windows(model, 24) == ((0.5, 128),)
    # half the layers attend to 20k tokens, half to 128
    assert gpt_oss.attended_tokens(20_000) == pytest.approx(0.5 * 20_000 + 0.5 * 128)
    assert gpt_oss.attended_tokens(100) == 100  # inside the window every layer reads it all
    # prefill pairs: a 128-token window keeps 2wP - w² of P² for the windowed half
    share = gpt_oss.attended_pairs_share(20_000)
    assert share == pytest.approx(0.5 + 0.5 * (2 * 128 * 20_000 - 128**2) / 20_000**2)
    dense = _generation("llama-3.1-8b")
    assert dense.windows == () and dense.attended_tokens(20_000) == 20_000


def test_fitted_moe_costs_stay_with_deepseek_and_older_releases() -> None:
    c = load_speed_constants()
    fitted = c.runtime("vllm")
    assert fitted.moe_kernels_from and fitted.current_moe_s_per_layer is not None
    # DeepSeek-V3's layers (MLA with DeepSeekMoE) keep the costs vLLM's fitted figures measure
    deepseek = runtime_for(c, _generation("deepseek-v3"))
    assert deepseek.moe_s_per_layer == fitted.moe_s_per_layer
    # another MoE on a current release takes the current costs; on an older release the fitted ones
    current = runtime_for(c, _generation("gpt-oss-20b"))
    assert current.moe_s_per_layer == fitted.current_moe_s_per_layer < fitted.moe_s_per_layer
    older = runtime_for(c, _generation("gpt-oss-20b", legacy_moe=True))
    assert older.moe_s_per_layer == fitted.moe_s_per_layer
    # a runtime without the split (SGLang) is as it is
    assert runtime_for(c, _generation("gpt-oss-20b", runtime="sglang")) is c.runtime("sglang")
