"""Issue 18's jobs against published figures (../shared/reference/jobs-and-market.md, each checked at
its source): partial offload and CPU-expert decode speeds, KTransformers' DeepSeek-R1 on one GPU with large
DRAM, DeepSpeed's own ZeRO offload estimator, Unsloth's GRPO memory table. Where gpufit differs, the test
says by how much and why.
"""

from __future__ import annotations

from typing import Any

import pytest

from core.catalog import load_catalog
from core.estimator import estimate
from core.estimator.memory import resolve_model
from core.jobs import zero_offload
from core.jobs.facts import job_facts
from core.jobs.offload import offload_plan
from core.query import Algorithm, Method, Offload, Precision, Query, Task
from core.registry import load_registry
from core.units import GIB


def _plan(**fields: Any) -> Any:
    query = Query(task=Task.INFERENCE, **fields)
    est = estimate(query)
    card = load_catalog().by_id[est.query.card or ""]
    model = resolve_model(est.query, load_registry())
    plan = offload_plan(est, model, card, est.query.gpus or 1)
    assert plan is not None
    return plan


def test_gpt_oss_120b_all_experts_on_the_cpu_decodes_as_reported() -> None:
    """gpt-oss-120b with `--n-cpu-moe 36` (every MoE block on the CPU) on ~8 GB of VRAM and a 14900K-class
    desktop (dual-channel DDR5): 25.6 tok/s decode (gokawiil.com/article/74814, a repost of a 2025-08 Reddit
    post; SECONDARY). gpufit: the routed experts' bytes per token at 2 × DDR5-5600 × 0.6."""
    plan = _plan(model="gpt-oss-120b", card="rtx-4090", runtime="llama.cpp", offload=Offload.EXPERTS)
    assert plan.mode is Offload.EXPERTS and plan.expert_layers_on_gpu == 0
    assert 25.6 / 1.5 <= plan.decode_tokens_per_s <= 25.6 * 1.5
    assert 50e9 <= plan.host_bytes <= 70e9  # the MXFP4 experts (~60 GB of a 63 GB file)


def test_gpt_oss_20b_cpu_moe_on_ddr4() -> None:
    """gpt-oss-20b with `-cmoe` on an RX 7900 XT, Ryzen 9 5900X, dual-channel DDR4-3200: about 20 tok/s
    (llama.cpp discussion #15396, b6194, 2025-08; SECONDARY mirror). The card is AMD (not in gpufit's split
    model); a 3090 stands in, the host side dominates."""
    plan = _plan(
        model="gpt-oss-20b",
        card="rtx-3090",
        runtime="llama.cpp",
        offload=Offload.EXPERTS,
        host_memory_type="ddr4",
    )
    assert plan.host_bandwidth_gb_s == pytest.approx(51.2)
    assert 20 / 1.5 <= plan.decode_tokens_per_s <= 20 * 1.5


def test_ktransformers_deepseek_r1_on_one_gpu_and_a_server() -> None:
    """KTransformers' tutorial (kvcache-ai/ktransformers @95009ea doc/en/DeepseekR1_V3_tutorial.md): R1
    Q4_K_M needs
    "382G DRAM, at least 14GB VRAM"; single socket (8 × DDR5-4800), 8 experts: 8.73 tok/s decode; dual socket
    12.2. gpufit assumes one socket's 8 channels for a machine with >= 256 GB."""
    plan = _plan(model="deepseek-r1", card="rtx-4090", runtime="ktransformers", host_memory_bytes=512 * 10**9)
    assert plan.host_fits and plan.host_memory == "DDR5-4800 × 8"
    assert 382e9 * 0.9 <= plan.host_bytes <= 382e9 * 1.1
    assert plan.gpu_bytes <= 24 * GIB
    assert 8.73 / 1.5 <= plan.decode_tokens_per_s <= 8.73 * 1.5


