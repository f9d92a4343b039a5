"""`gpufit chat`: the Telegram bot in the terminal, offline, with the same Application and handlers.

The bot talks to an in-process FakeTelegram (no sockets, no token); what you type becomes a Telegram update
from a private-chat user, and what the bot sends prints as a client would show it: bold, code, the bars, and
buttons as numbered choices ("[1] QLoRA  [2] int4 …") that you press by typing the number. A document the bot
sends (the checklist's export) is written to a file and the console says where.

The session store is the bot's (GPUFIT_DB, default under the user's data directory), so the language, the last
question and an unfinished checklist are there after a restart. Input is read on the main thread: Ctrl-C and
Ctrl-D end the chat at once, even while it waits for a line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from pydantic import SecretStr
from telegram import Update
from telegram.request import BaseRequest, RequestData

from bot.app import build_application, running
from bot.fake_telegram import ApiCall, FakeTelegram, FakeTelegramRequest
from bot.private import examples
from bot.render import html_to_terminal
from bot.replies import text
from bot.settings import Settings, SettingsError, load_settings
from bot.store import SessionStore, StoreUnavailable

CONSOLE_USER_ID = 100_001
QUIT = ("/quit", "/exit", "/q")
PROMPT = "› "


def _locale_lang() -> str:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def _session_token() -> str:
    """A bot id of its own for each console session: the store remembers handled update ids per bot, and the
    stand-in numbers updates from 1 again on every start."""
    return f"{secrets.randbelow(9 * 10**9) + 10**9}:console-{secrets.token_urlsafe(24)}"


class _DocumentKeepingRequest(FakeTelegramRequest):
    """The stand-in's transport, keeping the bytes of each document the bot sends (the console saves them)."""

    def __init__(self, fake: FakeTelegram) -> None:
        super().__init__(fake)
        self.documents: list[tuple[str, bytes]] = []

    async def do_request(  # noqa: PLR0917 (PTB's signature)
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if url.lower().endswith("/senddocument") and request_data is not None and request_data.contains_files:
            part = request_data.multipart_data.get("document")
            if part is not None:
                content = part[1] if isinstance(part[1], bytes) else part[1].read()
                self.documents.append((part[0] or "document", content))
        return await super().do_request(
            url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
        )


def free_path(folder: Path, name: str) -> Path:
    """`folder/name`, or `name-2`, `name-3` … when taken: an export never overwrites a file."""
    safe = Path(name).name or "document"
    candidate = folder / safe
    stem, suffix = candidate.stem, candidate.suffix
    number = 2
    while candidate.exists():
        candidate = folder / f"{stem}-{number}{suffix}"
        number += 1
    return candidate


class ConsoleChat:
    """One private chat between you and the bot, over FakeTelegram."""

    def __init__(
        self,
        settings: Settings,
        out: TextIO,
        *,
        ansi: bool | None = None,
        lang: str | None = None,
        export_dir: Path | None = None,
    ) -> None:
        self.out = out
        self.ansi = ansi if ansi is not None else out.isatty()
        self.lang = lang or _locale_lang()
        self.export_dir = export_dir or Path.cwd()
        self.fake = FakeTelegram(token=_session_token(), bot_username="gpufit_bot", bot_name="gpufit")
        # Telegram always has a first name; the console user has none to greet by ("Hi!", never "Hi you!").
        self.fake.add_user(CONSOLE_USER_ID, "", language_code=self.lang)
        self.request = _DocumentKeepingRequest(self.fake)
        self.app = build_application(
            settings.model_copy(update={"token": SecretStr(self.fake.token)}),
            request=self.request,
            get_updates_request=FakeTelegramRequest(self.fake),
        )
        self.choices: list[tuple[int, dict[str, Any]]] = []  # (message id, button) for the numbers
        self._seen_calls = 0
        self._lifetime = contextlib.AsyncExitStack()

    async def open(self) -> None:
        """Start the Application (and its session store) and print the banner."""
        await self._lifetime.enter_async_context(running(self.app, polling=False))
        await self._follow_stored_lang()
        sample = next(iter(examples(self.lang)), "13b lora 4090")
        self._print(html_to_terminal(text("bot_console", self.lang, example=sample), ansi=self.ansi))

    async def close(self) -> None:
        await self._lifetime.aclose()

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
        await self._follow_stored_lang()
        self._show_new_calls()
        if stripped.split()[0].split("@")[0].lower() == "/help":
            self._print("")
            self._print(html_to_terminal(text("bot_console_help", self.lang), ansi=self.ansi))

    async def _deliver(self) -> None:
        for payload in self.fake.take_updates():
            await self.app.process_update(Update.de_json(payload, self.app.bot))

    async def _follow_stored_lang(self) -> None:
        """The console's own lines follow the language chosen with /lang (kept in the store)."""
        store = self.app.bot_data.get("store")
        if isinstance(store, SessionStore):
            with contextlib.suppress(StoreUnavailable):
                self.lang = await store.get_lang(CONSOLE_USER_ID, CONSOLE_USER_ID) or self.lang

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
        elif method == "senddocument" and self.request.documents:
            self._save_document(*self.request.documents.pop(0), caption=str(call.params.get("caption", "")))
        elif method == "sendphoto" and (photo := self._photo(call)) is not None:
            self._save_document(*photo, caption=str(call.params.get("caption", "")))  # a chart: saved as PNG
        elif method in ("sendphoto", "senddocument"):
            self._print(f"  [{method.removeprefix('send')}] {call.params.get('caption', '')}")
        return None

    def _photo(self, call: ApiCall) -> tuple[str, bytes] | None:
        """The uploaded bytes of a photo the bot sent (the stand-in keeps them), with their file name."""
        if not isinstance(call.result, dict):
            return None
        stored = self.fake.messages.get((CONSOLE_USER_ID, int(call.result["message_id"])))
        if stored is None or stored.file is None:
            return None
        return stored.file_name or "gpufit-chart.png", stored.file

    def _save_document(self, name: str, content: bytes, *, caption: str) -> None:
        self.export_dir.mkdir(parents=True, exist_ok=True)
        path = free_path(self.export_dir, name)
        path.write_bytes(content)
        self._print("")
        if caption:
            self._print(html_to_terminal(caption, ansi=self.ansi))
        note = text("bot_console_saved", self.lang, path=str(path.resolve()), size=len(content))
        self._print(html_to_terminal(note, ansi=self.ansi))

    def _offer(self, message_id: int) -> None:
        stored = self.fake.messages.get((CONSOLE_USER_ID, message_id))
        rows = (stored.reply_markup or {}).get("inline_keyboard", []) if stored else []
        self.choices = [(message_id, button) for row in rows for button in row]
        if self.choices:
            labels = [f"[{i}] {button['text']}" for i, (_, button) in enumerate(self.choices, start=1)]
            self._print("  " + "  ".join(labels))

    def prompt(self) -> None:
        """Always shown, also when the output is piped (a reader of the log sees where input was taken)."""
        print("\n" + PROMPT, end="", file=self.out, flush=True)

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)


