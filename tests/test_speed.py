"""Speed model unit checks: the named terms behave as their formulas say (FLOPs rules, MoE reads, tensor
parallelism, sequential layer splits, batching, PCIe training, KV dtype, FP8 compute, the average KV length).

The published figures (torchtune, pretraining GPU-hours, llama.cpp, vLLM, SGLang, TensorRT-LLM, NIM,
Megatron-Bridge) are checked in tests/test_speed_published.py against data/measured/speed.csv.
"""

from __future__ import annotations

import pytest

from core.catalog import load_catalog
from core.estimator import estimate
from core.query import KvCacheDtype, Method, Precision, Query, Runtime, Task
from core.registry import load_registry
from core.speed import (
    decode_weight_bytes,
    inference_speed,
    load_speed_constants,
    training_flops_per_token,
    training_speed,
)
from core.speed import terms as speed_terms


def test_flops_rules() -> None:
    query = Query(task=Task.FINETUNE, method=Method.FULL, grad_checkpointing=False).with_defaults()
    assert training_flops_per_token(query, 10, 10) == 60
    gc = query.model_copy(update={"grad_checkpointing": True})
    assert training_flops_per_token(gc, 10, 10) == 80  # x 4/3
    lora = Query(task=Task.FINETUNE, method=Method.LORA, grad_checkpointing=False).with_defaults()
    assert training_flops_per_token(lora, 10, 0) == 40


def test_moe_decode_reads_active_experts_only() -> None:
    model = load_registry().get("mixtral-8x7b")
    one = decode_weight_bytes(model, Precision.BF16, 1)
    many = decode_weight_bytes(model, Precision.BF16, 256)
    assert one < 0.35 * 2 * model.total_params
    assert many > 0.95 * 2 * (model.total_params - model.embedding_params)


def test_tensor_parallel_speeds_up_and_pcie_costs_more() -> None:
    catalog = load_catalog()
    base = Query(model="llama-3.1-70b", runtime=Runtime.VLLM, precision=Precision.INT4, batch=1)
    h100 = [
        inference_speed(
            estimate(base.model_copy(update={"card": "h100-sxm", "gpus": n})), catalog.get("h100-sxm"), n
        )
        for n in (1, 4)
    ]
    # The fixed per-layer cost does not shrink with cards, so the gain is modest.
    assert h100[1].decode_tokens_per_s > 1.2 * h100[0].decode_tokens_per_s
    assert h100[1].parallelism == "tensor"
    pcie = inference_speed(
        estimate(base.model_copy(update={"card": "rtx-4090", "gpus": 4})), catalog.get("rtx-4090"), 4
    )
    assert "no_nvlink" in pcie.notes


def test_transformers_multi_card_is_sequential() -> None:
    catalog = load_catalog()
    q = Query(model="llama-3.1-8b", card="rtx-4090")
    one = inference_speed(estimate(q), catalog.get("rtx-4090"), 1)
    two = inference_speed(estimate(q.model_copy(update={"gpus": 2})), catalog.get("rtx-4090"), 2)
    assert two.parallelism == "pipeline"
    assert two.decode_tokens_per_s == pytest.approx(one.decode_tokens_per_s)


def test_batch_raises_aggregate_not_per_sequence() -> None:
    catalog = load_catalog()
    q = Query(model="llama-3.1-8b", card="h100-sxm", batch=32)
    speed = inference_speed(estimate(q), catalog.get("h100-sxm"), 1)
    assert speed.aggregate_tokens_per_s > 10 * speed.decode_tokens_per_s / 2
    assert speed.ttft_s > 0


def test_pcie_training_is_communication_bound() -> None:
    query = Query(
        task=Task.FINETUNE, method=Method.FULL, model="llama-3.1-8b", card="rtx-4090", gpus=8, batch=1
    )
    catalog = load_catalog()
    eight = training_speed(estimate(query), catalog.get("rtx-4090"), 8, None)
    assert "communication_bound" in eight.notes and "no_nvlink" in eight.notes
    h100 = training_speed(
        estimate(query.model_copy(update={"card": "h100-sxm"})), catalog.get("h100-sxm"), 8, None
    )
    assert "communication_bound" not in h100.notes


