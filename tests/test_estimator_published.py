"""The estimator against published measurements (../shared/reference/estimators.md §3).

Where gpufit differs from a published figure, and why (checked, not asserted):
- torchtune's Llama 3.1 8B QLoRA 7.4 GiB / LoRA 16.2 GiB (rows 17-18) use chunked cross-entropy and
  torch.compile; gpufit models transformers' unchunked loss, whose fp32 logits at 2×2048 tokens × 128k vocab
  add ~5 GiB, so gpufit says ~12 GiB for that QLoRA job: a safe "yes" on a 24 GB card either way.
- PEFT's MetaMathQA peaks (rows 1-5) are the caching allocator's reserved maxima over variable-length batches,
  1.5× their own reserved averages; gpufit estimates allocated bytes plus slack for the longest batch.
- QLoRA paper's "4-bit base 5,048 MB" for LLaMA-7B (row 28) is larger than NF4 arithmetic (~3.9 GB): the
  paper's figure includes the 16-bit embeddings, norms and CUDA/bitsandbytes buffers of its setup.
- Llama 3.1 405B KV (row 60): the blog's figure is twice the 2·L·k·d formula; gpufit keeps the formula, which
  matches the blog for 8B and 70B (row 59) and vLLM's own accounting.
"""

from __future__ import annotations

import pytest

from core.estimator import Fit, estimate
from core.estimator.terms import kv_bytes_per_token, weight_bytes
from core.query import Precision, Query, Runtime, Task
from core.registry import load_registry
from core.units import GB, GIB

REGISTRY = load_registry()


def approx(actual: float, expected: float, rel: float) -> bool:
    return abs(actual / expected - 1) <= rel


@pytest.mark.parametrize(
    ("model", "tokens", "gib"),
    [
        ("llama-3.1-8b", 16_000, 1.95),
        ("llama-3.1-8b", 128_000, 15.62),
        ("llama-3.1-70b", 16_000, 4.88),
        ("llama-3.1-70b", 128_000, 39.06),
    ],
)
def test_kv_cache_matches_hf_llama31_blog(model: str, tokens: int, gib: float) -> None:
    """Row 59: fp16 KV cache of Llama 3.1 (blog's GB are GiB here)."""
    kv = kv_bytes_per_token(REGISTRY.get(model), 2, compressed_mla=False) * tokens
    assert approx(kv / GIB, gib, 0.01)


def test_kv_cache_per_token_matches_pagedattention_opt13b() -> None:
    """Row 47: OPT-13B, 800 KB per token in fp16 (PagedAttention §3)."""
    per_token = kv_bytes_per_token(REGISTRY.get("opt-13b"), 2, compressed_mla=False)
    assert approx(per_token, 800 * 1024, 0.01)


@pytest.mark.parametrize(
    ("precision", "gib"),
    [
        (Precision.Q2_K, 2.95),
        (Precision.Q4_K_M, 4.58),
        (Precision.Q5_K_M, 5.33),
        (Precision.Q6_K, 6.14),
        (Precision.Q8_0, 7.95),
        (Precision.FP16, 14.96),
    ],
)
def test_gguf_file_sizes_llama31_8b(precision: Precision, gib: float) -> None:
    """Row 66: llama.cpp's quantize README file sizes for Llama-3.1-8B."""
    assert approx(weight_bytes(REGISTRY.get("llama-3.1-8b"), precision) / GIB, gib, 0.03)


@pytest.mark.parametrize(
    ("model", "precision", "gb"),
    [
        ("llama-3.1-8b", Precision.BF16, 16),
        ("llama-3.1-70b", Precision.BF16, 140),
        ("llama-3.1-405b", Precision.BF16, 810),
        ("llama-3.1-70b", Precision.FP8, 70),
        ("llama-3.1-405b", Precision.FP8, 405),
        ("mixtral-8x7b", Precision.FP16, 90),
        ("falcon-40b", Precision.BF16, 84),
    ],
)
def test_weights_match_published_tables(model: str, precision: Precision, gb: float) -> None:
    """Rows 58, 62, 63: weights by dtype (fp8 keeps embeddings/lm_head 16-bit, within 5%). The tables' FP8 is
    every linear layer in FP8; Meta's own 405B FP8 release keeps more in BF16 (the next test), so its row is
    checked on the registry's model without that release's 16-bit layers."""
    arch = REGISTRY.get(model)
    if arch.fp8_16bit_modules:
        arch = arch.model_validate({**arch.model_dump(), "fp8_16bit_modules": ()})
    assert approx(weight_bytes(arch, precision) / GB, gb, 0.07)


