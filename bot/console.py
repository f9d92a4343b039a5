"""`gpufit chat`: the Telegram bot in the terminal, offline, with the same Application and handlers.

The bot talks to an in-process FakeTelegram (no sockets, no token); what you type becomes a Telegram update
from a private-chat user, and what the bot sends prints as a client would show it: bold, code, the bars, and
buttons as numbered choices ("[1] QLoRA  [2] int4 …") that you press by typing the number.
The session store is GPUFIT_DB when set, else a temporary file removed on exit.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from telegram import Update

from bot.app import build_application, running
from bot.fake_telegram import ApiCall, FakeTelegram, FakeTelegramRequest
from bot.private import examples
from bot.render import html_to_terminal
from bot.replies import text
from bot.settings import Settings

CONSOLE_USER_ID = 100_001
QUIT = ("/quit", "/exit", "/q")


def _locale_lang() -> str:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


class ConsoleChat:
    """One private chat between you and the bot, over FakeTelegram."""

    def __init__(
        self, db_path: Path, out: TextIO, *, ansi: bool | None = None, lang: str | None = None
    ) -> None:
        self.out = out
        self.ansi = ansi if ansi is not None else out.isatty()
        self.lang = lang or _locale_lang()
        self.fake = FakeTelegram(bot_username="gpufit_bot", bot_name="gpufit")
        self.fake.add_user(CONSOLE_USER_ID, "you", language_code=self.lang)
        settings = Settings(token=self.fake.token, db_path=db_path)
        self.app = build_application(
            settings,
            request=FakeTelegramRequest(self.fake),
            get_updates_request=FakeTelegramRequest(self.fake),
        )
        self.choices: list[tuple[int, dict[str, Any]]] = []  # (message id, button) for the numbers
        self._seen_calls = 0

    def banner(self) -> None:
        sample = next(iter(examples(self.lang)), "13b lora 4090")
        self._print(html_to_terminal(text("bot_console", self.lang, example=sample), ansi=self.ansi))

    async def say(self, line: str) -> None:
        """You type `line`: a number presses a button of the last keyboard, anything else is a message."""
        stripped = line.strip()
        if not stripped:
            return
        if stripped.isdigit() and self.choices and 1 <= int(stripped) <= len(self.choices):
            message_id, button = self.choices[int(stripped) - 1]
            if "callback_data" in button:
                self.fake.press(CONSOLE_USER_ID, message_id, button["callback_data"], CONSOLE_USER_ID)
            else:
                self._print(f"  → {button.get('url', '')}")
                return
        else:
            self.fake.send_text(CONSOLE_USER_ID, CONSOLE_USER_ID, stripped)
        await self._deliver()
        self._show_new_calls()

    async def _deliver(self) -> None:
        for payload in self.fake.take_updates():
            await self.app.process_update(Update.de_json(payload, self.app.bot))

    def _show_new_calls(self) -> None:
        calls = self.fake.calls[self._seen_calls :]
        self._seen_calls = len(self.fake.calls)
        keyboard_owner: int | None = None
        for call in calls:
            keyboard_owner = self._show(call) or keyboard_owner
        if keyboard_owner is not None:
            self._offer(keyboard_owner)

    def _show(self, call: ApiCall) -> int | None:
        """Print one call the bot made; returns the message id when it carries an inline keyboard."""
        if call.status != 200:
            if call.method.lower() not in ("answercallbackquery",):
                self._print(f"  [Telegram would refuse {call.method}: {call.description}]")
            return None
        method = call.method.lower()
        if method in ("sendmessage", "editmessagetext"):
            mark = "✎ " if method == "editmessagetext" else ""
            self._print("")
            self._print(mark + html_to_terminal(str(call.params.get("text", "")), ansi=self.ansi))
            markup = call.params.get("reply_markup") or {}
            if markup.get("inline_keyboard") and isinstance(call.result, dict):
                return int(call.result["message_id"])
        elif method == "answercallbackquery" and call.params.get("text"):
            self._print(f"  ({call.params['text']})")
        elif method in ("sendphoto", "senddocument"):
            self._print(f"  [{method.removeprefix('send')}] {call.params.get('caption', '')}")
        return None

    def _offer(self, message_id: int) -> None:
        stored = self.fake.messages.get((CONSOLE_USER_ID, message_id))
        rows = (stored.reply_markup or {}).get("inline_keyboard", []) if stored else []
        self.choices = [(message_id, button) for row in rows for button in row]
        if self.choices:
            labels = [f"[{i}] {button['text']}" for i, (_, button) in enumerate(self.choices, start=1)]
            self._print("  " + "  ".join(labels))

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)


async def chat_loop(
    read_line: Callable[[], str],
    out: TextIO,
    db_path: Path,
    *,
    ansi: bool | None = None,
    lang: str | None = None,
) -> int:
    """Run the console chat until /quit or end of input."""
    console = ConsoleChat(db_path, out, ansi=ansi, lang=lang)
    async with running(console.app, polling=False):
        console.banner()
        while True:
            if ansi is not False and out.isatty():
                print("\n› ", end="", file=out, flush=True)
            try:
                line = await asyncio.to_thread(read_line)
            except EOFError:
                break
            if line == "":
                break  # end of input
            if line.strip().lower() in QUIT:
                break
            await console.say(line)
    return 0


def _read_line(stream: TextIO) -> Callable[[], str]:
    def read() -> str:
        return stream.readline()

    return read


def run_console(stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """`gpufit chat` (and `gpufit start` without a token)."""
    source, out = stdin or sys.stdin, stdout or sys.stdout
    configured = os.environ.get("GPUFIT_DB")
    try:
        if configured:
            Path(configured).parent.mkdir(parents=True, exist_ok=True)
            return asyncio.run(chat_loop(_read_line(source), out, Path(configured)))
        with tempfile.TemporaryDirectory(prefix="gpufit-chat-") as folder:
            return asyncio.run(chat_loop(_read_line(source), out, Path(folder) / "gpufit.sqlite3"))
    except KeyboardInterrupt:
        print("", file=out)
        return 0