def test_constants_have_sources() -> None:
    constants = load_speed_constants()
    assert constants.mfu.source and constants.link.source and constants.formats.source
    assert all(runtime.source for runtime in constants.runtimes.values())
    assert all(family.source for family in constants.bandwidth)
    assert 0 < constants.mfu.datacenter < 1


def test_fp8_kv_halves_the_kv_read_and_raises_the_pool() -> None:
    catalog = load_catalog()
    base = Query(model="llama-3.1-8b", card="h100-sxm", runtime=Runtime.VLLM, batch=64, seq=8192)
    bf16 = estimate(base)
    fp8 = estimate(base.model_copy(update={"kv_cache_dtype": KvCacheDtype.FP8}))
    assert bf16.vllm and fp8.vllm
    assert fp8.vllm.kv_bytes_per_sequence == bf16.vllm.kv_bytes_per_sequence // 2
    assert fp8.vllm.max_sequences >= 2 * bf16.vllm.max_sequences - 1
    slow = inference_speed(bf16, catalog.get("h100-sxm"), 1)
    fast = inference_speed(fp8, catalog.get("h100-sxm"), 1)
    assert fast.aggregate_tokens_per_s > slow.aggregate_tokens_per_s
    assert fast.kv_cache_dtype == "fp8"


def test_llama_cpp_q8_0_kv_is_eight_and_a_half_bits() -> None:
    q = Query(model="llama-3.1-8b", precision=Precision.Q4_K_M, seq=32768, kv_cache_dtype=KvCacheDtype.Q8_0)
    full = estimate(q.model_copy(update={"kv_cache_dtype": None}))
    assert estimate(q).breakdown.kv_cache == pytest.approx(full.breakdown.kv_cache * 8.5 / 16, rel=1e-3)


def test_q4_0_is_its_own_format() -> None:
    model = load_registry().get("llama-2-7b")
    q4_0 = decode_weight_bytes(model, Precision.Q4_0, 1)
    q4_k = decode_weight_bytes(model, Precision.Q4_K_M, 1)
    assert q4_0 < q4_k
    assert q4_0 / model.total_params == pytest.approx(4.5 / 8, rel=0.02)


def test_decode_reads_the_average_kv_not_the_final_one() -> None:
    assert speed_terms.average_kv_tokens(2048, 2048) == 3072


def test_fp8_uses_fp8_tensor_cores_where_the_card_has_them() -> None:
    catalog = load_catalog()
    gain = load_speed_constants().training.fp8_gain
    h100, a100 = catalog.get("h100-sxm"), catalog.get("a100-80gb-sxm")
    assert speed_terms.tensor_peak_flops(h100, Precision.FP8, gain) > speed_terms.tensor_peak_flops(
        h100, Precision.BF16, gain
    )
    assert speed_terms.tensor_peak_flops(a100, Precision.FP8, gain) == speed_terms.tensor_peak_flops(
        a100, Precision.BF16, gain
    )


def test_pipeline_bubble_and_tensor_parallel_cost_utilisation() -> None:
    assert speed_terms.pipeline_bubble_factor(1, 1, 1) == 1.0
    assert speed_terms.pipeline_bubble_factor(4, 8, 1) == pytest.approx(1 / (1 + 3 / 8))
    assert speed_terms.pipeline_bubble_factor(4, 8, 5) > speed_terms.pipeline_bubble_factor(4, 8, 1)
    catalog = load_catalog()
    link = load_speed_constants().link
    h100, pcie = catalog.get("h100-sxm"), catalog.get("rtx-4090")
    nvlink_s = speed_terms.tensor_parallel_train_s_per_token(h100, link, 80, 8192, 4, recompute=False)
    pcie_s = speed_terms.tensor_parallel_train_s_per_token(pcie, link, 80, 8192, 4, recompute=False)
    assert 0 < nvlink_s < pcie_s / 5
    assert speed_terms.tensor_parallel_train_s_per_token(h100, link, 80, 8192, 1, recompute=False) == 0
    assert speed_terms.tensor_parallel_train_s_per_token(
        h100, link, 80, 8192, 4, recompute=True
    ) == pytest.approx(nvlink_s * 6 / 4)


