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
            "serve qwen2.5-7b for 20 users at once on an H100",  # 20 at once: --batch 20
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


@pytest.mark.parametrize(
    "question",
    ["cheapest card to serve qwen2.5-7b", "全参微调qwen2.5 14b 性价比最高的配置"],
)
def test_plan_and_ask_say_the_same_job_was_understood(
    capsys: pytest.CaptureFixture[str], question: str
) -> None:
    """`gpufit plan --json` and `gpufit ask --json` give the same filled `query` (with `params_b` and
    `defaulted`) and the same plans for the same question (the answer lists the first few)."""
    planned = _json(capsys, "plan", question, "--json")
    asked = _json(capsys, "ask", question, "--json")
    assert asked["answer"]["kind"] == "plan"
    assert planned["query"] == asked["query"]
    assert planned["query"]["params_b"] and planned["query"]["defaulted"]
    shown = asked["answer"]["plans"]
    assert shown and planned["plans"][: len(shown)] == shown
    # the job's own figures are the first plan's, under the same keys as for a card named
    for key in ("speed", "time", "cost"):
        assert planned[key] == asked["answer"][key], key
    cost = asked["answer"]["cost"]
    assert cost["setup"] == {
        "card": shown[0]["card"],
        "count": shown[0]["count"],
        "fix": None,
        "plan": 1,
        "asked": False,
    }
    assert (
        cost["per_hour"] == shown[0]["cost_per_hour"]
        and cost["price"]["provider"] == shown[0]["price_provider"]
    )
    speed = asked["answer"]["speed"]
    assert speed.get("decode_tokens_per_s", speed.get("tokens_per_s")) == (
        shown[0]["decode_tokens_per_s"] or shown[0]["training_tokens_per_s"]
    )


def test_an_answer_without_a_card_gives_the_first_plans_cost(capsys: pytest.CaptureFixture[str]) -> None:
    """A fit question that names no card lists plans: its `speed` and `cost` are the first plan's (on the
    platform named, at that platform's price), not missing."""
    answer = _json(
        capsys, "ask", "Best GPU on AutoDL for serving a 14B model to ~50 concurrent users?", "--json"
    )
    first = answer["answer"]["plans"][0]
    cost = answer["answer"]["cost"]
    assert cost["price"]["provider"] == "AutoDL" == first["price_provider"]
    assert cost["setup"]["card"] == first["card"] and cost["per_hour"] == first["cost_per_hour"]
    assert answer["answer"]["speed"]["kind"] == "inference"


# What every plan carries, language or vision job (core/advisor/model.py PlanFigures).
PLAN_KEYS = {
    "card",
    "card_name",
    "memory_gib",
    "count",
    "need_bytes",
    "capacity_bytes",
    "verdict",
    "margin",
    "cost_per_hour",
    "total_cost",
    "currency",
    "notes",
    "price_source",
    "price_provider",
    "price_date",
    "query",
}


@pytest.mark.parametrize(
    ("question", "flags"),
    [
        (
            "generate 1024x1024 images with SDXL on a 4090",
            ["sdxl", "--width", "1024", "--height", "1024", "--card", "rtx-4090"],
        ),
        (
            "ComfyUI FLUX.1 dev fp8 on an RTX 3060 12GB",
            ["flux.1-dev", "--precision", "fp8", "--runtime", "comfyui", "--card", "rtx-3060-12gb"],
        ),
    ],
)
def test_vision_and_ask_agree_on_the_same_vision_job(
    capsys: pytest.CaptureFixture[str], question: str, flags: list[str]
) -> None:
    """`gpufit vision --json` and `gpufit ask --json` give the same memory, speed, time and cost for the same
    image job, under the same keys as a language-model job."""
    vision = _json(capsys, "vision", *flags, "--json")
    answer = _json(capsys, "ask", question, "--json")["answer"]
    for key in JOB_KEYS:
        assert key in vision and key in answer, key
        assert vision[key] == answer[key], key
    assert vision["speed"]["kind"] == "vision"
    assert vision["verdict"] == answer["verdict"] and vision["runtime"] == answer["runtime"]


def test_language_and_vision_jobs_share_the_cost_and_breakdown_shapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One JobCost for both (per_million_tokens for a language model, per_thousand_items for a pipeline),
    a breakdown of named terms in bytes, a speed with its kind."""
    language = _json(
        capsys, "estimate", "--model", "qwen2.5-7b", "--task", "inference", "--card", "4090", "--json"
    )
    vision = _json(capsys, "vision", "sdxl", "--card", "rtx-4090", "--json")
    assert set(language["cost"]) == set(vision["cost"])
    assert language["cost"]["per_million_tokens"] and vision["cost"]["per_thousand_items"]
    for body in (language, vision):
        assert all(isinstance(v, int) for v in body["breakdown"].values())
        assert sum(body["breakdown"].values()) == body["total_bytes"]
        assert body["speed"]["kind"] in ("inference", "training", "vision")


def test_plan_gives_the_same_plan_keys_for_a_vision_job(capsys: pytest.CaptureFixture[str]) -> None:
    """`gpufit plan --json` ranks cards for an image job as for a language model (it used to ask "which
    model?"), and its `query` says what was understood: model, size, resolution, task."""
    vision = _json(capsys, "plan", "generate 1024x1024 SDXL images", "--json")
    language = _json(capsys, "plan", "cheapest card to serve qwen2.5-7b", "--json")
    assert vision["plans"] and language["plans"]
    for plan in (*vision["plans"], *language["plans"]):
        assert set(plan) >= PLAN_KEYS, PLAN_KEYS - set(plan)
    query = vision["query"]
    assert query["model"] == "sdxl" and query["params_b"] > 1
    assert query["resolution"] == "1024x1024" and query["task"] == "generate"
    assert vision["plans"][0]["cost_per_thousand_items"] is not None