def test_llama31_405b_fp8_is_sized_as_meta_releases_it() -> None:
    """meta-llama/Llama-3.1-405B-Instruct-FP8 quantizes the MLPs of blocks 1-124 only (Llama 3 paper §6.2: no
    quantization in the self-attention layers nor in the first and last Transformer layers): vLLM logs
    'Loading model weights took 56.7677 GB' (GiB) a card at TP 8 (dstackai/benchmarks
    comparison/h100sxm5_vs_mi300x/issues/serving_issue_2.txt), not the 47 GiB of every linear layer in FP8."""
    per_card = weight_bytes(REGISTRY.get("llama-3.1-405b"), Precision.FP8) / 8 / GIB
    assert approx(per_card, 56.77, 0.01)


def test_llama31_70b_nf4_load_matches_blog_within_fifteen_percent() -> None:
    """Row 61: 'about 34 GB' for Llama 3.1 70B in bnb 4-bit (gpufit keeps embeddings and lm_head 16-bit)."""
    assert approx(weight_bytes(REGISTRY.get("llama-3.1-70b"), Precision.NF4) / GIB, 34, 0.15)


@pytest.mark.parametrize(
    ("model", "seq", "kv_gib"),
    [("llama-3.1-8b", 16_000, 51.38), ("qwen3-0.6b", 16_000, 64.45), ("qwen3-32b", 16_000, 4.45)],
)
def test_vllm_kv_pool_matches_llm_d_h100_logs(model: str, seq: int, kv_gib: float) -> None:
    """Rows 49, 53, 54: vLLM's KV pool on an H100 at gpu_memory_utilization 0.9 (within 1 GiB)."""
    query = Query(task=Task.INFERENCE, model=model, card="h100-sxm", runtime=Runtime.VLLM, seq=seq)
    pool = estimate(query).vllm
    assert pool is not None
    assert abs(pool.kv_pool_bytes / GIB - kv_gib) <= 1.0


def test_vllm_qwen3_32b_32k_context_has_room_for_one_sequence_at_most() -> None:
    """Row 53: Qwen3-32B on one H100 fails at 32k context; at 16k it holds a handful of sequences."""
    at_32k = estimate(
        Query(task=Task.INFERENCE, model="qwen3-32b", card="h100-sxm", runtime=Runtime.VLLM, seq=32_000)
    )
    assert at_32k.vllm is not None
    assert at_32k.vllm.max_sequences <= 1


@pytest.mark.parametrize(
    ("model", "precision", "card", "gpus", "fits"),
    [
        ("opt-66b", Precision.INT8, "rtx-3090", 4, True),
        ("opt-66b", Precision.FP16, "rtx-3090", 4, False),
        ("opt-30b", Precision.FP16, "rtx-3090", 4, True),
        ("opt-175b", Precision.INT8, "a100-40gb-sxm", 8, True),
        ("opt-175b", Precision.FP16, "a100-40gb-sxm", 8, False),
        ("opt-66b", Precision.FP16, "a100-40gb-sxm", 8, True),
        ("opt-175b", Precision.FP16, "a100-80gb-sxm", 8, True),
    ],
)
def test_llm_int8_paper_largest_runnable_models(
    model: str, precision: Precision, card: str, gpus: int, fits: bool
) -> None:
    """Row 65: LLM.int8() Table 2 — the largest model that runs on each setup, 8-bit vs 16-bit."""
    query = Query(task=Task.INFERENCE, model=model, precision=precision, card=card, gpus=gpus, seq=512)
    verdict = next(v for v in estimate(query).verdicts if v.count == gpus)
    assert (verdict.fits is not Fit.NO) is fits, verdict
