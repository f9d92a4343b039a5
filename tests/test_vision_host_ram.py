"""Offloaded image / video weights wait in system RAM: the answer says how much RAM that needs, and checks the
RAM the user said (the weights there plus ~4 GB for the OS, as llama.cpp's offload is checked). A job whose
card holds its part but whose RAM cannot hold the rest does not run — never a 🟡 "runs" on 32 GB of RAM
for Wan 2.1 14B's 33 GiB of streamed weights."""

from __future__ import annotations

import pytest

from bot.answer import answer
from core.jobs.offload import OS_RESERVE_BYTES
from core.parser import parse
from core.units import GIB
from core.vision import Offload, VisionJob, estimate_vision


def _wan(host: int | None) -> VisionJob:
    return VisionJob(model="wan2.1-t2v-14b", runtime="comfyui", card="rtx-4090", host_memory_bytes=host)


def test_the_ram_needed_is_the_weights_in_ram_and_the_os() -> None:
    result = estimate_vision(_wan(None))
    offload = result.offload
    assert offload is not None and offload.host_fits is None and result.verdict == "offload"
    assert offload.host_need_bytes == offload.host_bytes + OS_RESERVE_BYTES
    assert offload.host_bytes > 30 * GIB  # the 14B denoiser in bf16 beside what ComfyUI keeps on the card


def test_too_little_ram_is_a_no_and_enough_ram_runs() -> None:
    short = estimate_vision(_wan(32 * 10**9))
    assert short.offload is not None and short.offload.host_fits is False
    assert not short.offload.runs and short.verdict == "no"
    enough = estimate_vision(_wan(64 * 10**9))
    assert enough.offload is not None and enough.offload.host_fits is True and enough.verdict == "offload"


def test_diffusers_model_offload_is_checked_too() -> None:
    """diffusers loads the whole pipeline into RAM before its hooks move a component to the card."""
    job = VisionJob(model="flux.1-dev", card="rtx-4090", offload=Offload.MODEL, host_memory_bytes=16 * 10**9)
    offload = estimate_vision(job).offload
    assert offload is not None and offload.host_fits is False  # 31.6 GiB of bf16 pipeline and the OS
    assert offload.host_need_bytes > offload.host_bytes + OS_RESERVE_BYTES


@pytest.mark.parametrize(
    ("question", "host"),
    [
        ("comfyui wan2.1 14b 4090 32g内存 能跑吗", 32 * 10**9),
        ("Wan 2.1 14B in ComfyUI on a 4090, 64GB RAM?", 64 * 10**9),
    ],
)
def test_the_parser_reads_the_ram_of_a_vision_question(question: str, host: int) -> None:
    parsed = parse(question)
    assert parsed.vision is not None and parsed.vision.host_memory_bytes == host


@pytest.mark.parametrize(
    ("question", "verdict", "words"),
    [
        ("comfyui wan2.1 14b 4090 32g内存 能跑吗", "no", ("内存不够", "39.1 GB")),
        ("用diffusers跑flux dev 4090 开model cpu offload 32g内存够吗", "no", ("整条管线", "内存不够")),
        ("Wan 2.1 14B in ComfyUI on a 4090 with 32 GB RAM?", "no", ("is not enough", "39.1 GB")),
        ("comfyui flux dev fp8 3060 12g 16g内存 能出图吗", "offload", ("需要系统内存约", "✅")),
        ("ComfyUI FLUX dev fp8 on a 3060 12GB with 16GB RAM?", "offload", ("System RAM needed", "✅")),
    ],
)
def test_the_answer_checks_the_ram_in_both_languages(
    question: str, verdict: str, words: tuple[str, ...]
) -> None:
    reply = answer(question)
    assert reply.facts["verdict"] == verdict, reply.html
    for word in words:
        assert word in reply.html, (word, reply.html)