def test_megatron_without_its_tp_comm_overlap_exposes_the_forward_and_half_the_backward() -> None:
    """--tp-comm-overlap off: the forward's collectives (and the recompute's) exposed, the backward's
    column-parallel ones run behind its GEMMs (data/speed.toml tp_backward_exposed_without_overlap)."""
    c = load_speed_constants()
    b = c.training.tp_backward_exposed_without_overlap
    assert b == 0.5
    assert speed_terms.tensor_parallel_exposed_without_overlap(False, b) == pytest.approx(0.75)
    assert speed_terms.tensor_parallel_exposed_without_overlap(True, b) == pytest.approx(5 / 6)
    assert speed_terms.tensor_parallel_exposed_without_overlap(False, 1.0) == 1.0
    from dataclasses import replace

    from core.speed.training import TrainingJob, tokens_per_s_per_gpu

    job = TrainingJob(
        card=load_catalog().get("h800-sxm"),
        gpus=32,
        precision=Precision.BF16,
        method=Method.FULL,
        flops_per_token=6 * 69e9,
        framework="megatron",
        tensor_parallel=8,
        pipeline_parallel=4,
        micro_batches=44,
        hidden=8192,
        layers=80,
    )
    overlapped = tokens_per_s_per_gpu(c, job)
    assert tokens_per_s_per_gpu(c, replace(job, tp_comm_overlap=False)) < overlapped
    assert tokens_per_s_per_gpu(c, replace(job, tensor_parallel=1, tp_comm_overlap=False)) == pytest.approx(
        tokens_per_s_per_gpu(c, replace(job, tensor_parallel=1))
    )


def test_a_stated_network_per_node_is_shared_by_its_cards() -> None:
    """A source's "4 x 100Gb RoCE between machines" is 400 Gb/s for the node's 8 cards, 6.25 GB/s each, not
    [link]'s 50 GB/s per card; it only slows what crosses nodes."""
    from dataclasses import replace

    from core.speed.training import TrainingJob, job_link, tokens_per_s_per_gpu

    c = load_speed_constants()
    job = TrainingJob(
        card=load_catalog().get("a100-80gb-sxm"),
        gpus=1024,
        precision=Precision.BF16,
        method=Method.FULL,
        flops_per_token=6 * 6.7e9,
        framework="megatron",
        hidden=4096,
        layers=32,
        communication_bytes=1e9,
        network_bytes=1e9,
        tokens_per_card_step=4096,
    )
    assert job_link(c, job) is c.link
    stated = replace(job, network_gbit_s_per_node=400)
    assert job_link(c, stated).internode_gb_s == pytest.approx(400 / 8 / 8)
    assert tokens_per_s_per_gpu(c, stated) < tokens_per_s_per_gpu(c, job)
    inside = replace(job, network_bytes=0.0)
    slow = replace(inside, network_gbit_s_per_node=400)
    assert tokens_per_s_per_gpu(c, slow) == tokens_per_s_per_gpu(c, inside)


def test_a_stated_flash_attention_2_kernel_overrides_the_frameworks_on_hopper() -> None:
    t = load_speed_constants().training
    fa2 = t.fa2_hopper_attention_share
    assert t.attention_share("megatron", "h800-sxm") == 1.0
    assert t.attention_share("megatron", "h800-sxm", True) == fa2 < 1.0
    assert t.attention_share("hf-trainer", "h100-sxm", False) == 1.0
    assert t.attention_share("megatron", "a100-80gb-sxm", True) == 1.0  # FA2's home: the [mfu] values hold


def test_vllm_caps_running_sequences_at_max_num_seqs() -> None:
    catalog = load_catalog()
    q = Query(model="qwen2.5-0.5b", card="h100-sxm", runtime=Runtime.VLLM, batch=2000, seq=512)
    speed = inference_speed(estimate(q), catalog.get("h100-sxm"), 1)
    assert speed.batch == load_speed_constants().runtime("vllm").max_num_seqs
    assert "max_num_seqs" in speed.notes