def test_llama_70b_q4_on_a_4090_is_a_few_tokens_per_second() -> None:
    """Llama 3.x 70B Q4_K_M on one 24 GB card with the rest in dual-channel DDR5: ~2–3 tok/s is what
    llama.cpp users report (community; no single citable run, so a range): about half the layers in RAM."""
    plan = _plan(model="llama-3.3-70b", card="rtx-4090", runtime="llama.cpp")
    assert 36 <= plan.gpu_layers <= 46 and plan.layers == 80
    assert 1.5 <= plan.decode_tokens_per_s <= 4


def test_deepspeed_zero3_offload_matches_its_own_estimator() -> None:
    """DeepSpeed's memory docs (docs/code-docs/source/memory.rst): t5-3b (2,851M parameters), 1 node × 8 GPUs,
    ZeRO-3 with parameters and optimizer offloaded, zero_init: 71.71 GB of CPU memory (Ψ·18·1.5, in GiB)."""
    model = resolve_model(Query(model="t5-3b"), load_registry())
    query = Query(
        task=Task.FINETUNE, method=Method.FULL, model="t5-3b", gpus=8, zero_stage=3, offload=Offload.PARAMS
    )
    host = zero_offload.host_bytes(query, model)
    assert host / GIB == pytest.approx(71.71 * model.total_params / 2.851e9, rel=0.01)


def _grpo_total(runtime: str, method: Method) -> int:
    query = Query(
        task=Task.FINETUNE,
        method=method,
        model="llama-3.1-8b",
        runtime=runtime,
        algorithm=Algorithm.GRPO,
        num_generations=8,
        seq=512,
        completion_tokens=20_000,
    )
    return estimate(query).total_bytes


def test_unsloth_grpo_memory_table() -> None:
    """Unsloth's blog "Long-context GRPO" (2025-02-20): Llama 3.1 8B at 20K context, 8 generations per prompt:
    54.3 GB with Unsloth vs 510.8 GB with TRL + FA2.

    Where gpufit differs: for Unsloth it gives ~84 GB (1.55×): it holds the KV cache of all 8 generations at
    once (21.5 GB; the blog counts 2.5 GB, one sequence's) and recomputes one block over all 8 × 20.5k tokens
    (37 GB; Unsloth runs the group in micro-batches). For TRL ~258 GB (0.5×): its LoRA base keeps no
    reference copy and one vLLM copy, and the logits dominate as in the blog — but as TRL's code allocates
    them (measured, data/measured/memory.csv grpo-*): only the 8 × 20k completion positions get logits
    (logits_to_keep) at 6 bytes each (the fp32 log-softmax rows + the bf16 logits), 123 GB; the blog's
    414 GB of "training memory" counts activations that checkpointing (on in gpufit's TRL job) does not hold.
    The direction (Unsloth's kernels and offloaded checkpoints save most of it) holds."""
    unsloth = _grpo_total("unsloth", Method.LORA)
    trl = _grpo_total("trl", Method.LORA)
    assert 54.3e9 <= unsloth <= 54.3e9 * 1.6
    assert 510.8e9 / 2.2 <= trl <= 510.8e9
    assert trl / unsloth >= 3


def test_dpo_holds_a_reference_only_without_adapters() -> None:
    """TRL dpo_trainer / LLaMA-Factory `create_ref_model`: full DPO loads a second, frozen copy; LoRA DPO uses
    the base with the adapter disabled; ORPO is reference-free."""
    base = {"task": Task.FINETUNE, "model": "qwen2.5-7b", "card": "a100-80gb-sxm", "gpus": 4}
    card = load_catalog().by_id["a100-80gb-sxm"]
    for method, algorithm, reference in (
        (Method.FULL, Algorithm.DPO, True),
        (Method.LORA, Algorithm.DPO, False),
        (Method.FULL, Algorithm.ORPO, False),
        (Method.FULL, Algorithm.KTO, True),
    ):
        est = estimate(Query(method=method, algorithm=algorithm, **base))
        facts = job_facts(est, card, 4, None)
        assert facts.rl is not None and facts.rl.reference is reference, (method, algorithm)
        assert facts.rl.sequences_per_step == 2  # chosen + rejected


