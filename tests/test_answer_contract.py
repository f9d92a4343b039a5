"""The answer's machine-readable side: `gpufit ask --json`, buttons and follow-up actions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.answer import answer, answer_query, apply_action, query_json
from bot.cli import main
from core.estimator import estimate
from core.query import Method, Precision, Query, Task
from core.report import estimate_json


def test_json_query_has_the_estimate_schema_and_honest_defaulted() -> None:
    stated = Query(task=Task.FINETUNE, method=Method.LORA, model="llama-3.1-8b", card="rtx-4090", seq=4096)
    reply = answer_query(stated, lang="en")
    data: Any = reply.to_json()
    schema: Any = estimate_json(estimate(stated))["query"]
    assert set(data["query"]) == set(schema)
    defaulted = data["query"]["defaulted"]
    for field in ("method", "model", "card", "seq", "task"):
        assert field not in defaulted
    assert {"precision", "batch"} <= set(defaulted)
    assert data["query"]["seq"] == 4096 and data["query"]["batch"] == 1


def test_json_answer_fields() -> None:
    data: Any = answer_query(Query(model="qwen2.5-7b", card="rtx-4090"), lang="en").to_json()
    ans = data["answer"]
    for key in (
        "kind",
        "lang",
        "text",
        "html",
        "verdicts",
        "breakdown",
        "total_bytes",
        "speed",
        "cost",
        "fixes",
    ):
        assert key in ans
    assert ans["kind"] == "fit" and ans["verdict"] == "fits"
    assert ans["total_bytes"] == sum(ans["breakdown"].values())
    assert "<b>" not in ans["text"]
    assert ans["speed"]["decode_tokens_per_s"] > 0
    json.dumps(data)  # everything serializable


def test_no_card_lists_plans_cheapest_first() -> None:
    ans: dict[str, Any] = answer_query(Query(model="llama-3.1-8b"), lang="en").to_json()["answer"]
    costs = [p["cost_per_hour"] for p in ans["plans"] if p["cost_per_hour"] is not None]
    assert ans["plans"] and costs == sorted(costs)


def test_cli_ask_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--json", "Can a 4090 run Llama 3.1 8B?"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answer"]["kind"] == "fit"
    assert data["query"]["card"] == "rtx-4090"
    assert "card" not in data["query"]["defaulted"] and "model" not in data["query"]["defaulted"]


def test_cli_ask_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "4090能跑llama", "3.1", "8b吗"]) == 0
    out = capsys.readouterr().out
    assert "GiB" in out and "<b>" not in out


def test_query_json_without_filled() -> None:
    assert query_json(None, None) is None
    assert query_json(Query(model="x"), None)["model"] == "x"  # type: ignore[index]


@pytest.mark.parametrize(
    ("action", "field", "value"),
    [
        ("method=qlora", "method", Method.QLORA),
        ("precision=int4", "precision", Precision.INT4),
        ("seq=8192", "seq", 8192),
        ("card=a100-80gb-sxm", "card", "a100-80gb-sxm"),
        ("gpus=2", "gpus", 2),
        ("grad_checkpointing=true", "grad_checkpointing", True),
    ],
)
def test_apply_action_marks_the_field_as_said(action: str, field: str, value: object) -> None:
    base = Query(model="llama-3.1-8b", card="rtx-4090").with_defaults()
    changed = apply_action(base, action)
    assert getattr(changed, field) == value
    assert field in changed.said()
    assert changed.model == "llama-3.1-8b"
    assert "batch" not in changed.said()  # defaults stay defaults


def test_method_action_turns_inference_into_finetune() -> None:
    changed = apply_action(Query(model="llama-3.1-8b"), "method=lora")
    assert changed.task is Task.FINETUNE and changed.method is Method.LORA


def test_model_and_size_actions_replace_each_other() -> None:
    assert apply_action(Query(params_b=13), "model=qwen2.5-7b").params_b is None
    assert apply_action(Query(model="qwen2.5-7b"), "params_b=13").model is None


def test_details_and_ask_leave_the_query() -> None:
    query = Query(model="llama-3.1-8b")
    assert apply_action(query, "details") == query
    assert apply_action(query, "ask=what about a 4090?") == query


@pytest.mark.parametrize("action", ["nonsense", "defaulted=x", "gpus=0", "precision=int3", "color=red"])
def test_bad_actions_raise_value_error(action: str) -> None:
    with pytest.raises(ValueError):
        apply_action(Query(model="llama-3.1-8b"), action)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_button_action_applies_and_answers(lang: str) -> None:
    queries = [
        Query(model="llama-3.1-8b", card="rtx-4090"),
        Query(task=Task.FINETUNE, method=Method.LORA, model="qwen2.5-14b", card="rtx-4090"),
        Query(task=Task.FINETUNE, model="llama-3.1-8b"),
    ]
    for query in queries:
        reply = answer_query(query, lang=lang)
        assert reply.query == query
        for row in reply.buttons:
            for button in row:
                changed = apply_action(query, button.action)
                follow = answer_query(changed, lang=lang)
                assert follow.kind != "error", (button.action, follow.html)


def test_follow_up_keeps_the_previous_question() -> None:
    first = answer("LoRA llama 3.1 8b on a 4090", lang="en")
    assert first.query is not None
    second = answer("and with 8k context?", previous=first.query, lang="en")
    assert second.kind == "fit"
    assert second.filled_query is not None and second.filled_query.seq == 8192
    assert second.filled_query.method is Method.LORA


def test_language_follows_the_message() -> None:
    assert answer("4090能跑llama 3.1 8b吗").lang == "zh"
    assert answer("can a 4090 run llama 3.1 8b").lang == "en"
    assert answer("can a 4090 run llama 3.1 8b", lang="zh").lang == "zh"
