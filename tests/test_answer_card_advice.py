"""Is card X good for Y (issue 10): an assessment against the cards people use for the job, not a spec
sheet: compute, bandwidth and memory as ratios, a rating with its reason, and what one card takes."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from test_answer_kinds import LANGS, assert_well_formed

from bot.answer import answer
from core.advisor.card_advice import advice_rules, card_advice
from core.catalog import load_catalog
from core.paths import DATA_DIR
from core.query import Task


def _advice(card_id: str, task: Task):  # type: ignore[no-untyped-def]
    return card_advice(load_catalog().get(card_id), task)


def test_reference_cards_are_in_the_catalog_and_sourced() -> None:
    with open(DATA_DIR / "card_advice.toml", "rb") as handle:
        assert tomllib.load(handle)["source"]
    for rules in advice_rules().values():
        assert rules.reference and all(ref in load_catalog().by_id for ref in rules.reference)


@pytest.mark.parametrize(
    ("card", "task", "rating", "reason"),
    [
        ("h20", Task.FINETUNE, "poor", "compute"),  # 148 TFLOPS: half an A100, a seventh of an H100
        ("h20", Task.INFERENCE, "good", "strong"),  # 4 TB/s and 96 GB
        ("t4", Task.FINETUNE, "poor", "no_bf16"),
        ("rtx-4090", Task.INFERENCE, "fine_small", "small_memory"),
        ("a100-80gb-sxm", Task.FINETUNE, "good", "strong"),
        ("mi300x", Task.INFERENCE, "good", "strong"),
    ],
)
def test_ratings(card: str, task: Task, rating: str, reason: str) -> None:
    advice = _advice(card, task)
    assert advice.rating == rating and reason in advice.reasons


def test_ratios_are_against_the_usual_cards() -> None:
    advice = _advice("h20", Task.FINETUNE)
    catalog = load_catalog()
    assert advice.compared_with == ["a100-80gb-sxm", "h100-sxm"]
    h20, a100 = catalog.get("h20"), catalog.get("a100-80gb-sxm")
    assert advice.ratios.card == "a100-80gb-sxm"
    assert advice.ratios.compute == pytest.approx(h20.tensor_tflops / a100.tensor_tflops, abs=0.01)
    assert advice.ratios.bandwidth == pytest.approx(h20.bandwidth_gb_s / a100.bandwidth_gb_s, abs=0.01)
    assert "a100-80gb-sxm" not in _advice("a100-80gb-sxm", Task.FINETUNE).compared_with


@pytest.mark.parametrize(
    ("text", "card", "task"),
    [
        ("H20适合训练吗", "h20", "finetune"),
        ("is a T4 OK for fine-tuning?", "t4", "finetune"),
        ("4090做推理怎么样", "rtx-4090", "inference"),
        ("Is the L40S any good for LLM training?", "l40s", "finetune"),
        ("A10适合做lora微调吗", "a10", "finetune"),
    ],
)
def test_questions_get_an_assessment_not_a_spec_sheet(text: str, card: str, task: str) -> None:
    reply = answer(text)
    facts: dict[str, Any] = reply.to_json()["answer"]
    assert reply.kind == "card_advice", reply.html
    assert facts["card_advice"]["card"] == card and facts["card_advice"]["task"] == task
    assert "TFLOPS" in reply.html and "GB/s" in reply.html
    assert_well_formed(reply)


@pytest.mark.parametrize("lang", LANGS)
def test_h20_for_training_in_both_languages(lang: str) -> None:
    reply = answer("H20适合训练吗" if lang == "zh" else "is the H20 good for training?")
    assert reply.lang == lang and "H100" in reply.html and "A100" in reply.html
    assert ("poor" if lang == "en" else "不太合适") in reply.title
    assert ("inference it is a good choice" if lang == "en" else "做推理倒是合适") in reply.html


def test_a_size_class_is_checked_against_what_the_card_takes() -> None:
    reply = answer("Is an A10 good for serving 7B models?")
    assert reply.kind == "card_advice" and "a 7B model ✅" in reply.html


def test_a_card_without_bf16_says_so() -> None:
    reply = answer("v100现在还适合跑大模型吗")
    assert reply.kind == "card_advice" and "bf16" in reply.html


@pytest.mark.parametrize("text", ["跑个7b的模型，4080可以吗？", "4090适合跑qwen2.5 7b吗", "H20 参数"])
def test_one_model_on_the_card_or_a_spec_question_is_not_advice(text: str) -> None:
    assert answer(text).kind in ("fit", "card")


def test_follow_ups_change_the_job_or_the_card() -> None:
    first = answer("H20适合训练吗")
    second = answer("那推理呢", previous=first.query)
    third = answer("what about the L20?", previous=second.query)
    assert second.kind == third.kind == "card_advice"
    second_advice: Any = second.to_json()["answer"]["card_advice"]
    third_advice: Any = third.to_json()["answer"]["card_advice"]
    assert second_advice["task"] == "inference"
    assert third_advice["card"] == "l20"
    model = answer("那 qwen2.5 7b 呢", previous=first.query)
    assert model.kind == "fit", "a model named asks about that model on the card"