def test_grpo_reads_generations_not_samples() -> None:
    from core.parser import parse

    query = parse(
        "GRPO on Qwen2.5-7B with LoRA on one A100 80GB using TRL, 8 generations per prompt, 4k completions"
    ).query
    assert query is not None
    assert (query.num_generations, query.completion_tokens, query.samples) == (8, 4096, None)
    assert query.algorithm is Algorithm.GRPO and query.runtime == "trl"


def test_no_fp8_fix_for_a_model_released_in_fp8() -> None:
    from core import advisor

    fixes = advisor.fixes(Query(task=Task.INFERENCE, model="deepseek-r1", card="h100-sxm", gpus=8))
    assert fixes and all(f.kind not in ("fp8", "int8") for f in fixes)


def test_long_context_fix_keeps_the_context() -> None:
    from core import advisor

    query = Query(task=Task.FINETUNE, method=Method.LORA, model="llama-3.1-8b", card="rtx-4090", seq=32768)
    keeping = [f for f in advisor.fixes(query) if f.kind == "chunked_loss"]
    assert keeping and keeping[0].query.seq == 32768 and "offloaded_checkpointing" in keeping[0].changes


def test_launch_lines_match_the_answer() -> None:
    card = load_catalog().by_id["h100-sxm"]
    est = estimate(
        Query(task=Task.INFERENCE, model="qwen2.5-72b", card="h100-sxm", gpus=4, runtime="vllm", seq=32768)
    )
    launch = job_facts(est, card, 4, None).launch
    assert launch is not None
    assert launch.command.startswith("vllm serve Qwen/Qwen2.5-72B")
    assert "--tensor-parallel-size 4" in launch.command and "--max-model-len 32768" in launch.command
    est = estimate(
        Query(
            task=Task.INFERENCE,
            model="llama-3.3-70b",
            card="rtx-4090",
            runtime="llama.cpp",
            precision=Precision.Q4_K_M,
        )
    )
    facts = job_facts(est, load_catalog().by_id["rtx-4090"], 1, est.verdicts[0].fits)
    assert facts.launch is not None and facts.inference_offload is not None
    assert f"-ngl {facts.inference_offload.gpu_layers} -c 4096" in facts.launch.command


def test_mac_gpu_share_is_metals_default_working_set() -> None:
    """recommendedMaxWorkingSetSize as llama.cpp / Ollama log it: 32 GB → 21,845.34 MB (ollama/ollama#434,
    M2 Max; llama.cpp PR #2011, M1 Max), 16 GB → 10,922.67 MB (llama-cpp-python#687, M1 Pro), 64 GB →
    49,152 MiB (llama.cpp#1870, M1 Max). Newer macOS releases give a little more (M3 16 GB: 11.84 GB, llmfit
    PR #754): gpufit's rule is the safe side there."""
    by_id = load_catalog().by_id
    assert by_id["m2-max-32gb"].memory_mib_visible == 21845
    assert by_id["m1-max-32gb"].memory_mib_visible == 21845
    assert by_id["m1-pro-16gb"].memory_mib_visible == 10923
    assert by_id["m1-max-64gb"].memory_mib_visible == 49152
    assert by_id["m3-16gb"].memory_bytes < 11.84e9


def test_m2_max_65b_q4_k_decodes_as_reported() -> None:
    """ggml-org/llama.cpp PR #2290 ("Faster Q4_K on Metal", 2023-07-20): a 65B Q4_K on an M2 Max (30-core
    GPU, 400 GB/s): 141.0 ms/token, 7.1 tok/s. gpufit, through the Metal terms fitted to M2 Ultra runs:
    6.9 tok/s (the 38-core part has the same 400 GB/s)."""
    from core.speed import inference_speed

    query = Query(
        task=Task.INFERENCE,
        model="llama-65b",
        card="m2-max-64gb",
        precision=Precision.Q4_K_M,
        seq=512,
        runtime="llama.cpp",
    )
    est = estimate(query)
    speed = inference_speed(est, load_catalog().by_id["m2-max-64gb"], 1)
    assert 7.1 / 1.25 <= speed.decode_tokens_per_s <= 7.1 * 1.25
