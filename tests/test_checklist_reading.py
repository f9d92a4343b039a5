"""The checklist reads answers with the parser's readers: the same words, numerals and names as a question;
details given early are kept for their step; each step confirms what it understood."""

from __future__ import annotations

import pytest

from bot.checklist import step_text
from bot.render import plain_text
from core import checklist as ck
from core.parser.entities import extract
from core.parser.normalize import normalize
from core.query import Precision


def _walk(lang: str, *answers: str) -> ck.ChecklistState:
    state = ck.start(lang)
    for text in answers:
        state, error = ck.answer_step(state, text)
        assert error is None, (text, error)
    return state


def _at(step: ck.Step, job: ck.Job = ck.Job.INFERENCE) -> ck.ChecklistState:
    state = ck.start("en")
    state, _ = ck.answer_step(state, job.value)
    return state.model_copy(update={"step": ck.STEPS.index(step)})


@pytest.mark.parametrize("text", ["gguf", "fp4", "nvfp4", "awq", "q8_0", "bnb 4bit", "int8", "半精度"])
def test_precision_words_are_the_parsers(text: str) -> None:
    """Whatever precision a question may name, an answer may name too (the parser knows gguf and fp4)."""
    expected = extract(normalize(text)).fields["precision"]
    state, error = ck.answer_step(_at(ck.Step.PRECISION), text)
    assert error is None and state.answers.precision == expected


def test_gguf_reads_as_the_parsers_gguf_default() -> None:
    state, _ = ck.answer_step(_at(ck.Step.PRECISION), "gguf")
    assert state.answers.precision is Precision.Q4_K_M


@pytest.mark.parametrize(
    ("text", "card", "gpus"),
    [
        ("2x A100 80G", "a100-80gb-sxm", 2),
        ("两张H20", "h20", 2),
        ("4090 x 2", "rtx-4090", 2),
        ("RTX 4090", "rtx-4090", None),
    ],
)
def test_cards_and_counts_are_the_parsers(text: str, card: str, gpus: int | None) -> None:
    state, error = ck.answer_step(_at(ck.Step.CARD), text)
    assert error is None and (state.answers.card, state.answers.gpus) == (card, gpus)


def test_a_model_named_with_the_job_fills_the_model_step_and_skip_keeps_it() -> None:
    state = _walk("en", "serve llama 3.1 70b for users")
    assert state.current is ck.Step.MODEL
    assert state.answers.model == "llama-3.1-70b"
    assert state.understood == [ck.Step.JOB, ck.Step.MODEL]
    skipped = ck.skip(state)
    assert skipped.answers.model == "llama-3.1-70b" and skipped.answers.params_b is None
    assert ck.Step.MODEL not in skipped.answers.skipped
    assert ck.to_query(skipped).model == "llama-3.1-70b"


def test_an_early_detail_never_overwrites_an_answer_given() -> None:
    state = _walk("en", "lora", "qwen2.5 7b", "bf16", "4096, batch 4")
    later, _ = ck.answer_step(state, "50M tokens on qwen2.5 72b")
    assert later.answers.model == "qwen2.5-7b", "the model step was answered already"
    assert later.answers.tokens == 50e6


def test_samples_and_epochs_are_confirmed_with_the_tokens_they_make() -> None:
    state = _walk("en", "lora", "qwen2.5 7b", "bf16", "4096, batch 4", "20k samples, 3 epochs")
    assert state.answers.tokens == 20_000 * 3 * 4096
    shown = plain_text(step_text(state, group=False, mention=None))
    assert "20K samples × 3 epochs × 4k tokens each ≈ 246M tokens" in shown
    assert shown.index("Got it") < shown.index("6/7"), "the confirmation comes before the next question"


def test_chinese_answers_are_confirmed_in_chinese() -> None:
    state = _walk("zh", "部署 qwen2.5 72b 给用户用")
    shown = plain_text(step_text(state, group=False, mention=None))
    assert "收到" in shown and "Qwen2.5 72B" in shown and "保留" in shown


@pytest.mark.parametrize(
    ("text", "per_month", "per_hour"),
    [
        ("$3000 per month", True, False),
        ("每月 5000 元", True, False),
        ("$2/h", False, True),
        ("¥5000 total", False, False),
    ],
)
def test_budget_reading_keeps_its_period(text: str, per_month: bool, per_hour: bool) -> None:
    state, error = ck.answer_step(_at(ck.Step.BUDGET), text)
    assert error is None
    assert (state.answers.budget_per_month, state.answers.budget_per_hour) == (per_month, per_hour)
