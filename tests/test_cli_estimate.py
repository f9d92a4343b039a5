"""`gpufit estimate`, `cards`, `models`: the JSON contract and the exit codes."""

from __future__ import annotations

import json

import pytest

from bot.cli import main
from core.estimator import COMPONENTS


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_estimate_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "estimate", "--model", "llama-2-13b", "--task", "lora", "--card", "4090")
    query = out["query"]
    assert query["task"] == "finetune" and query["method"] == "lora"
    assert query["model"] == "llama-2-13b" and query["card"] == "rtx-4090"
    for field in ("params_b", "card_memory_bytes", "gpus", "precision", "batch", "seq", "runtime"):
        assert field in query
    assert set(out["breakdown"]) == set(COMPONENTS)
    assert out["total_bytes"] == sum(out["breakdown"].values())
    assert "precision" in query["defaulted"] and "batch" in query["defaulted"]
    assert "method" not in query["defaulted"] and "task" not in query["defaulted"]
    verdict = out["verdicts"][0]
    assert verdict["card"] == "rtx-4090" and verdict["count"] == 1
    assert verdict["fits"] in ("fits", "tight", "no")
    assert set(verdict) >= {"card", "count", "fits", "margin"}


def test_stated_fields_are_never_defaulted(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        "estimate",
        "--params",
        "13B",
        "--task",
        "full",
        "--precision",
        "bf16",
        "--batch",
        "4",
        "--seq",
        "4k",
        "--grad-checkpointing",
        "--card",
        "a100-80gb-sxm",
        "--gpus",
        "8",
    )
    query = out["query"]
    assert query["params_b"] == 13 and query["seq"] == 4096 and query["gpus"] == 8
    for field in ("precision", "batch", "seq", "grad_checkpointing", "card", "gpus", "method", "task"):
        assert field not in query["defaulted"]
    assert {v["count"] for v in out["verdicts"]} == {1, 8}
    assert out["representative_shape"] is True


def test_pretrain_means_full(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "estimate", "--model", "qwen2.5-7b", "--task", "pretrain")
    assert out["query"]["task"] == "pretrain" and out["query"]["method"] == "full"


@pytest.mark.parametrize(("flag", "name"), [("--model", "llama-9000"), ("--card", "rtx-9090")])
def test_unknown_model_or_card_exits_2_naming_closest(
    capsys: pytest.CaptureFixture[str], flag: str, name: str
) -> None:
    argv = ["estimate", "--task", "inference", flag, name]
    if flag == "--card":
        argv += ["--model", "llama-3.1-8b"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert name in err and "Did you mean" in err


def test_cards_and_models_json(capsys: pytest.CaptureFixture[str]) -> None:
    cards = run_json(capsys, "cards")
    assert len(cards) >= 54 and all("memory_bytes" in c for c in cards)
    models = run_json(capsys, "models")
    assert len(models) >= 60 and all("total_params" in m for m in models)


@pytest.mark.parametrize(
    ("typed", "model_id"),
    [
        ("ds r1 distill 32b", "deepseek-r1-distill-qwen-32b"),
        ("llama2 13b", "llama-2-13b"),
        ("lama 3 8b", "llama-3-8b"),
    ],
)
def test_model_names_as_typed_become_registry_ids(
    capsys: pytest.CaptureFixture[str], typed: str, model_id: str
) -> None:
    out = run_json(capsys, "estimate", "--model", typed)
    assert out["query"]["model"] == model_id


@pytest.mark.parametrize(
    "argv",
    [
        ["--model", "llama-3.1-8b", "--task", "lora", "--card", "4090"],
        ["--params", "13B", "--task", "inference"],
        ["--model", "qwen2.5-72b", "--runtime", "vllm", "--card", "h100", "--gpus", "2", "--seq", "32k"],
        ["--model", "mixtral-8x7b", "--task", "qlora", "--card", "a100-40gb-sxm"],
    ],
)
def test_readable_breakdown(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(["estimate", *argv]) == 0
    out = capsys.readouterr().out
    assert "GiB" in out and "Rule of thumb" in out


def test_readable_breakdown_in_chinese() -> None:
    from bot.answer.estimate_view import render_estimate
    from core.estimator import estimate
    from core.query import Query, Task

    text = render_estimate(estimate(Query(task=Task.INFERENCE, model="qwen2.5-7b", card="rtx-4090")), "zh")
    assert "经验公式" in text


@pytest.mark.parametrize(
    ("argv", "flag"),
    [(["ask", "--bogus"], "--bogus"), (["estimate", "--bogus"], "--bogus"), (["plan", "--jsn"], "--jsn")],
)
def test_an_unknown_flag_is_named_before_a_missing_argument(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    # argparse checks required arguments first: without this, `gpufit ask --bogus` says "question required"
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"unrecognized arguments: {flag}" in err and "required" not in err


def test_a_missing_question_alone_is_still_named(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["ask", "--json"])
    assert "required: question" in capsys.readouterr().err
