"""Defaults that decide verdicts: how serving is assumed to run, and what vLLM reserves on which card."""

from __future__ import annotations

from core.catalog import Catalog, load_catalog
from core.estimator import Fit, estimate
from core.estimator.calibration import load_calibration
from core.estimator.terms import vllm_prefill_chunk_tokens
from core.query import Query, Runtime, Task


def test_several_sequences_at_once_are_served_by_vllm_and_say_so() -> None:
    filled = Query(task=Task.INFERENCE, model="qwen2.5-7b", batch=20).with_defaults()
    assert filled.runtime == Runtime.VLLM and "runtime" in filled.defaulted
    single = Query(task=Task.INFERENCE, model="qwen2.5-7b").with_defaults()
    assert single.runtime == Runtime.TRANSFORMERS


def test_a_stated_runtime_is_kept() -> None:
    filled = Query(
        task=Task.INFERENCE, model="qwen2.5-7b", batch=20, runtime=Runtime.TRANSFORMERS
    ).with_defaults()
    assert filled.runtime == Runtime.TRANSFORMERS and "runtime" not in filled.defaulted


def test_vllm_on_a_24gb_card_uses_its_smaller_prefill_chunk() -> None:
    """A 7B model serves 20 users on a 4090 (vLLM's 2048-token default chunk there, not the H100's 8192)."""
    result = estimate(Query(task=Task.INFERENCE, model="qwen2.5-7b", batch=20, card="rtx-4090"))
    assert result.verdicts[0].fits is not Fit.NO
    big = estimate(Query(task=Task.INFERENCE, model="qwen2.5-7b", batch=20, card="h100-sxm"))
    assert big.breakdown.logits > result.breakdown.logits


def test_vllm_prefill_chunk_follows_the_cards_memory_and_device_name_not_its_id() -> None:
    """vLLM's rule: 8192 tokens on >= 70 GiB unless the device name contains "a100" (A800s get 8192)."""
    vllm = load_calibration().vllm
    catalog = load_catalog()
    a100 = catalog.get("a100-80gb-sxm")
    assert vllm_prefill_chunk_tokens(a100, vllm) == vllm.max_num_batched_tokens
    assert (
        vllm_prefill_chunk_tokens(catalog.get("a800-80gb-sxm"), vllm)
        == vllm.max_num_batched_tokens_large_card
    )
    assert vllm_prefill_chunk_tokens(catalog.get("a100-40gb-sxm"), vllm) == vllm.max_num_batched_tokens
    # The same card under another id keeps its chunk; under another device name it gets the large one.
    renamed = a100.model_copy(update={"id": "rented-box", "aliases": []})
    other = a100.model_copy(
        update={"id": "other-box", "aliases": [], "cuda_device_name": "NVIDIA H100 80GB HBM3"}
    )
    shelf = Catalog([renamed, other])
    query = Query(task=Task.INFERENCE, model="qwen2.5-7b", batch=20)
    bare = estimate(query, catalog=shelf).breakdown.logits
    assert estimate(query.model_copy(update={"card": "rented-box"}), catalog=shelf).breakdown.logits == bare
    assert estimate(query.model_copy(update={"card": "other-box"}), catalog=shelf).breakdown.logits > bare


def test_fine_tuning_checkpoints_activations_by_default_and_pretraining_does_not() -> None:
    assert Query(task=Task.FINETUNE, model="qwen2.5-7b").with_defaults().grad_checkpointing is True
    assert Query(task=Task.PRETRAIN, model="qwen2.5-7b").with_defaults().grad_checkpointing is False


def test_models_released_in_fp8_are_served_in_fp8() -> None:
    result = estimate(Query(task=Task.INFERENCE, model="deepseek-r1"))
    assert result.query.precision is not None and result.query.precision.value == "fp8"
    assert "precision" in result.query.defaulted


def test_the_profile_runs_sampler_peak_is_per_card_under_tensor_parallelism() -> None:
    """vLLM sizes its KV pool after the profile run's peak, the dummy sampler over max_num_seqs rows of the
    whole vocabulary (1,024 rows on an H100, 256 on an A100; the logits all-gathered to every TP rank), so
    Qwen2.5-72B does not start on 2 × H100 at the default 0.9 share and does at 0.95 (data/calibration.toml
    [vllm])."""
    cal = load_calibration().vllm
    vocab = 152064  # Qwen2.5's
    job = Query(task=Task.INFERENCE, model="qwen2.5-72b", runtime=Runtime.VLLM, card="h100-sxm", gpus=2)
    two = estimate(job)
    assert two.breakdown.logits == int(
        cal.max_num_batched_tokens_large_card * vocab * cal.logits_bytes_per_vocab
    )
    assert two.breakdown.logits == estimate(job.model_copy(update={"gpus": 4})).breakdown.logits
    assert two.verdicts[-1].count == 2 and two.verdicts[-1].fits is Fit.NO
    share = estimate(job.model_copy(update={"gpu_memory_utilization": 0.95}))
    assert share.verdicts[-1].fits is not Fit.NO
    a100 = estimate(job.model_copy(update={"card": "a100-80gb-sxm"}))
    assert a100.breakdown.logits == int(cal.max_num_batched_tokens * vocab * cal.logits_bytes_per_vocab)
