"""The KV cache's dtype is read apart from the weights' (vLLM/SGLang `--kv-cache-dtype`, "fp8 KV", llama.cpp
`-ctk`), and Q4_0 is its own GGUF format, not Q4_K_M."""

from __future__ import annotations

import pytest

from core.parser import parse
from core.query import KvCacheDtype, Precision


@pytest.mark.parametrize(
    ("text", "kv", "precision"),
    [
        ("serve qwen2.5-72b on 2x H100 with fp8 KV", KvCacheDtype.FP8, None),
        ("vllm serve llama-3.1-70b --kv-cache-dtype fp8 on 4 h100", KvCacheDtype.FP8, None),
        ("llama-3.1-70b fp8 weights, kv cache in fp8, 8 H20", KvCacheDtype.FP8, Precision.FP8),
        ("llama.cpp llama-3.1-8b q4_k_m -ctk q8_0 on a 4090", KvCacheDtype.Q8_0, Precision.Q4_K_M),
        ("用 llama.cpp 跑 llama-3.1-8b q4_0，-ctk q4_0，4090 上多快", KvCacheDtype.Q4_0, Precision.Q4_0),
        ("qwen2.5-32b 部署在 L40S 上，KV缓存用fp8", KvCacheDtype.FP8, None),
        ("run llama-2-7b q4_0 on a 3090", None, Precision.Q4_0),
        ("run llama-2-7b gguf on a 3090", None, Precision.Q4_K_M),
    ],
)
def test_kv_dtype_and_q4_0(text: str, kv: KvCacheDtype | None, precision: Precision | None) -> None:
    query = parse(text).query
    assert query is not None
    assert query.kv_cache_dtype is kv
    if precision is not None:
        assert query.precision is precision
    else:
        assert query.precision is not Precision.FP8
