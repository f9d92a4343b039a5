"""The compact form is rendered when it is read (groups, inline results), never for a private chat."""

from __future__ import annotations

import pytest

from bot.answer import answer_message
from bot.answer.model import CompactForm, Facts
from bot.render import plain_text


def test_compact_form_is_rendered_only_when_read() -> None:
    calls: list[int] = []

    def make() -> tuple[str, str, str]:
        calls.append(1)
        return "<b>yes</b>\nfits", "yes", "fits"

    form = CompactForm(make)
    assert calls == [] and "not yet" in repr(form)
    noted = form.with_html(lambda html: f"note\n{html}")
    assert calls == []
    assert noted.rendered() == ("note\n<b>yes</b>\nfits", "yes", "fits") and calls == [1]
    assert form.html == "<b>yes</b>\nfits" and calls == [1]  # kept once rendered


def test_a_form_that_fails_to_render_falls_back_to_the_full_form() -> None:
    def broken() -> tuple[str, str, str]:
        raise RuntimeError("template broke")

    assert CompactForm(broken, lambda: ("full", "full", "full")).html == "full"
    with pytest.raises(RuntimeError):
        CompactForm(broken).rendered()


def test_entry_points_that_send_it_get_it_rendered_and_it_is_the_same() -> None:
    question = "can I LoRA llama 3.1 8b on a 4090? (compact form test)"
    private = answer_message(question)
    group = answer_message(question, compact=True)
    assert private is group  # the same cached answer: rendering it for a group changes nothing else
    lines = [line.strip() for line in plain_text(group.compact_html).splitlines() if line.strip()]
    assert group.title == lines[0][:256] and group.compact_html != group.html
    assert CompactForm.of(group.compact_html, group.title, group.summary) == group.compact


def test_facts_are_dumped_when_read_and_notes_add_to_them() -> None:
    reply = answer_message("can I LoRA llama 3.1 8b on a 4090? (facts test)")
    assert "not yet" in repr(reply.lazy_facts)
    noted = reply.lazy_facts.with_more({"prices": {"available": False}})
    assert noted.rendered() == reply.facts | {"prices": {"available": False}}
    assert reply.to_json()["answer"]["verdict"] == reply.facts["verdict"]
    assert Facts.of({"a": 1}) == Facts.of({"a": 1}) != CompactForm.of("a", "a", "a")
