"""The checklist's RAM step (issue 18): asked only when the cards named cannot hold an inference job; its
answer (size, DDR generation, channels) is stored with the rest, survives a restart, and the result sheet
says whether llama.cpp runs the job split with system RAM and how fast, in both languages."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.render import render
from bot.store import SessionStore
from core import checklist as ck


def _through(state: ck.ChecklistState, *texts: str) -> ck.ChecklistState:
    for text in texts:
        state, error = ck.answer_step(state, text)
        assert error is None, (text, error)
    return state


def test_the_ram_step_is_asked_only_when_the_cards_cannot_hold_the_job() -> None:
    small = _through(
        ck.start("en"), "inference", "qwen2.5-72b", "int4", "4k, 1 user", "1000 a day", "no limit"
    )
    fits = _through(small, "2x H100")
    assert fits.done and ck.Step.HOST not in ck.steps_for(fits)
    short = _through(ck.back(fits), "one 4090")
    assert short.current is ck.Step.HOST and len(ck.steps_for(short)) == len(ck.STEPS)
    training = _through(
        ck.start("en"), "lora", "qwen2.5-72b", "bf16", "4096, batch 1", "100M tokens", "no limit", "4090"
    )
    assert training.done  # no RAM step for training


def test_ram_answers_in_both_languages_and_buttons() -> None:
    at_host = ck.ChecklistState(step=ck.STEPS.index(ck.Step.HOST), lang="zh")
    for text, size, kind, channels in (
        ("64G DDR5", 64e9, "ddr5", None),
        ("128g ddr4 四通道", 128e9, "ddr4", 4),
        ("512GB RAM, 8 channels", 512e9, None, 8),
    ):
        moved, error = ck.answer_step(at_host, text)
        assert error is None and moved.done
        a = moved.answers
        assert (a.host_memory_bytes, a.host_memory_type, a.host_memory_channels) == (size, kind, channels)
    moved, error = ck.answer_step(at_host, "不用")
    assert error is None and moved.answers.host_memory_bytes is None
    _, error = ck.answer_step(at_host, "whatever")
    assert error is not None and error.code == "host_unclear"
    for choice in ck.choices(ck.Step.HOST, "en"):
        _, error = ck.answer_step(at_host, choice)
        assert error is None, choice


def test_the_sheet_says_the_split_and_its_speed() -> None:
    for lang, ram_words in (("en", "64GB DDR4 dual channel"), ("zh", "64G内存 DDR4 双通道")):
        state = _through(ck.start(lang), "inference", "qwen2.5-72b")
        state = ck.skip(state)  # precision: the default
        state = _through(state, "4k, 1 user", "1000 a day", "no limit", "one 4090")
        assert state.current is ck.Step.HOST
        state = _through(state, ram_words)
        found = ck.result(state)
        assert found.query.runtime == "llama.cpp" and found.query.host_memory_type == "ddr4"
        assert found.offload is not None and found.offload.runs and found.offload.host_bandwidth_gb_s == 51.2
        html = render("checklist_result", lang, v=ck.result_view(found, state), mention=None)
        assert "-ngl" in html and "DDR4-3200 × 2" in html


def test_the_ram_answer_survives_a_restart(tmp_path: Path) -> None:
    state = ck.ChecklistState(
        step=ck.DONE,
        answers=ck.ChecklistAnswers(
            host_memory_bytes=128 * 10**9, host_memory_type="ddr5", host_memory_channels=4
        ),
    )

    async def roundtrip() -> ck.ChecklistState | None:
        first = await SessionStore.open(tmp_path / "s.sqlite3")
        await first.save_checklist(1, 2, state)
        await first.close()
        second = await SessionStore.open(tmp_path / "s.sqlite3")
        loaded = await second.get_checklist(1, 2)
        await second.close()
        return loaded

    assert asyncio.run(roundtrip()) == state
    # a checklist finished before the RAM step existed (version 1, step 7) stays finished
    old = ck.ChecklistState.model_validate({"version": 1, "step": 7, "answers": {}})
    assert old.done
