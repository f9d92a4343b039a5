"""Names gpufit reads something into: a family name ("A100") as its most-rented variant, a model it does not
know ("vicuna 13b") as a typical dense model of its size; the answer says so either way."""

from __future__ import annotations

from bot.answer import answer


def test_bare_family_name_says_which_variant_was_assumed() -> None:
    reply = answer("can an A100 run qwen2.5 32b?")
    assert "“A100” read as" in reply.html and "80GB" in reply.html


def test_chinese_answer_says_it_too() -> None:
    assert "按最常租的版本" in answer("A100能跑qwen2.5 32b推理吗").html


def test_an_exact_variant_needs_no_note() -> None:
    assert "read as" not in answer("can an A100 80GB SXM run qwen2.5 32b?").html


def test_unknown_model_with_a_size_is_estimated_as_a_typical_dense_model() -> None:
    reply = answer("can I run vicuna 13b on a 4090?")
    assert reply.kind == "fit"
    assert "“vicuna 13b” is not in my model list" in reply.html


def test_unknown_model_without_a_size_asks_back() -> None:
    reply = answer("can I run vicuna on a 4090?")
    assert reply.kind == "clarify" and "vicuna" in reply.html
