"""Ollama answers OLLAMA_NUM_PARALLEL requests at once and queues the rest (core/jobs/slots.py).

ollama/ollama @fb30760: envconfig/config.go `NumParallel = Uint("OLLAMA_NUM_PARALLEL", 1)` (1 since v0.10.0,
commit 20c3266e9), llm/llama_server.go starts llama-server with `-c NumCtx*numParallel -np numParallel` (every
slot the whole num_ctx), server/sched.go queues up to OLLAMA_MAX_QUEUE (512) and answers "server busy" past
it. So "50并发" on Ollama is not 50 × num_ctx of KV cache (it was answered "needs ≈1,089 GiB per card"
beside a 🟡 "runs"): the memory is one slot's, and 49 of the 50 wait."""

from __future__ import annotations

from bot.answer import answer
from core.estimator import estimate
from core.query import Query, Task
from core.runtimes import runtime_profile
from core.units import GIB


def test_fifty_at_once_on_two_3090s_sizes_one_slot_and_queues_49() -> None:
    reply = answer("用两张3090跑ollama qwen2.5 72b q4，内存128g，50并发", lang="zh")
    slots = reply.facts["slots"]
    assert isinstance(slots, dict)
    assert (slots["parallel"], slots["requested"], slots["queued"], slots["refused"]) == (1, 50, 49, 0)
    assert slots["parallel_said"] is False and slots["parallel_setting"] == "OLLAMA_NUM_PARALLEL"
    total = reply.facts["total_bytes"]
    assert isinstance(total, int) and total < 60 * GIB  # one slot's KV, not 50 of them (≈1,089 GiB)
    assert reply.facts["verdict"] == "offload"
    assert "Ollama 一次只处理 1 个请求（OLLAMA_NUM_PARALLEL=1，0.10.0 起的默认值" in reply.html
    assert "50 个请求里其余 49 个在队列里排队等空位" in reply.html


def test_in_english_with_the_per_stream_speed() -> None:
    reply = answer("run qwen2.5 72b on two 3090s with ollama, 128GB RAM, 50 concurrent users", lang="en")
    assert "Ollama answers 1 request at a time (OLLAMA_NUM_PARALLEL=1, its default since 0.10.0" in reply.html
    assert "the other 49 of 50 requests wait in its queue for a free slot, each then answered at ≈" in (
        reply.html
    )
    assert "1,089" not in reply.html


def test_the_parallel_said_is_the_slots_and_their_memory() -> None:
    reply = answer("ollama qwen2.5 7b on a 4090 with OLLAMA_NUM_PARALLEL=4", lang="en")
    slots = reply.facts["slots"]
    assert isinstance(slots, dict) and slots["parallel"] == 4 and slots["parallel_said"] is True
    assert slots["requested"] is None and slots["queued"] == 0
    assert "answers 4 requests at a time (OLLAMA_NUM_PARALLEL=4, as you said)" in reply.html
    one = answer("ollama qwen2.5 7b on a 4090", lang="en").facts["breakdown"]
    four = reply.facts["breakdown"]
    assert isinstance(one, dict) and isinstance(four, dict)
    assert four["kv_cache"] == 4 * one["kv_cache"]  # num_ctx × parallel (llm/llama_server.go)


def test_past_the_queue_requests_are_refused() -> None:
    queue = runtime_profile("ollama").slots
    assert queue is not None and queue.max_queue == 512 and queue.parallel == 1
    job = Query(
        task=Task.INFERENCE, model="qwen2.5-7b", card="rtx-4090", runtime="ollama", batch=600, parallel=8
    )
    slots = estimate(job).slots
    assert slots is not None
    assert (slots.parallel, slots.queued, slots.refused) == (8, 512, 80)
    assert estimate(job).query.batch == 8


def test_engines_without_slots_keep_the_concurrency() -> None:
    job = Query(task=Task.INFERENCE, model="qwen2.5-7b", card="rtx-4090", runtime="vllm", batch=50)
    result = estimate(job)
    assert result.slots is None and result.query.batch == 50


def test_the_parser_reads_the_setting() -> None:
    from core.parser import parse

    for text in (
        "ollama qwen2.5 7b OLLAMA_NUM_PARALLEL=8 on a 4090",
        "llama-server -np 8 qwen2.5 7b on a 4090",
    ):
        query = parse(text).query
        assert query is not None and query.parallel == 8, text
    query = parse("vllm qwen2.5 7b --tensor-parallel-size 2 on 4090s").query
    assert query is not None and query.parallel is None


def test_llama_server_slots_share_one_context() -> None:
    """llama-server's -np auto is 4 slots over one unified KV cache (tools/server/server.cpp: n_parallel =
    4, kv_unified = true): 20 at once is one -c of KV, 4 served, 16 waiting; an -np said splits -c."""
    reply = answer("llama-server qwen2.5 14b on a 4090, 20 users at once", lang="en")
    slots = reply.facts["slots"]
    assert isinstance(slots, dict)
    assert (slots["parallel"], slots["kv_shared"], slots["queued"], slots["refused"]) == (4, True, 16, 0)
    single = answer("llama-server qwen2.5 14b on a 4090", lang="en").facts["breakdown"]
    shared = reply.facts["breakdown"]
    assert isinstance(single, dict) and isinstance(shared, dict)
    assert shared["kv_cache"] == single["kv_cache"]  # -c is the whole cache, whatever the slots
    shown = "answers 4 requests at a time (-np auto, its default), sharing one 4,096-token KV cache"
    assert shown in reply.html
    split = answer("llama.cpp server, Qwen2.5 14B Q8_0, -c 16384 -np 4 on a 4090, does it fit?", lang="en")
    said = "(-np 4, as you said), splitting one 16,384-token KV cache (-c) between them, 4,096 tokens each"
    assert said in split.html


def test_n_cpu_moe_with_a_count_keeps_the_other_layers_experts_on_the_card() -> None:
    """llama.cpp --n-cpu-moe N: "keep the Mixture of Experts (MoE) weights of the first N layers in the CPU"
    (common/arg.cpp). Qwen3-30B-A3B has 48 MoE layers, so --n-cpu-moe 30 leaves 18 layers' experts on the
    card (it was read as every expert in RAM)."""
    reply = answer("llama-server --n-cpu-moe 30 qwen3-30b-a3b on a 3060 12GB with 32GB DDR4", lang="en")
    offload = reply.facts["offload"]
    assert isinstance(offload, dict) and offload["mode"] == "experts"
    assert offload["expert_layers_on_gpu"] == 18
    launch = reply.facts["launch"]
    assert isinstance(launch, dict) and "--n-cpu-moe 30" in launch["command"]
