"""A family name ("A100") is read as its most-rented variant, and the answer says which."""

from __future__ import annotations

from core.answer import answer


def test_bare_family_name_says_which_variant_was_assumed() -> None:
    reply = answer("can an A100 run qwen2.5 32b?")
    assert "“A100” read as" in reply.html and "80GB" in reply.html


def test_chinese_answer_says_it_too() -> None:
    assert "按最常租的版本" in answer("A100能跑qwen2.5 32b推理吗").html


def test_an_exact_variant_needs_no_note() -> None:
    assert "read as" not in answer("can an A100 80GB SXM run qwen2.5 32b?").html