def test_speed_says_its_band_and_where_it_was_calibrated() -> None:
    catalog = load_catalog()
    served = inference_speed(
        estimate(Query(model="qwen2.5-7b", card="a100-80gb-sxm", runtime=Runtime.VLLM)),
        catalog.get("a100-80gb-sxm"),
        1,
    )
    assert "qwen2.5-speed" in served.calibrated_on
    bands = load_speed_constants().band
    assert served.band == bands.calibrated
    unseen = inference_speed(
        estimate(Query(model="qwen2.5-7b", card="ascend-910b3", runtime=Runtime.VLLM)),
        catalog.get("ascend-910b3"),
        1,
    )
    assert unseen.calibrated_on == [] and unseen.band == bands.uncalibrated
    amd = inference_speed(
        estimate(Query(model="qwen2.5-7b", card="mi300x", runtime=Runtime.VLLM)), catalog.get("mi300x"), 1
    )
    assert amd.calibrated_on == ["dstack-deepseek-r1"] and amd.band == bands.calibrated
    trained = training_speed(
        estimate(Query(task=Task.FINETUNE, method=Method.LORA, model="llama-3.1-8b", card="rtx-4090")),
        catalog.get("rtx-4090"),
        1,
        None,
    )
    assert "torchtune" in trained.calibrated_on and trained.band == bands.training


def test_a_remembered_speed_is_the_computed_one_with_its_own_lists() -> None:
    """The per-job memo (core/speed/memo.py) returns what computing again gives, and a caller changing its
    notes changes nobody else's."""
    from core.speed import inference as speed_inference
    from core.speed import training as speed_training

    card = load_catalog().get("h100-sxm")
    served = estimate(Query(model="qwen2.5-72b", runtime=Runtime.VLLM, gpus=2, batch=50, seq=32768))
    trained = estimate(Query(model="llama-3.1-8b", task=Task.FINETUNE, method=Method.LORA, seq=2048))
    first = inference_speed(served, card, 2)
    first.notes.append("changed by a caller")
    again = inference_speed(served, card, 2)
    speed_inference._SPEEDS.clear()
    assert again == inference_speed(served, card, 2)
    assert "changed by a caller" not in again.notes
    tr = training_speed(trained, card, 2, 1e9)
    speed_training._SPEEDS.clear()
    assert tr == training_speed(trained, card, 2, 1e9)
    other = card.model_copy(update={"bandwidth_gb_s": card.bandwidth_gb_s / 2})  # same id, another card
    assert inference_speed(served, other, 2).decode_tokens_per_s < again.decode_tokens_per_s


def test_training_terms_by_framework_scale_power_and_method() -> None:
    """The training terms of issue 22: the framework's utilisation, the network between nodes, a stated power
    cap, and QLoRA's dequantisation per micro-batch (so a short micro-batch pays more per token)."""
    catalog = load_catalog()
    constants = load_speed_constants()
    h100 = catalog.get("h100-sxm")
    base = Query(task=Task.FINETUNE, method=Method.FULL, model="llama-3.1-8b", card="h100-sxm", batch=1)
    hf = training_speed(estimate(base), h100, 8, None)
    megatron_share = constants.training.framework_factor("megatron")
    assert constants.training.framework_of(None) == constants.training.default_framework == "hf-trainer"
    hf_share = constants.training.framework_factor("hf-trainer")
    assert hf.mfu == pytest.approx(constants.mfu.datacenter * hf_share)
    assert constants.training.framework_factor("hf-trainer") <= 1.2 * megatron_share
    tune = training_speed(estimate(base.model_copy(update={"runtime": "torchtune"})), h100, 8, None)
    pytorch_share = constants.training.framework_factor("pytorch")
    assert tune.mfu == pytest.approx(constants.mfu.datacenter * pytorch_share)
    # past one node the gradients cross the network, not NVLink: each card trains slower
    sixteen = training_speed(estimate(base.model_copy(update={"gpus": 16})), h100, 16, None)
    assert sixteen.tokens_per_s / 16 < hf.tokens_per_s / 8
    assert speed_terms.data_parallel_link_bytes_s(h100, constants.link, 16) < (
        speed_terms.data_parallel_link_bytes_s(h100, constants.link, 8)
    )
    # a 500 W limit on a 700 W H100 (torchtitan's stated setup) keeps (5/7)^0.30 of the peak
    assert speed_terms.power_cap_factor(h100, 500, constants.training.power_exponent) == pytest.approx(
        (500 / 700) ** constants.training.power_exponent
    )
    assert speed_terms.power_cap_factor(h100, None, constants.training.power_exponent) == 1.0
    # QLoRA: the dequantisation is per micro-batch, so longer micro-batches lose less per token to it
    qlora = Query(task=Task.FINETUNE, method=Method.QLORA, model="llama-3.1-8b", card="rtx-4090")
    lora = qlora.model_copy(update={"method": Method.LORA})
    card = catalog.get("rtx-4090")

    def ratio(seq: int) -> float:
        q = training_speed(estimate(qlora.model_copy(update={"seq": seq})), card, 1, None).tokens_per_s
        return q / training_speed(estimate(lora.model_copy(update={"seq": seq})), card, 1, None).tokens_per_s

    assert ratio(512) < ratio(8192) < 1


