"""End to end: the real Application polls a loopback Bot API stand-in over HTTP; we play the users.

The stand-in refuses what Telegram would refuse (tags, lengths, callback data), so every test also checks
that nothing the bot sent would have been rejected.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from botapi_server import ANN, BOB, BOT_USERNAME, GROUP, LI, BotApiServer, BotHarness, start_bot
from telegram.constants import InlineKeyboardButtonLimit, MessageLimit

from bot.app import running
from bot.fake_telegram import FakeTelegram, parse_html
from bot.keyboards import question_payload
from bot.settings import Settings


@pytest.fixture(autouse=True)
def _nothing_refused(fake_telegram: FakeTelegram) -> Iterator[None]:
    yield
    refused = [(c.method, c.description) for c in fake_telegram.refused()]
    assert not refused, f"Telegram would have refused: {refused}"


def _button_data(bot: BotHarness, message_index: int = -1, *, chat: int = ANN) -> list[str]:
    message = bot.fake.bot_messages(chat)[message_index]
    return [b["callback_data"] for b in bot.buttons(message) if "callback_data" in b]


async def test_private_question_in_english(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(ANN, ANN, "Can a 4090 run Llama 3.1 8B?")
    assert "4090" in reply.text
    assert reply.entities, "the answer uses formatting (bold, code, the bars)"
    data = _button_data(running_bot)
    assert data and all(d.startswith("v1:") for d in data)
    assert all(len(d.encode()) <= InlineKeyboardButtonLimit.MAX_CALLBACK_DATA for d in data)


async def test_private_question_in_chinese(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(LI, LI, "4090 能跑 Qwen2.5 7B 推理吗？")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in reply.text), reply.text[:200]


async def test_unknown_command_points_to_help(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(ANN, ANN, "/frobnicate now")
    assert "/help" in reply.text


async def test_follow_up_uses_the_previous_question(running_bot: BotHarness) -> None:
    [first] = await running_bot.say(ANN, ANN, "LoRA fine-tune Llama 3.1 8B on a 4090")
    [second] = await running_bot.say(ANN, ANN, "and with QLoRA?")
    assert "QLoRA" in second.text
    # the model and the card come from the first question
    assert "Llama 3.1 8B" in second.text and "RTX 4090" in second.text, second.text[:300]
    assert first.message_id != second.message_id


async def test_html_looking_question_is_echoed_safely(running_bot: BotHarness) -> None:
    question = '<b>13b</b> & <script>alert("x")</script> lora on <i>4090'
    [reply] = await running_bot.say(ANN, ANN, question)
    parse_html(reply.html or "")  # well-formed Telegram HTML (the stand-in would have refused it otherwise)
    assert "<script>" not in (reply.html or "")


async def test_button_edits_the_answer_in_place(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(ANN, ANN, "LoRA Llama 3.1 8B on a 4090")
    qlora = next(d for d in _button_data(running_bot) if d.endswith("method=qlora"))
    await running_bot.press(ANN, reply.message_id, qlora, ANN)
    await running_bot.wait_until(
        lambda: running_bot.fake.messages[(ANN, reply.message_id)].edits == 1, "edit"
    )
    edited = running_bot.fake.messages[(ANN, reply.message_id)]
    assert "QLoRA" in edited.text
    assert len(running_bot.fake.bot_messages(ANN)) == 1, "edited in place, nothing new sent"


async def test_deep_link_asks_the_shared_question(running_bot: BotHarness) -> None:
    payload = question_payload("13b lora 4090")
    assert payload is not None and len(payload) <= MessageLimit.DEEP_LINK_LENGTH
    [reply] = await running_bot.say(BOB, BOB, f"/start {payload}")
    assert "4090" in reply.text


async def test_plain_start_and_help(running_bot: BotHarness) -> None:
    [welcome] = await running_bot.say(LI, LI, "/start")
    assert "gpufit" in welcome.text and any("\u4e00" <= ch <= "\u9fff" for ch in welcome.text)
    [helped] = await running_bot.say(ANN, ANN, "/help")
    assert "/compare" in helped.text


async def test_group_chatter_is_ignored_and_addressed_messages_answered(running_bot: BotHarness) -> None:
    await running_bot.say(GROUP, BOB, "anyone tried a 4090 for lora?", replies=0)
    # Updates are handled in order: once the command below is answered, the chatter was seen and skipped.
    [command] = await running_bot.say(GROUP, BOB, f"/fit@{BOT_USERNAME} 13b lora 4090")
    assert len(running_bot.fake.bot_messages(GROUP)) == 1
    assert command.reply_to is not None, "answers in groups quote the question"
    data = _button_data(running_bot, chat=GROUP)
    assert [d.rsplit(":", 1)[1] for d in data] == ["details", "chart"], "compact: details and the chart"

    [mention] = await running_bot.say(GROUP, LI, f"@{BOT_USERNAME} 70b inference on h100")
    assert "H100" in mention.text

    [reply] = await running_bot.say(GROUP, ANN, "what about qlora?", reply_to=command.message_id)
    assert reply.reply_to is not None

    compact_length = len(command.text)
    await running_bot.press(GROUP, command.message_id, data[0], ANN)
    await running_bot.wait_until(lambda: command.edits == 1, "details expanded")
    assert len(command.text) > compact_length
    assert len(_button_data(running_bot, 0, chat=GROUP)) > 1, "the full answer has the switches"


async def test_command_for_another_bot_is_ignored(running_bot: BotHarness) -> None:
    await running_bot.say(GROUP, BOB, "/fit@SomeOtherBot 13b lora 4090", replies=0)
    await running_bot.say(GROUP, BOB, f"/help@{BOT_USERNAME}")
    assert len(running_bot.fake.bot_messages(GROUP)) == 1


async def test_group_settings_only_for_admins(running_bot: BotHarness) -> None:
    [denied] = await running_bot.say(GROUP, BOB, f"/settings@{BOT_USERNAME} lang zh")
    assert "admin" in denied.text.lower()
    [saved] = await running_bot.say(GROUP, ANN, f"/settings@{BOT_USERNAME} lang zh")
    assert "中文" in saved.text
    assert running_bot.fake.calls_to("getChatMember", ok=True), "rights checked with Telegram"
    [anon] = await running_bot.say(GROUP, ANN, f"/settings@{BOT_USERNAME} currency usd", anonymous_admin=True)
    assert "USD" in anon.text
    [answer] = await running_bot.say(GROUP, BOB, f"/fit@{BOT_USERNAME} 13b lora 4090")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in answer.text), "the group's language applies"


async def test_each_member_has_their_own_follow_ups(running_bot: BotHarness) -> None:
    await running_bot.say(GROUP, ANN, f"/fit@{BOT_USERNAME} llama 3.1 8b inference on a 4090")
    [bob] = await running_bot.say(GROUP, BOB, f"/fit@{BOT_USERNAME} and with 8k context?")
    assert "Llama 3.1 8B" not in bob.text, "Bob has no previous question of his own"


async def test_bot_added_and_removed(running_bot: BotHarness, fake_telegram: FakeTelegram) -> None:
    other = -1009876543210
    fake_telegram.add_group(other, "New team")
    fake_telegram.members.pop((other, fake_telegram.bot["id"]))
    fake_telegram.bot_membership(other, ANN, "member")
    await running_bot.wait_until(
        lambda: len(fake_telegram.bot_messages(other)) == 1, "hello in the new group"
    )
    fake_telegram.bot_membership(other, ANN, "left")
    await running_bot.say(ANN, ANN, "/help")  # processed after the removal


async def test_inline_query(running_bot: BotHarness) -> None:
    answered = await running_bot.inline(ANN, "13b lora 4090")
    [result] = answered["results"]
    assert result["type"] == "article" and "4090" in result["title"] + result["description"]
    assert answered["cache_time"] == 300 and answered.get("is_personal") in (False, None)
    assert result["reply_markup"]["inline_keyboard"][0][0]["url"].startswith(
        f"https://t.me/{BOT_USERNAME}?start=q"
    )
    examples = await running_bot.inline(LI, "")
    assert 1 <= len(examples["results"]) <= 3


async def test_blocked_user_is_marked_without_crashing(running_bot: BotHarness) -> None:
    running_bot.fake.block(BOB)
    running_bot.fake.send_text(BOB, BOB, "13b lora 4090")
    await running_bot.fake.wait_for(lambda: bool(running_bot.errors), what="the 403 in the error handler")
    assert [type(e).__name__ for e in running_bot.errors] == ["Forbidden"]
    running_bot.errors.clear()
    await running_bot.say(ANN, ANN, "/help")  # still answering others
    assert await running_bot.app.bot_data["store"].is_blocked(BOB)
    assert not running_bot.fake.calls_to("sendMessage", ok=False)[1:], "no apology sent to a blocked chat"


async def test_restart_keeps_buttons_working(
    botapi_server: BotApiServer, bot_settings: Settings, fake_telegram: FakeTelegram, db_path: Path
) -> None:
    app, errors = start_bot(bot_settings)
    async with running(app, poll_timeout=2):
        bot = BotHarness(app, fake_telegram, errors)
        [reply] = await bot.say(ANN, ANN, "LoRA Llama 3.1 8B on a 4090")
        qlora = next(d for d in _button_data(bot) if d.endswith("method=qlora"))
    assert db_path.is_file()  # noqa: ASYNC240

    app, errors = start_bot(bot_settings)  # a new process would see the same SQLite file
    async with running(app, poll_timeout=2):
        bot = BotHarness(app, fake_telegram, errors)
        await bot.press(ANN, reply.message_id, qlora, ANN)
        await bot.wait_until(lambda: fake_telegram.messages[(ANN, reply.message_id)].edits == 1, "edit")
        assert "QLoRA" in fake_telegram.messages[(ANN, reply.message_id)].text
        # A button from an older format, or whose query is gone, gets a polite answer.
        query_id = await bot.press(ANN, reply.message_id, "v0:fit:1:method=full", ANN, stale=True)
        assert "again" in str(fake_telegram.callback_answers[query_id].get("text", ""))
        query_id = await bot.press(ANN, reply.message_id, "v1:fit:gone1234:method=full", ANN, stale=True)
        assert "again" in str(fake_telegram.callback_answers[query_id].get("text", ""))


async def test_commands_published_in_both_languages(running_bot: BotHarness) -> None:
    commands = running_bot.fake.commands  # (scope as JSON, language code) -> the commands
    private, group = '{"type": "all_private_chats"}', '{"type": "all_group_chats"}'
    # English is the default menu (no language code), Chinese the one for zh clients, in both scopes
    assert set(commands) == {(private, ""), (private, "zh"), (group, ""), (group, "zh")}
    for scope in (private, group):
        english, chinese = commands[(scope, "")], commands[(scope, "zh")]
        assert [c["command"] for c in english] == [c["command"] for c in chinese]
        assert all(c["description"].isascii() for c in english)
        assert all(any("\u4e00" <= ch <= "\u9fff" for ch in c["description"]) for c in chinese)
