"""vLLM --cpu-offload-gb N: N GiB of each card's weights in host memory, read over PCIe in every forward pass
(core/jobs/weight_offload.py).

vLLM CacheConfig.cpu_offload_gb: "The space in GiB to offload to CPU, per GPU … a virtual way to increase the
GPU memory size … part of the model is loaded from CPU memory to GPU memory on the fly in each model forward
pass"; vllm/model_executor/offloader/uva.py puts the decoder layers' parameters in pinned host memory until N
GiB are there. So Qwen2.5-32B in bf16 (61 GiB) with 48 GiB offloaded holds 13 GiB on a 24 GB A30 and loads;
each step reads 48 GiB (51.5 GB) over PCIe 4.0 at ≈25 GB/s ≈ 2 s, ≈0.5 tokens/s. With 20 GiB offloaded, 41
GiB stay on a 4090's 21.6 GiB: it does not load."""

from __future__ import annotations

import pytest

from bot.answer import answer
from core.catalog import load_catalog
from core.estimator import estimate
from core.jobs.weight_offload import pcie_bytes_s
from core.query import Precision, Query, Task
from core.units import GIB


def test_48_gib_offloaded_loads_on_an_a30_at_pcie_speed() -> None:
    reply = answer("vllm 开 --cpu-offload-gb 48，单卡 a30 24g 跑 qwen2.5-32b bf16，能加载吗 多快", lang="zh")
    facts = reply.facts
    assert facts["verdict"] == "offload"
    breakdown = facts["breakdown"]
    assert isinstance(breakdown, dict)
    assert 12.5 * GIB < breakdown["weights"] < 13.5 * GIB  # 61 GiB less the 48 in host memory
    offload = facts["offload"]
    assert isinstance(offload, dict) and offload["mode"] == "weights"
    assert offload["host_bytes"] == 48 * GIB and offload["pcie_gen"] == 4
    assert offload["stream_s"] == pytest.approx(48 * GIB / 25e9, rel=0.01)
    speed = facts["speed"]
    assert isinstance(speed, dict) and 0.3 < speed["decode_tokens_per_s"] < 0.7
    launch = facts["launch"]
    assert isinstance(launch, dict) and "--cpu-offload-gb 48" in launch["command"]
    assert "每次前向都要经 PCIe 4.0（约 25 GB/s）读一遍" in reply.html
    assert "48.0 GiB 放在内存里" in reply.html


def test_20_gib_offloaded_is_not_enough_on_a_4090_and_the_fixes_drop_it() -> None:
    reply = answer(
        "vLLM with --cpu-offload-gb 20 on a single RTX 4090, Qwen2.5-32B in bf16 — would it even load?",
        lang="en",
    )
    assert reply.facts["verdict"] == "no"
    fixes = reply.facts["fixes"]
    assert isinstance(fixes, list) and fixes
    assert all(fix["kind"] not in ("fp8", "int8") for fix in fixes)  # 30 GiB of fp8 still does not fit
    assert any(fix["kind"] == "int4" for fix in fixes)  # 17 GiB of 4-bit weights fit on the card alone
    assert "--cpu-offload-gb 20" in reply.html


def test_the_host_must_hold_what_is_offloaded() -> None:
    reply = answer("vllm --cpu-offload-gb 48 a30 qwen2.5-32b bf16, 32GB RAM", lang="en")
    assert reply.facts["verdict"] == "no"
    assert "plus 29.8 GiB of system RAM are not enough" in reply.html


def test_pcie_by_generation() -> None:
    cards = load_catalog().by_id
    assert pcie_bytes_s(cards["rtx-4090"]) == 25e9
    assert pcie_bytes_s(cards["h100-pcie"]) == 50e9
    assert pcie_bytes_s(cards["t4"]) == 12.5e9


def test_engines_without_the_setting_ignore_it() -> None:
    job = Query(
        task=Task.INFERENCE, model="qwen2.5-32b", card="a30", runtime="sglang", precision=Precision.BF16
    )
    plain = estimate(job).breakdown.weights
    assert estimate(job.model_copy(update={"cpu_offload_gb": 48.0})).breakdown.weights == plain


def test_never_more_than_the_weights() -> None:
    job = Query(
        task=Task.INFERENCE, model="qwen2.5-7b", card="a30", runtime="vllm", precision=Precision.BF16
    ).model_copy(update={"cpu_offload_gb": 500.0})
    assert estimate(job).breakdown.weights == 0