def test_zero3_past_one_node_gathers_its_shards_over_the_network() -> None:
    """ZeRO-3 shards the states over every card (as the memory estimate divides them), so past one node each
    micro-batch's gathers and reduce-scatters cross the network: 8B full fine-tuning on 2 x 8 RTX 4090 over
    10 GbE is bound by it and trains slower than the 8 cards of one node (it was answered ~6,842 tokens/s,
    as if the shards stayed inside each node)."""
    card = load_catalog().get("rtx-4090")
    job = Query(task=Task.FINETUNE, method=Method.FULL, model="llama-3.1-8b", card="rtx-4090", zero_stage=3)
    one_node = training_speed(estimate(job.model_copy(update={"gpus": 8})), card, 8, None)
    over_ethernet = job.model_copy(update={"gpus": 16, "network": "ethernet", "network_gbit_s": 10.0})
    two_nodes = training_speed(estimate(over_ethernet), card, 16, None)
    assert two_nodes.tokens_per_s < one_node.tokens_per_s / 4
    assert "communication_bound" in two_nodes.notes


def test_a_short_lora_micro_batch_waits_on_the_host() -> None:
    """An eager Hugging Face stack launches every layer's kernels from Python in each pass, per micro-batch:
    at 256 tokens a LoRA micro-batch is host-bound and trains fewer tokens per second than at 2,048 (Qwen's
    profile: Qwen-7B LoRA 1,707 against 3,151 tokens/s), and DeepSpeed ZeRO-3's per-module hooks add to it."""
    card = load_catalog().get("a100-80gb-sxm")
    lora = Query(task=Task.FINETUNE, method=Method.LORA, model="qwen2.5-7b", card="a100-80gb-sxm", batch=1)

    def per_card(seq: int, gpus: int = 1) -> float:
        job = lora.model_copy(update={"seq": seq, "gpus": gpus, "zero_stage": 3 if gpus > 1 else 0})
        return training_speed(estimate(job), card, gpus, None).tokens_per_s / gpus

    assert per_card(256) < 0.7 * per_card(2048)
    assert per_card(256, gpus=4) < per_card(256)  # the ZeRO-3 hooks and gathers on top


def test_tensorrt_llm_answers_use_its_own_calibrated_terms() -> None:
    """What is tested is what is answered: TensorRT-LLM's fitted terms (data/speed.toml), and the sources that
    fitted them as where it was calibrated."""
    catalog = load_catalog()
    served = inference_speed(
        estimate(Query(model="llama-3.1-8b", card="h100-sxm", runtime="tensorrt-llm", batch=8)),
        catalog.get("h100-sxm"),
        1,
    )
    assert served.runtime == "tensorrt-llm"
    assert "trtllm-perf-0.6" in served.calibrated_on


