"""The one answer service: the kinds table rebuilds the same kind from a stored query, the chat's currency
is an input (a plan stays a plan in a group that set /settings currency), inline mode and `ask=` buttons get
Hub lookups, and a message is parsed once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from botapi_server import BOB, BOT_USERNAME, GROUP, BotHarness
from hub_server import ANSWERING_TIMEOUT_S, HubServer

from bot.answer import service
from bot.answer.kinds_table import KINDS, rebuildable
from bot.answer.service import ChatContext, answer_message, answer_stored
from bot.hub.cache import SqliteModelCache
from bot.hub.lookup import HUB_LOOKUP_KEY, HubLookup
from bot.hub.settings import HubSettings
from core.answer_kind import QUERY_KINDS, AnswerKind
from core.parser import Parsed, parse
from core.query import Currency, Query

AWQ = "Qwen/Qwen2.5-7B-Instruct-AWQ"
PLAN_QUESTION = "cheapest card to serve qwen2.5-7b"


@pytest.fixture
def hub() -> Iterator[HubServer]:
    with HubServer() as server:
        yield server


def _lookup(hub: HubServer, tmp_path: Path) -> HubLookup:
    settings = HubSettings(endpoint=hub.url, timeout_s=ANSWERING_TIMEOUT_S, hf_cache_dir=tmp_path / "hf")
    return HubLookup(settings, SqliteModelCache(tmp_path / "hub.sqlite3"))


def _ranked_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line[:2] in ("1.", "2.", "3.")]


def test_every_kind_has_one_row_and_queries_carry_the_recomputable_ones() -> None:
    assert set(KINDS) == set(AnswerKind)
    assert {kind for kind, spec in KINDS.items() if spec.recomputable} == QUERY_KINDS
    for kind in AnswerKind:
        if kind not in QUERY_KINDS:
            with pytest.raises(ValueError, match="cannot carry"):
                Query(model="qwen2.5-7b", kind=kind)


def test_a_stored_plan_rebuilds_a_plan_in_the_chats_currency() -> None:
    reply = answer_message(PLAN_QUESTION, ChatContext(currency=Currency.CNY))
    assert reply.kind == "plan" and reply.query is not None and reply.query.kind is AnswerKind.PLAN
    assert "¥" in reply.html and len(_ranked_rows(reply.html)) >= 3
    assert rebuildable(reply.query, reply.kind)
    again = answer_stored(reply.query, ChatContext(lang="en"))
    assert again.kind == "plan" and again.html == reply.html


def test_fastest_plans_keep_their_sort_when_rebuilt() -> None:
    reply = answer_message("fastest card to serve qwen2.5-7b", ChatContext(lang="en"))
    assert reply.query is not None and reply.query.sort == "speed"
    assert (
        answer_stored(reply.query, ChatContext(lang="en")).to_json()["answer"]["plans"]
        == (reply.to_json()["answer"]["plans"])
    )


def test_queries_stored_before_the_kind_enum_still_load() -> None:
    stored = json.dumps({"model": "qwen2.5-72b", "card": "l20", "question": "cards_needed"})
    assert Query.model_validate_json(stored).kind is AnswerKind.CARDS_NEEDED


def test_a_hub_question_is_parsed_once(
    hub: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def counted(text: str, previous: Query | None = None, previous_vision: object = None) -> Parsed:
        calls.append(text)
        return parse(text, previous=previous)

    monkeypatch.setattr(service, "parse", counted)
    reply = answer_message(
        f"cheapest card to serve {AWQ}", ChatContext(lang="en"), lookup=_lookup(hub, tmp_path)
    )
    assert calls == [f"cheapest card to serve {AWQ}"]
    assert reply.kind == "plan" and reply.query is not None and reply.query.model == AWQ.lower()


async def test_group_currency_keeps_plans_ranked_and_details_expands_the_plan(
    running_bot: BotHarness,
) -> None:
    """The bug: with `/settings currency cny` the chat's currency re-ran the answer from its query, which
    could not hold a plan, so the group got a memory-only fit answer; "Details ▸" did the same."""
    bot = running_bot
    bot.fake.members[(GROUP, BOB)] = "administrator"
    [saved] = await bot.say(GROUP, BOB, f"/settings@{BOT_USERNAME} currency cny")
    assert "CNY" in saved.text
    [compact] = await bot.say(GROUP, BOB, f"@{BOT_USERNAME} {PLAN_QUESTION}")
    rows = _ranked_rows(compact.text)
    assert len(rows) >= 3 and all("¥" in row for row in rows), compact.text
    details, chart = [b["callback_data"] for b in bot.buttons(compact)]  # a group's compact answer
    assert details.endswith(":details") and chart.endswith(":chart")
    await bot.press(GROUP, compact.message_id, details, BOB)
    await bot.wait_until(lambda: compact.edits == 1, "details expanded")
    expanded = _ranked_rows(compact.text)
    assert len(expanded) >= len(rows) and all("¥" in row for row in expanded), compact.text
    assert expanded[: len(rows)] == rows


async def test_inline_mode_looks_models_up_on_the_hub(
    running_bot: BotHarness, hub: HubServer, tmp_path: Path
) -> None:
    running_bot.app.bot_data[HUB_LOOKUP_KEY] = _lookup(hub, tmp_path)
    answered = await running_bot.inline(BOB, f"can a 4090 run {AWQ}")
    [result] = answered["results"]
    sent = json.dumps(result, ensure_ascii=False)
    assert "Qwen2.5-7B-Instruct-AWQ" in sent or "Qwen2.5 7B Instruct AWQ" in sent, sent
    assert "Which model" not in sent
