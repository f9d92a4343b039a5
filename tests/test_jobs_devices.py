"""Issue 18's devices and shapes: an Apple silicon Mac as one device with Metal engines, a card given only by
its size, sequence parallelism over several cards."""

from __future__ import annotations

from typing import Any

from bot.answer import answer
from core.catalog import load_catalog
from core.estimator import estimate
from core.query import Method, Query, Task
from core.units import GIB


def _json(text: str) -> dict[str, Any]:
    reply: Any = answer(text).to_json()
    found: dict[str, Any] = reply
    return found


def test_a_mac_is_a_device_not_a_rental_card() -> None:
    catalog = load_catalog()
    mac = catalog.by_id["m3-max-64gb"]
    assert mac.unified_memory and mac.bandwidth_gb_s == 400 and mac.memory_bytes == 48 * GIB
    assert mac not in catalog.cards  # no plan, price or "bigger card" search offers a Mac
    assert catalog.by_id["m3-max-36gb"].bandwidth_gb_s == 300  # the 30-core GPU part


def test_a_cuda_engine_on_a_mac_is_answered_on_a_metal_one() -> None:
    for text, lang in (
        ("Can I use vLLM on my MacBook M3 Max 128GB for qwen2.5 32b?", "en"),
        ("m3 max 128g 用 vllm 部署 qwen2.5 32b 行吗", "zh"),
    ):
        data = _json(text)
        assert data["query"]["card"] == "m3-max-128gb"
        assert data["query"]["runtime"] == "llama.cpp"
        apple = data["answer"]["apple"]
        assert apple["unsupported_runtime"] == "vllm" and apple["gpu_share"] == 0.75
        assert "vLLM" in data["answer"]["text"] and data["answer"]["lang"] == lang
        assert data["answer"]["cards_needed"] is None


def test_a_mac_fine_tune_runs_in_mlx_and_the_sysctl_is_offered_when_it_helps() -> None:
    data = _json("我的macbook pro m3 max 36g，能不能微调qwen2.5 7b")
    assert data["query"]["runtime"] == "mlx" and "MLX" in data["answer"]["text"]
    big = _json("Mac Studio M2 Ultra 192GB, Llama 3.1 70B in bf16?")
    # 70.6B × 2 B = 131 GiB + KV on 144 GiB of Metal's share: fits; R1 Q4_K_M (447 GiB) on 512 GB: the limit
    r1 = _json("Mac Studio M3 Ultra 512GB — DeepSeek R1 Q4_K_M with llama.cpp, tokens/s?")
    assert big["answer"]["apple"]["wired_limit_mb"] is None
    assert r1["answer"]["verdict"] == "no" and r1["answer"]["apple"]["wired_limit_mb"] == (512 - 8) * 1024
    assert "iogpu.wired_limit_mb" in r1["answer"]["text"]


def test_a_card_given_by_its_size_gets_the_split_of_a_named_card() -> None:
    named = _json("I have an RTX 4060 Ti 16GB. Qwen2.5-32B Q4_K_M in llama.cpp — how fast?")
    sized = _json("I have a 16GB GPU. Qwen2.5-32B Q4_K_M in llama.cpp — how fast?")
    assert sized["answer"]["verdict"] == named["answer"]["verdict"] == "offload"
    assert sized["answer"]["offload"]["gpu_layers"] == named["answer"]["offload"]["gpu_layers"]
    assert sized["answer"]["speed"]["typical_card"] == "rtx-4060-ti-16gb"
    zh = _json("显存12g 内存64g 能用llama.cpp跑qwen2.5 72b吗 速度大概多少")
    assert zh["query"]["card_memory_bytes"] == 12 * GIB and zh["query"]["host_memory_bytes"] == 64e9
    assert zh["answer"]["verdict"] == "offload" and "RTX 3060" in zh["answer"]["text"]


def test_sequence_parallelism_divides_activations_and_logits_over_the_cards() -> None:
    base = Query(
        task=Task.FINETUNE, method=Method.FULL, model="qwen2.5-7b", card="h100-sxm", gpus=8, seq=131072
    )
    plain = estimate(base).breakdown
    split = estimate(base.model_copy(update={"sequence_parallel": 0})).breakdown
    assert estimate(base.model_copy(update={"sequence_parallel": 0})).query.sequence_parallel == 8
    assert split.logits * 8 == plain.logits or abs(split.logits * 8 - plain.logits) <= 8
    assert split.activations < plain.activations / 4
    assert (split.weights, split.optimizer) == (plain.weights, plain.optimizer)
    lora = _json("LoRA Llama 3.1 8B at 128k context on 4x A100 80GB — what are my options?")
    assert any(f["kind"] == "sequence_parallel" for f in lora["answer"]["fixes"])
    said = _json("360-LLaMA-Factory sequence_parallel_size=4 qwen2.5 14b 全参 64k 4张h100 够吗")
    assert said["query"]["sequence_parallel"] == 4 and "序列并行" in said["answer"]["text"]