def test_releases_before_the_xqa_kernel_reread_gqa_kv_per_query_head() -> None:
    from core.speed.inference import generation, kv_read_bytes

    c = load_speed_constants()
    trt = c.runtime("tensorrt-llm")
    assert speed_terms.release_before("0.6.1", trt.legacy_gqa_before)
    assert speed_terms.release_before("0.7a", trt.legacy_gqa_before)
    assert not speed_terms.release_before("0.9.0", trt.legacy_gqa_before)
    assert not speed_terms.release_before("", trt.legacy_gqa_before)  # an unstated release is the current one
    card = load_catalog().get("h100-sxm")
    registry = load_registry()

    def kv(model: str, legacy: bool) -> float:
        g = generation(
            registry.get(model),
            card,
            runtime="tensorrt-llm",
            precision=Precision.FP8,
            kv_dtype_bytes=1.0,
            ranks=1,
            batches=(8,),
            legacy_gqa=legacy,
        )
        return kv_read_bytes(c, g, 8, 2048)

    group = 8  # Llama 2 70B: 64 query heads over 8 KV heads
    factor = speed_terms.legacy_gqa_read_factor(trt, group)
    assert kv("llama-2-70b", True) == pytest.approx(kv("llama-2-70b", False) * factor)
    assert 1.0 < factor <= group
    assert speed_terms.legacy_gqa_read_factor(trt, 4) < factor  # Mistral's group of 4 re-reads less
    # 0.9 ran XQA for Llama 2 70B's group of 8 but not for Mistral's 4; from 0.11 every group has it
    legacy = speed_terms.decodes_gqa_legacy
    assert legacy(trt, "0.6.1", 8) and not legacy(trt, "0.9.0", 8)
    assert legacy(trt, "0.9.0", 4) and not legacy(trt, "0.14", 4)
    assert not legacy(trt, "", 4)  # an unstated release is the current one
    assert kv("llama-2-7b", True) == kv("llama-2-7b", False)  # multi-head attention: nothing to re-read


def test_a_served_figure_runs_what_its_runtime_batches() -> None:
    """TensorRT-LLM's in-flight batch is capped at its max_batch_size (2048), not at vLLM's 256."""
    from core.speed.published import PublishedFigure, prepare

    row = dict(
        id="x",
        source="x",
        kind="serve",
        model="qwen2.5-0.5b",
        card="h100-sxm",
        gpus=1,
        precision="bf16",
        kv_dtype="",
        batch=3000,
        input_len=128,
        output_len=128,
        tp=1,
        pp=1,
        ep=1,
        vp="",
        gbs="",
        mbs="",
        seq="",
        tokens="",
        method="",
        width="",
        height="",
        steps="",
        metric="output_tok_s",
        published=1.0,
        status="held_out",
        note="",
    )
    trt = prepare(PublishedFigure.model_validate(row | {"runtime": "tensorrt-llm"}))
    vllm = prepare(PublishedFigure.model_validate(row | {"runtime": "vllm"}))
    assert vllm.concurrency == 256
    assert 256 < trt.concurrency <= 2048


def test_transformers_kv_passes_repeat_only_under_grouped_query_attention() -> None:
    """DynamicCache's torch.cat reads and rewrites the KV heads (2), repeat_kv copies them per query head only
    when there are fewer KV heads (1 + group), attention reads the copy (group); a paged engine reads once."""
    c = load_speed_constants()
    hf = c.runtime("transformers")
    assert speed_terms.kv_passes(hf, 1) == 3  # Qwen1.5 / Llama 2 7B: multi-head attention
    assert speed_terms.kv_passes(hf, 7) == 17  # Qwen2.5-7B: 28 query heads over 4 KV heads
    assert speed_terms.kv_passes(c.runtime("vllm"), 7) == 1


