"""A job on the CPU alone ("no GPU", "CPU only", "没有显卡", "纯CPU"): whether it fits in system RAM, the
decode speed from the machine's memory bandwidth (a desktop's two channels assumed, the channels said used),
the slow prompt, and the GPUs to rent instead (core/jobs/cpu.py, data/jobs.toml [cpu] and [host])."""

from __future__ import annotations

from typing import Any

import pytest
from test_answer_corpus import ask_json

from core.estimator import estimate
from core.jobs.cpu import cpu_run
from core.parser import parse
from core.query import Query, Task
from core.registry import load_registry


def answer_of(*turns: str) -> dict[str, Any]:
    previous = None
    data: dict[str, Any] = {}
    for text in turns:
        data, previous, _ = ask_json(text, previous)
    answer: dict[str, Any] = data["answer"]
    return answer


@pytest.mark.parametrize(
    "text",
    [
        "没有显卡，llama.cpp 跑 qwen2.5-7b",
        "纯CPU 64G内存 跑qwen2.5 14b",
        "只有cpu能跑llama 3.1 8b吗",
        "电脑没独显，想跑qwen2.5-7b",
        "can I run llama 3.1 8b on my laptop with no GPU, 16GB RAM?",
        "CPU only: qwen2.5-7b with ollama",
        "I don't have a GPU, can I run mistral 7b?",
        "run qwen2.5-7b without a gpu",
    ],
)
def test_no_gpu_is_read_in_both_languages(text: str) -> None:
    query = parse(text).query
    assert query is not None and query.cpu_only is True, text
    assert query.card is None and query.card_memory_bytes is None and query.gpus is None, text


@pytest.mark.parametrize(
    "text",
    [
        "qwen3-30b-a3b on a 3060 with -ot exps=CPU",
        "llama.cpp qwen3-30b-a3b 4060ti 专家放cpu",
        "deepseek v3 with ktransformers, experts on the CPU, one 4090",
    ],
)
def test_experts_kept_on_the_cpu_are_a_split_not_cpu_only(text: str) -> None:
    query = parse(text).query
    assert query is not None and query.cpu_only is None, text


@pytest.mark.parametrize(
    "text", ["没有显卡 32g内存 跑qwen2.5 14b", "没有独立显卡，32G内存，能用llama.cpp跑qwen2.5 14b吗"]
)
def test_no_card_right_before_a_ram_size_is_still_cpu_only(text: str) -> None:
    query = parse(text).query
    assert query is not None
    assert query.cpu_only
    assert query.card_memory_bytes is None
    assert query.host_memory_bytes == 32 * 10**9


def test_a_size_beside_no_gpu_is_the_system_ram() -> None:
    query = parse("serve qwen3-30b-a3b, no gpu, 512gb ddr5 8 channel").query
    assert query is not None
    assert query.card_memory_bytes is None
    assert query.host_memory_bytes == 512 * 10**9
    assert query.host_memory_channels == 8


def _decode(model: str, memory: str, channels: int) -> float:
    query = Query(
        task=Task.INFERENCE,
        model=model,
        runtime="llama.cpp",
        cpu_only=True,
        host_memory_bytes=64 * 10**9,
        host_memory_type=memory,
        host_memory_channels=channels,
    )
    est = estimate(query)
    run = cpu_run(est, load_registry().by_id[model], query)
    return run.decode_tokens_per_s


@pytest.mark.parametrize(
    ("memory", "channels", "measured"),
    [
        # normiebench llama-bench, Llama 3.1 8B Q4_K_M, backend cpu, tg128 (github.com/brand-o/normiebench)
        ("ddr4", 2, 6.51),  # #34 Intel i5-9500, dual-channel DDR4
        ("ddr5", 2, 9.63),  # #8 Ryzen 7 8840U, DDR5
        ("ddr4", 4, 16.78),  # #52 Threadripper 3970X, quad-channel DDR4
    ],
)
def test_cpu_decode_is_within_the_band_of_published_llama_bench_runs(
    memory: str, channels: int, measured: float
) -> None:
    predicted = _decode("llama-3.1-8b", memory, channels)
    # within the answer's stated ±50% band (a desktop's cores keep up with its bandwidth at ≈60%; the
    # overclocked Threadripper reached 81% of its quad channels)
    assert measured / 1.5 <= predicted <= measured * 1.5, (predicted, measured)


