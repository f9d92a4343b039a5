"""The "📊 Chart" button end to end: the real Application over loopback HTTP against the Bot API stand-in,
sendPhoto as a real multipart upload, in private chats and groups, after a restart; the console chat saves
the PNG; `gpufit ask --chart` and `gpufit plan --chart` write it."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from botapi_server import ANN, BOT_USERNAME, GROUP, LI, BotApiServer, BotHarness, start_bot
from PIL import Image
from test_console import _chat, press

from bot.app import running
from bot.fake_telegram import FakeTelegram, StoredMessage
from bot.fake_telegram.images import image_size
from bot.settings import Settings
from core.paths import ROOT

COMPARE = "L40S or A100 for serving Qwen2.5-32B?"


@pytest.fixture(autouse=True)
def _nothing_refused(fake_telegram: FakeTelegram) -> Iterator[None]:
    yield
    refused = [(c.method, c.description) for c in fake_telegram.refused()]
    assert not refused, f"Telegram would have refused: {refused}"


def _chart_data(bot: BotHarness, message: StoredMessage) -> str:
    found = [
        str(b["callback_data"])
        for b in bot.buttons(message)
        if str(b.get("callback_data", "")).endswith(":chart")
    ]
    assert len(found) == 1, found
    return found[0]


def _photos(fake: FakeTelegram, chat_id: int) -> list[StoredMessage]:
    return [m for m in fake.bot_messages(chat_id) if m.kind == "photo"]


def _decoded(photo: StoredMessage) -> Image.Image:
    assert photo.file is not None
    image = Image.open(io.BytesIO(photo.file))
    image.load()
    return image


async def _press_chart(bot: BotHarness, chat_id: int, message: StoredMessage, user: int) -> StoredMessage:
    before = len(_photos(bot.fake, chat_id))
    await bot.press(chat_id, message.message_id, _chart_data(bot, message), user)
    await bot.wait_until(lambda: len(_photos(bot.fake, chat_id)) > before, "the chart photo")
    return _photos(bot.fake, chat_id)[-1]


async def test_the_chart_button_sends_the_png_under_the_answer(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(ANN, ANN, COMPARE)
    text_before = reply.text
    photo = await _press_chart(running_bot, ANN, reply, ANN)
    image = _decoded(photo)
    assert image.format == "PNG" and image.width >= 1000
    assert photo.reply_to == reply.message_id
    assert photo.text.startswith("📊 ") and "\n" not in photo.text and "Qwen2.5 32B" in photo.text
    sent = next(c for c in running_bot.fake.calls if c.method.lower() == "sendphoto")
    assert sent.status == 200
    assert (
        sent.result["photo"][0]["width"] == image.width and sent.result["photo"][0]["height"] == image.height
    )
    assert running_bot.fake.messages[(ANN, reply.message_id)].text == text_before, "the answer stays"
    assert running_bot.fake.messages[(ANN, reply.message_id)].edits == 0


async def test_a_chinese_answer_gets_a_chinese_chart(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(LI, LI, "两张3090最大能LoRA多大的模型")
    assert any("图表" in b["text"] for b in running_bot.buttons(reply))
    photo = await _press_chart(running_bot, LI, reply, LI)
    assert "最大模型" in photo.text
    _decoded(photo)


async def test_in_a_group_the_compact_answer_has_the_chart_button(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(GROUP, ANN, f"/fit@{BOT_USERNAME} LoRA Qwen2.5 14B on an RTX 4090")
    labels = [b["text"] for b in running_bot.buttons(reply)]
    assert len(labels) == 2 and "Chart" in labels[1], labels
    photo = await _press_chart(running_bot, GROUP, reply, LI)
    assert photo.reply_to == reply.message_id
    _decoded(photo)


async def test_the_chart_button_works_after_a_restart(
    bot_settings: Settings, botapi_server: BotApiServer
) -> None:
    fake = botapi_server.fake
    app, errors = start_bot(bot_settings)
    async with running(app, poll_timeout=2):
        first = BotHarness(app, fake, errors)
        [reply] = await first.say(ANN, ANN, "cheapest way to serve Llama 3.1 70B")
    app, errors = start_bot(bot_settings)
    async with running(app, poll_timeout=2):
        again = BotHarness(app, fake, errors)
        photo = await _press_chart(again, ANN, reply, ANN)
    assert "Llama 3.1 70B" in photo.text
    _decoded(photo)


async def test_the_stand_in_refuses_what_telegram_refuses_in_send_photo(fake_telegram: FakeTelegram) -> None:
    png = _png(1200, 840)
    assert image_size(png) == ("png", 1200, 840)
    status, _ = await fake_telegram.call("sendPhoto", {"chat_id": str(ANN)}, {"photo": ("c.png", png)})
    assert status == 200
    for content, error in ((b"not an image", "IMAGE_PROCESS_FAILED"), (_png(9000, 2000), "DIMENSIONS")):
        status, body = await fake_telegram.call(
            "sendPhoto", {"chat_id": str(ANN)}, {"photo": ("x.png", content)}
        )
        assert status == 400 and error.encode() in body
    fake_telegram.calls.clear()  # the refusals above were the point


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(out, format="PNG")
    return out.getvalue()


def test_the_console_saves_the_chart_and_says_where(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "s.sqlite3")
    printed = _chat(settings, [COMPARE, press("Chart")], export_dir=tmp_path)
    [saved] = list(tmp_path.glob("gpufit-*.png"))
    assert str(saved) in printed and "📊" in printed
    assert Image.open(saved).format == "PNG"


@pytest.mark.parametrize(
    ("command", "question"),
    [
        ("ask", COMPARE),
        ("plan", "cheapest way to serve Llama 3.1 70B"),
        ("ask", "两张3090最大能LoRA多大的模型"),
    ],
)
def test_gpufit_ask_and_plan_write_the_chart(tmp_path: Path, command: str, question: str) -> None:
    target = tmp_path / "out" / "chart.png"
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", command, question, "--json", "--chart", str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert str(target.resolve()) in done.stderr
    assert done.stdout.lstrip().startswith("{")  # --json's output stays one document
    image = Image.open(target)
    assert image.format == "PNG" and image.width >= 1000


def test_gpufit_ask_says_when_an_answer_has_no_chart(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "ask", "what is VRAM?", "--chart", str(tmp_path / "c.png")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and "no chart" in done.stderr
    assert not (tmp_path / "c.png").exists()