def test_latent_attention_trains_over_its_up_projected_head_widths() -> None:
    """MLA's scores run over qk_nope + qk_rope = 192 and its values over v_head_dim = 128 per head, not
    hidden / heads (DeepSeek-V2 report §2.1): the same widths serving's prefill counts."""
    from core.speed.training import attention_flops_per_token, attention_width

    registry = load_registry()
    v2, llama = registry.get("deepseek-v2"), registry.get("llama-2-7b")
    assert attention_width(v2) == 192 + 128
    assert attention_width(llama) == 2 * llama.dim_head
    layers = v2.decoder_layers or v2.layers
    forward = layers * v2.heads * 320 * 4096
    flops = attention_flops_per_token(v2, 4096, Method.FULL, False)
    assert flops == pytest.approx(forward * (1 + load_speed_constants().training.attention_backward_passes))


def test_a_whole_pretraining_run_steps_at_millions_of_tokens_with_its_optimizer_sharded() -> None:
    """A pretraining GPU-hours row that states no batch steps at pretrain_batch_tokens (LLaMA's 4M), not one
    sequence, and shards its optimizer over its data-parallel ranks: Phi-3.5-MoE's 671 GB of states are not
    stepped on each of 512 cards for every 4,096 tokens."""
    from core.speed.published import TRAINING_HELD_OUT_6_TABLE, prepared_figures

    t = load_speed_constants().training
    assert t.pretrain_batch_sequences(4096) == pytest.approx(4.0e6 / 4096)
    rows = {p.figure.id: p for p in prepared_figures(TRAINING_HELD_OUT_6_TABLE)}
    job = rows["t6b-phi35-moe-hours"].training
    assert job is not None
    assert job.tokens_per_optimizer_step == pytest.approx(4.0e6 / 512)
    assert job.optimizer_bytes < 2e9  # 671 GB over 512 ranks
    assert rows["t6-deepseek-v2-hours-per-t"].training.zero_bubble  # type: ignore[union-attr]


def test_gpu_hours_that_are_a_steady_rate_carry_no_goodput() -> None:
    """A source's GPU-hours that are its tokens over its own throughput (DeepSeek's rate per trillion tokens,
    fms-fsdp's 2.2T tokens at 3,700 tokens/s/GPU) hold no restarts or failures: goodput is not applied;
    the wall-clock GPU-hours of the Llama 2 paper keep it."""
    from core.speed.published import (
        FITTED_TABLE,
        TRAINING_HELD_OUT_6_TABLE,
        TRAINING_HELD_OUT_TABLE,
        predict,
        prepared_figures,
    )

    c = load_speed_constants()
    rows = {
        p.figure.id: p
        for table in (FITTED_TABLE, TRAINING_HELD_OUT_TABLE, TRAINING_HELD_OUT_6_TABLE)
        for p in prepared_figures(table)
    }
    for steady in ("fms-l2-7b-2.2t-hours", "t6-deepseek-v2-hours-per-t", "dsv3-hours"):
        assert not rows[steady].wall_clock_hours, steady
    wall = rows["l2-7b-hours"]
    assert wall.wall_clock_hours
    job = wall.training
    assert job is not None
    from core.speed.training import tokens_per_s_per_gpu

    steady_hours = wall.figure.tokens / tokens_per_s_per_gpu(c, job) / 3600
    assert predict(c, wall) == pytest.approx(steady_hours / c.training.goodput)


def test_rocm_stack_terms_apply_to_amd_cards_only() -> None:
    """data/speed.toml [stacks]: the fitted ROCm factor prices MoE layers (DeepSeek-R1's kernels), a dense
    layer of a captured step costs CUDA's (rocm_dense_layer_factor), and ROCm's GEMMs reach rocm_tensor_share
    of the fitted utilisation; none of it touches an NVIDIA card."""
    c = load_speed_constants()
    catalog = load_catalog()
    mi300x, h100 = catalog.get("mi300x"), catalog.get("h100-sxm")
    vllm = c.runtime("vllm")
    assert speed_terms.per_layer_factor(c, h100) == speed_terms.dense_layer_factor(c, h100) == 1.0
    assert speed_terms.tensor_share(c, h100) == 1.0
    assert speed_terms.per_layer_factor(c, mi300x) == c.stacks.rocm_per_layer_factor > 1.0
    assert 0.0 < speed_terms.tensor_share(c, mi300x) == c.stacks.rocm_tensor_share < 1.0
    dense = speed_terms.launch_s(vllm, 80, 0, speed_terms.per_layer_factor(c, mi300x), dense_factor=1.0)
    assert dense == pytest.approx(80 * vllm.launch_s_per_layer)
    moe = speed_terms.launch_s(vllm, 61, 58, 2.0, dense_factor=1.0)
    assert moe == pytest.approx(61 * vllm.launch_s_per_layer + 58 * vllm.moe_s_per_layer * 2.0)
    # the same FP8 70B on 8 cards: prefill's compute runs at the share on the MI300X, not on the H100
    base = Query(
        model="llama-3.1-70b", runtime=Runtime.VLLM, precision=Precision.FP8, batch=1, gpus=8, seq=8192
    )
    amd = inference_speed(estimate(base.model_copy(update={"card": "mi300x"})), mi300x, 8)
    nvidia = inference_speed(estimate(base.model_copy(update={"card": "h100-sxm"})), h100, 8)
    assert amd.ttft_s > nvidia.ttft_s  # 2,615 FP8 TFLOPS x 0.48 is below the H100's 1,979