def test_the_ram_said_decides_and_the_answer_is_the_cpus_own() -> None:
    answer = answer_of("没有显卡，llama.cpp 纯cpu 跑 qwen2.5-7b q4_k_m，内存32g ddr4 双通道，一秒能出几个字")
    cpu = answer["cpu"]
    assert answer["verdict"] == "cpu" and cpu["runs"] is True and cpu["fits"] is True
    assert cpu["host_memory"] == "DDR4-3200 × 2" and cpu["host_assumed"] is False
    assert 3 <= answer["speed"]["decode_tokens_per_s"] <= 12
    assert answer["speed"]["decode_tokens_per_s"] == cpu["decode_tokens_per_s"]
    assert answer["speed"]["parallelism"] == "cpu"
    assert "setup" not in answer["speed"]  # not the first rented card's speed
    assert cpu["prompt_tokens_per_s"] < 100  # the prompt is slow on the cores
    assert answer["plans"], "the GPUs to rent instead"
    assert answer["launch"]["command"].startswith("llama-server") and "-ngl 0" in answer["launch"]["command"]
    text = answer["text"]
    assert "只用 CPU 能跑" in text and "DDR4-3200 × 2" in text and "（-ngl 0）" in text
    assert "或者租一张 GPU" in text
    assert answer["breakdown"]["overhead"] == 0  # no CUDA context nor allocator on a CPU


def test_too_little_ram_is_said_with_what_it_needs() -> None:
    answer = answer_of("cpu only, qwen2.5-72b with ollama, 32gb ram")
    assert answer["verdict"] == "no" and answer["cpu"]["fits"] is False
    assert answer["cpu"]["runtime"] == "ollama" and answer["cpu"]["gpu_layers_knob"] == "num_gpu 0"
    assert "32.0 GB of system RAM is not enough" in answer["text"]
    assert "(num_gpu 0)" in answer["text"]


def test_ram_not_said_assumes_a_desktop_and_says_so() -> None:
    answer = answer_of("run qwen2.5-7b without a gpu")
    cpu = answer["cpu"]
    assert cpu["fits"] is None and cpu["host_assumed"] is True and cpu["host_memory"] == "DDR5-5600 × 2"
    assert "assumed: a desktop's two channels" in answer["text"]


def test_a_job_only_a_server_holds_is_given_a_servers_channels() -> None:
    answer = answer_of("没有显卡 能跑 deepseek-r1 671b 吗")
    cpu = answer["cpu"]
    assert cpu["server"] is True and cpu["host_memory"] == "DDR5-4800 × 8"
    assert "假设是服务器八通道" in answer["text"]


def test_a_gpu_engine_asked_is_answered_on_llama_cpp() -> None:
    answer = answer_of("serve qwen3-30b-a3b with vllm, no gpu, 512gb ddr5 8 channel")
    cpu = answer["cpu"]
    assert cpu["runtime"] == "llama.cpp" and cpu["asked_runtime"] == "vllm"
    assert "vLLM needs a GPU; answered for llama.cpp." in answer["text"]


def test_a_card_named_beside_no_gpu_is_answered_for_the_card() -> None:
    answer = answer_of("no gpu yet, should I rent a 4090 for qwen2.5-7b?")
    assert "cpu" not in answer
    assert answer["verdict"] == "fits"


def test_follow_ups_move_between_the_cpu_and_a_card() -> None:
    on_cpu = answer_of("4090 跑 qwen2.5-7b 推理", "那纯CPU呢")
    assert on_cpu["cpu"]["runs"] is not False
    back = answer_of("没有显卡 跑 qwen2.5-7b", "换成4090呢")
    assert "cpu" not in back and back["verdict"] == "fits"
