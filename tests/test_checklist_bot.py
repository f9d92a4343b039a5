"""The /checklist flow end to end: the real Application polling the Bot API stand-in over loopback HTTP.

Both languages, with buttons and with typed answers; a restart in the middle; two members of one group at
once; a double tap; /forget; the result re-sent and exported; the store going down.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from botapi_server import ANN, BOB, GROUP, LI, BotHarness, start_bot

from bot.app import running
from bot.checklist import MAX_CALLBACK_BYTES, parse_callback
from bot.fake_telegram import StoredMessage
from bot.session import STORE_KEY
from bot.settings import Settings
from bot.store import SessionStore
from core import checklist as ck


def _data(message: StoredMessage, choice: str) -> str:
    """The callback data of the button under `message` whose choice is `choice`."""
    for row in (message.reply_markup or {}).get("inline_keyboard", []):
        for button in row:
            press = parse_callback(button.get("callback_data", ""))
            if press is not None and press.choice == choice:
                return str(button["callback_data"])
    raise AssertionError(f"no {choice!r} button under message {message.message_id}: {message.reply_markup}")


async def _tap(
    h: BotHarness,
    chat_id: int,
    message: StoredMessage,
    choice: str,
    user_id: int,
    *,
    new_message: bool = False,
) -> StoredMessage:
    """Press a checklist button; wait until the prompt changed in place (or, with `new_message`, until a new
    message with buttons arrived: the result); return the message now showing."""
    edits, sent = message.edits, len(h.fake.bot_messages(chat_id))
    await h.press(chat_id, message.message_id, _data(message, choice), user_id)
    if new_message:
        await h.wait_until(
            lambda: (
                len(h.fake.bot_messages(chat_id)) > sent
                and bool(h.fake.bot_messages(chat_id)[-1].reply_markup)
            ),
            f"a new message after {choice}",
        )
        return h.fake.bot_messages(chat_id)[-1]
    await h.wait_until(lambda: message.edits > edits, f"the prompt to change after {choice}")
    return message


async def _store(h: BotHarness) -> SessionStore:
    store = h.app.bot_data[STORE_KEY]
    assert isinstance(store, SessionStore)
    return store


def _all_callback_data(h: BotHarness) -> list[str]:
    return [
        str(button["callback_data"])
        for message in h.fake.messages.values()
        for row in (message.reply_markup or {}).get("inline_keyboard", [])
        for button in row
        if "callback_data" in button
    ]


async def test_english_with_buttons_result_resend_and_export(running_bot: BotHarness) -> None:
    h = running_bot
    [prompt] = await h.say(ANN, ANN, "/checklist")
    assert "1/7" in prompt.text and "Inference" in prompt.text
    for choice in ("ft_lora", "m:qwen2.5-7b", "bf16", "s:2048:4", "t:100000000", "b:h:USD:5"):
        prompt = await _tap(h, ANN, prompt, choice, ANN)
    assert "7/7" in prompt.text
    result = await _tap(h, ANN, prompt, "c:rtx-4090:1", ANN, new_message=True)
    sheet = "\n".join(m.text for m in h.fake.bot_messages(ANN)[1:])
    assert "Pre-rental sheet: Qwen2.5 7B" in sheet
    assert "Memory each card needs" in sheet and "safety margin" in sheet
    assert "Plans that fit" in sheet
    for question in ("VRAM cannot be upgraded", "CUDA", "NVLink", "ECC", "throttle", "NVMe", "Billing"):
        assert question in sheet, question
    state = await (await _store(h)).get_checklist(ANN, ANN)
    assert state is not None and state.done and state.answers.card == "rtx-4090"
    assert all(len(d.encode()) <= MAX_CALLBACK_BYTES for d in _all_callback_data(h))

    before = len(h.fake.bot_messages(ANN))
    await h.press(ANN, result.message_id, _data(result, "_resend"), ANN)
    await h.wait_until(lambda: len(h.fake.bot_messages(ANN)) > before, "the result again")
    assert "Pre-rental sheet" in "\n".join(m.text for m in h.fake.bot_messages(ANN)[before:])

    await h.press(ANN, result.message_id, _data(result, "_export"), ANN)
    await h.wait_until(lambda: bool(h.fake.calls_to("sendDocument", ok=True)), "the exported document")
    call = h.fake.calls_to("sendDocument", ok=True)[0]
    assert "Qwen2.5 7B" in str(call.params.get("caption"))


async def test_chinese_with_typed_answers(running_bot: BotHarness) -> None:
    h = running_bot
    [prompt] = await h.say(LI, LI, "/checklist")
    assert "租前清单" in prompt.text and "1/7" in prompt.text
    for answer, step in (
        ("想做LoRA微调", "2/7"),
        ("70亿", "3/7"),
        ("半精度", "4/7"),
        ("序列长度4k，batch 4", "5/7"),
        ("大概1亿 token", "6/7"),
        ("总共5000元", "7/7"),
    ):
        [reply] = await h.say(LI, LI, answer)
        assert step in reply.text, (answer, reply.text)
    replies = await h.say(LI, LI, "两张4090")
    sheet = "\n".join(m.text for m in replies)
    assert "租前清单" in sheet and "每张卡需要的显存" in sheet and "租之前问服务商" in sheet
    assert "显存租后不能升级" in sheet
    state = await (await _store(h)).get_checklist(LI, LI)
    assert state is not None and state.done
    answers = state.answers
    assert (answers.job, answers.params_b, answers.seq, answers.batch) == (ck.Job.LORA, 7.0, 4096, 4)
    assert (answers.tokens, answers.budget, answers.budget_per_hour, answers.card, answers.gpus) == (
        1e8,
        5000.0,
        False,
        "rtx-4090",
        2,
    )


async def test_english_typed_answers_skip_back_and_errors(running_bot: BotHarness) -> None:
    h = running_bot
    await h.say(BOB, BOB, "/checklist")
    [reply] = await h.say(BOB, BOB, "we want to serve a chatbot")
    assert "2/7" in reply.text
    [reply] = await h.say(BOB, BOB, "llama-9000-ultra")
    assert "do not know that model" in reply.text
    [reply] = await h.say(BOB, BOB, "Qwen2.5 72B")
    assert "3/7" in reply.text
    [reply] = await h.say(BOB, BOB, "/back")
    assert "2/7" in reply.text and "Qwen2.5 72B" in reply.text  # the earlier answer is shown
    [reply] = await h.say(BOB, BOB, "/skip")  # the prompt says "/skip keeps it"
    assert "3/7" in reply.text and "Qwen2.5 72B" in reply.text
    for answer in ("int4", "about 32k with 16 concurrent users", "20k requests a day", "$30/h"):
        await h.say(BOB, BOB, answer)
    replies = await h.say(BOB, BOB, "recommend")
    assert "Pre-rental sheet" in "\n".join(m.text for m in replies)
    state = await (await _store(h)).get_checklist(BOB, BOB)
    assert state is not None and state.done
    assert state.answers.model == "qwen2.5-72b" and ck.Step.MODEL not in state.answers.skipped
    assert (state.answers.seq, state.answers.batch, state.answers.requests_per_day) == (32768, 16, 20000)


async def test_a_chinese_amount_does_not_switch_an_english_checklist(running_bot: BotHarness) -> None:
    h = running_bot
    await h.say(BOB, BOB, "/checklist")
    await h.say(BOB, BOB, "LoRA fine-tune")
    await h.say(BOB, BOB, "Qwen2.5 7B")
    replies = [await h.say(BOB, BOB, answer) for answer in ("bf16", "1万条数据", "total $500")]
    for [reply] in replies:
        assert not any("\u4e00" <= c <= "\u9fff" for c in reply.text.replace("1万条数据", "")), reply.text
    state = await (await _store(h)).get_checklist(BOB, BOB)
    assert state is not None and state.lang == "en"


async def test_restart_in_the_middle_resumes_at_the_same_step(
    bot_settings: Settings, running_bot: BotHarness
) -> None:
    h = running_bot
    await h.say(ANN, ANN, "/checklist")
    for answer in ("full fine-tune", "13B", "bf16"):
        await h.say(ANN, ANN, answer)
    # The first bot stops (the store is closed with it); a second one starts on the same database file.
    if h.app.updater is not None and h.app.updater.running:
        await h.app.updater.stop()
    await h.app.stop()
    app, errors = start_bot(bot_settings)
    async with running(app, poll_timeout=2):
        h2 = BotHarness(app, h.fake, errors)
        [offer] = await h2.say(ANN, ANN, "/checklist")
        assert "in progress" in offer.text and "4/7" in offer.text
        prompt = await _tap(h2, ANN, offer, "_resume", ANN)
        assert "4/7" in prompt.text and "Welcome back" in prompt.text
        [reply] = await h2.say(ANN, ANN, "2048, batch 8")
        assert "5/7" in reply.text
        state = await (await _store(h2)).get_checklist(ANN, ANN)
        assert state is not None and state.answers.job is ck.Job.FULL and state.answers.params_b == 13.0


async def test_two_group_members_at_once(running_bot: BotHarness) -> None:
    h = running_bot
    [ann_prompt] = await h.say(GROUP, ANN, "/checklist@GpufitTestBot")
    [bob_prompt] = await h.say(GROUP, BOB, "/checklist")
    assert "Ann" in ann_prompt.text and "Bob" in bob_prompt.text
    # Bob cannot move Ann's checklist with her buttons.
    query_id = await h.press(GROUP, ann_prompt.message_id, _data(ann_prompt, "infer"), BOB)
    assert h.fake.callback_answers[query_id].get("show_alert") in (True, "true")
    store = await _store(h)
    assert (await store.get_checklist(GROUP, ANN)).step == 0  # type: ignore[union-attr]
    # Ann answers by replying to her prompt; Bob taps his own buttons.
    [ann_next] = await h.say(GROUP, ANN, "LoRA", reply_to=ann_prompt.message_id)
    bob_next = await _tap(h, GROUP, bob_prompt, "infer", BOB)
    assert "2/7" in ann_next.text and "2/7" in bob_next.text
    [ann_next] = await h.say(GROUP, ANN, "7B", reply_to=ann_next.message_id)
    bob_next = await _tap(h, GROUP, bob_next, "m:llama-3.1-70b", BOB)
    ann = await store.get_checklist(GROUP, ANN)
    bob = await store.get_checklist(GROUP, BOB)
    assert ann is not None and bob is not None
    assert (ann.step, ann.answers.job, ann.answers.params_b) == (2, ck.Job.LORA, 7.0)
    assert (bob.step, bob.answers.job, bob.answers.model) == (2, ck.Job.INFERENCE, "llama-3.1-70b")
    # A group message that is not a reply to one's own prompt is not taken as an answer.
    await h.say(GROUP, BOB, "int4 please", replies=0)
    await h.say(GROUP, ANN, "bf16", reply_to=bob_next.message_id, replies=0)
    await h.wait_until(h.settled, "the bot to read the group messages")
    assert (await store.get_checklist(GROUP, BOB)).step == 2  # type: ignore[union-attr]
    assert (await store.get_checklist(GROUP, ANN)).step == 2  # type: ignore[union-attr]


async def test_double_tap_is_applied_once(running_bot: BotHarness) -> None:
    h = running_bot
    [prompt] = await h.say(ANN, ANN, "/checklist")
    data = _data(prompt, "ft_qlora")
    first = h.fake.press(ANN, prompt.message_id, data, ANN)
    second = h.fake.press(ANN, prompt.message_id, data, ANN)
    await h.wait_until(
        lambda: first in h.fake.callback_answers and second in h.fake.callback_answers,
        "both callback answers",
    )
    state = await (await _store(h)).get_checklist(ANN, ANN)
    assert state is not None and state.step == 1 and state.answers.job is ck.Job.QLORA
    toasts = [str(h.fake.callback_answers[q].get("text") or "") for q in (first, second)]
    assert sum("moved on" in t for t in toasts) == 1


async def test_forget_deletes_the_checklist(running_bot: BotHarness, db_path: Path) -> None:
    h = running_bot
    await h.say(ANN, ANN, "/checklist")
    await h.say(ANN, ANN, "inference")
    await h.say(GROUP, ANN, "/checklist")
    await h.say(ANN, ANN, "/forget")
    store = await _store(h)
    assert await store.get_checklist(ANN, ANN) is None
    assert await store.get_checklist(GROUP, ANN) is None
    db = sqlite3.connect(db_path)
    assert db.execute("SELECT COUNT(*) FROM checklists WHERE user_id = ?", (ANN,)).fetchone()[0] == 0
    db.close()
    [reply] = await h.say(ANN, ANN, "/back")
    assert "No checklist" in reply.text


async def test_cancel_and_plain_questions_pass_through(running_bot: BotHarness) -> None:
    h = running_bot
    await h.say(ANN, ANN, "/checklist")
    [reply] = await h.say(ANN, ANN, "/cancel")
    assert "cancelled" in reply.text
    assert await (await _store(h)).get_checklist(ANN, ANN) is None
    # With no checklist active, a question goes to the normal answer handlers.
    replies = await h.say(ANN, ANN, "can a 4090 run qwen2.5 7b?")
    assert replies and "checklist" not in replies[0].text.lower()


async def test_store_down_pauses_the_checklist_but_not_answers(
    running_bot: BotHarness, tmp_path: Path
) -> None:
    h = running_bot
    store = await _store(h)
    await store.close()  # as good as a vanished or corrupt database: every call raises StoreUnavailable
    [reply] = await h.say(ANN, ANN, "/checklist")
    assert "memory" in reply.text and "Plain questions still work" in reply.text
    replies = await h.say(ANN, ANN, "can a 4090 run qwen2.5 7b?")
    assert replies


def test_callback_data_fits_for_every_choice() -> None:
    longest = max(
        len(f"ck:v1:{2**53}:{index}:{choice}".encode())
        for index, step in enumerate(ck.STEPS)
        for lang in ("en", "zh")
        for job in ck.Job
        for choice in ck.choices(step, lang, ck.ChecklistAnswers(job=job))
    )
    assert longest <= MAX_CALLBACK_BYTES