def test_llama_cpp_graphs_no_step_below_ampere_but_exllamav2_graphs_its_own() -> None:
    """ggml-cuda turns CUDA graphs off below compute capability 8.0: a Tesla P40, V100, T4 or RTX 2080 Ti
    pays llama.cpp's whole launch cost a layer in every build; ExLlamaV2 borrows llama.cpp's terms but
    captures its own graphs (data/runtimes.toml own_cuda_graphs) whatever the card."""
    from dataclasses import replace

    from core.speed.inference import decode_step_s, generation, with_own_kernels

    c = load_speed_constants()
    catalog = load_catalog()
    llama_cpp = c.runtime("llama.cpp")
    for card in ("tesla-p40", "v100-sxm2-32gb", "t4", "rtx-2080-ti"):
        assert not speed_terms.captures_graphs(llama_cpp, catalog.get(card)), card
    for card in ("a100-80gb-sxm", "rtx-4090", "h100-sxm", "rtx-3090"):
        assert speed_terms.captures_graphs(llama_cpp, catalog.get(card)), card
    model = load_registry().get("llama-3.1-8b")
    t4 = catalog.get("t4")
    g = generation(
        model, t4, runtime="llama.cpp", precision=Precision.Q4_K_M, kv_dtype_bytes=2, ranks=1, batches=(1,)
    )
    eager = decode_step_s(c, g, 1, 512)
    graphed = decode_step_s(c, replace(g, own_graphs=True), 1, 512)
    assert eager - graphed == pytest.approx(g.layers * llama_cpp.graphs_saving_s_per_layer)
    assert with_own_kernels(g, "exllamav2").own_graphs
    assert not with_own_kernels(g, "ollama").own_graphs


def test_deepseek_moe_tokens_take_the_release_s_kernels() -> None:
    """vLLM's fitted MoE costs are all DeepSeek-V3 / R1 on the V0 engine: the fixed cost per layer is kept for
    that architecture in every release, the cost per token (the Triton block-FP8 expert GEMMs of V0) only
    before moe_kernels_from; later releases, and answers (today's engine), take the current one."""
    from core.speed.constants import RuntimeSpeed
    from core.speed.inference import generation, runtime_for

    c = load_speed_constants()
    vllm = c.runtime("vllm")
    model, card = load_registry().get("deepseek-r1"), load_catalog().get("h200-sxm")

    def terms_of(*, legacy: bool) -> RuntimeSpeed:
        shape = generation(
            model,
            card,
            runtime="vllm",
            precision=Precision.FP8,
            kv_dtype_bytes=2.0,
            ranks=8,
            batches=(16,),
            legacy_moe=legacy,
        )
        return runtime_for(c, shape)

    current, legacy = terms_of(legacy=False), terms_of(legacy=True)
    assert legacy == vllm
    assert current.moe_s_per_layer == vllm.moe_s_per_layer
    assert vllm.current_moe_token_s is not None and vllm.current_moe_token_s < vllm.moe_token_s
    assert current.moe_token_s == vllm.current_moe_token_s
