"""One JSON contract for a job: `gpufit estimate --json` and `gpufit ask --json` give the same memory, speed,
time and cost keys and values for the same job, and every answer's `query` says what was understood (vision
jobs included)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.cli import main

JOB_KEYS = (
    "model_name",
    "breakdown",
    "total_bytes",
    "peak_phase",
    "uncertainty",
    "folk_rule",
    "verdicts",
    "warnings",
    "speed",
    "cost",
    "time",
    "serving",
)


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(list(args)) == 0
    found: dict[str, Any] = json.loads(capsys.readouterr().out)
    return found


@pytest.mark.parametrize(
    ("question", "flags"),
    [
        (
            "can I run qwen2.5-7b on a 4090?",
            ["--model", "qwen2.5-7b", "--task", "inference", "--card", "4090"],
        ),
        (
            "LoRA fine-tune llama 3.1 8b on one A100 80GB, 1B tokens",
            ["--model", "llama-3.1-8b", "--task", "lora", "--card", "a100-80gb-sxm", "--tokens", "1B"],
        ),
        (
            "serve qwen2.5-7b for 20 users on an H100",
            ["--model", "qwen2.5-7b", "--task", "inference", "--card", "h100", "--batch", "20"],
        ),
    ],
)
def test_estimate_and_ask_agree_on_the_same_job(
    capsys: pytest.CaptureFixture[str], question: str, flags: list[str]
) -> None:
    estimated = _json(capsys, "estimate", *flags, "--json")
    asked = _json(capsys, "ask", question, "--json")
    answer = asked["answer"]
    assert answer["kind"] == "fit"
    for key in JOB_KEYS:
        assert estimated[key] == answer[key], key
    assert estimated["speed"] is not None and estimated["cost"] is not None
    filled = {k: v for k, v in estimated["query"].items() if k != "defaulted"}
    assert {k: asked["query"][k] for k in filled} == filled


def test_a_vision_answer_says_what_was_understood(capsys: pytest.CaptureFixture[str]) -> None:
    asked = _json(capsys, "ask", "generate 1024x1024 images with SDXL on a 4090", "--json")
    query = asked["query"]
    assert query is not None and query["model"] and query["params_b"] > 1
    assert query["resolution"] == "1024x1024" and query["task"]
    vision = _json(capsys, "vision", query["model"], "--width", "1024", "--card", "rtx-4090", "--json")
    assert vision["query"]["params_b"] == query["params_b"]