def chat_session(
    read_line: Callable[[], str],
    out: TextIO,
    settings: Settings,
    *,
    ansi: bool | None = None,
    lang: str | None = None,
    export_dir: Path | None = None,
) -> int:
    """Run the console chat until /quit, end of input (Ctrl-D) or Ctrl-C.

    Lines are read on this (the main) thread between turns of one event loop, so Ctrl-C interrupts a waiting
    read at once; one that arrives while the bot answers cancels that answer. Either way the Application is
    shut down (the store closed) before returning.
    """
    with asyncio.Runner() as runner:
        console = ConsoleChat(settings, out, ansi=ansi, lang=lang, export_dir=export_dir)
        try:
            runner.run(console.open())
            while True:
                console.prompt()
                line = read_line()
                if line == "" or line.strip().lower() in QUIT:
                    break  # end of input (Ctrl-D) or /quit
                runner.run(console.say(line))
        except (KeyboardInterrupt, EOFError):
            pass
        finally:
            print("", file=out, flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                runner.run(console.close())
    return 0


def _read_line(stream: TextIO) -> Callable[[], str]:
    def read() -> str:
        return stream.readline()

    return read


def run_console(stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """`gpufit chat` (and `gpufit start` without a token): the settings' store; exports go to the working
    folder."""
    source, out = stdin or sys.stdin, stdout or sys.stdout
    try:
        settings = load_settings(require_token=False)
    except SettingsError as error:
        print(f"gpufit chat: {error}", file=sys.stderr)
        return 2
    settings.db_path.parent.mkdir(parents=True, exist_ok=True)
    return chat_session(_read_line(source), out, settings)
