"""What the Bot API stand-in remembers: users, chats, members, messages, calls received, the update queue.

`TelegramState` holds the fields; the concerns that act on them are mixins built on it, one module each:
serialise (the wire format), updates (getUpdates and webhooks), chats, messages and callbacks (Bot API
methods), dispatch (method name -> handler), injection (faults) and user_driver (what a simulated user does).
`bot.fake_telegram.fake.FakeTelegram` puts them together.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from bot.fake_telegram.faults import Fault, RandomFaults
from bot.fake_telegram.wire import JSON


@dataclass
class StoredMessage:
    """One message as the fake remembers it (bot's or user's)."""

    chat_id: int
    message_id: int
    from_id: int
    date: int
    text: str
    entities: list[JSON] = field(default_factory=list)
    html: str | None = None  # what the bot sent, before parsing
    reply_markup: JSON | None = None
    reply_to: int | None = None
    edits: int = 0
    kind: str = "text"  # text, photo, document
    file: bytes | None = None  # a photo's or document's bytes, as uploaded
    file_name: str | None = None
    thread_id: int | None = None
    sender_chat_id: int | None = None
    deleted: bool = False


@dataclass
class ApiCall:
    """One Bot API call as received, with its decoded parameters and the answer given."""

    method: str
    params: JSON
    status: int
    result: Any = None
    description: str | None = None
    at: float = field(default_factory=time.monotonic)


class TelegramState:
    """The fields every concern of the stand-in reads and writes, and the few helpers they all use."""

    def __init__(
        self,
        *,
        token: str = "123456789:TEST-token-for-the-fake-bot-api-00000",
        bot_username: str = "GpufitTestBot",
        bot_name: str = "gpufit",
        privacy_mode: bool = False,
    ) -> None:
        self.token = token
        self.bot: JSON = {
            "id": int(token.split(":", 1)[0]),
            "is_bot": True,
            "first_name": bot_name,
            "username": bot_username,
            "can_join_groups": True,
            "can_read_all_group_messages": not privacy_mode,
            "supports_inline_queries": True,
        }
        self.privacy_mode = privacy_mode
        self.users: dict[int, JSON] = {}
        self.chats: dict[int, JSON] = {}
        self.members: dict[tuple[int, int], str] = {}
        self.blocked_by: set[int] = set()
        self.messages: dict[tuple[int, int], StoredMessage] = {}
        self.calls: list[ApiCall] = []
        self.faults: list[Fault] = []
        self.random_faults: RandomFaults | None = None
        self.refusals = 0  # connection attempts the transport must refuse (Fault "refuse")
        self.confirmed_offset = 0  # the highest getUpdates offset received: updates below it are confirmed
        self.deliveries: dict[int, int] = {}  # update_id -> how many getUpdates answers carried it
        self._released: asyncio.Event | None = None
        self.commands: dict[tuple[str, str], list[JSON]] = {}
        self.inline_answers: dict[str, JSON] = {}
        self.callback_answers: dict[str, JSON] = {}
        self.webhook: JSON = {"url": "", "secret_token": None, "allowed_updates": None}
        self.allowed_updates: list[str] | None = None
        self._updates: list[JSON] = []
        self._update_ids = itertools.count(1)
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._query_ids = itertools.count(1000)
        self._pending_callbacks: set[str] = set()
        self._pending_inline: set[str] = set()
        self._new_update: asyncio.Event | None = None
        self._poll_generation = 0
        self._changed: asyncio.Event | None = None

    def _store(self, chat_id: int, from_id: int, text: str, **fields: Any) -> StoredMessage:
        counter = self._message_ids.setdefault(chat_id, itertools.count(1))
        stored = StoredMessage(
            chat_id=chat_id,
            message_id=next(counter),
            from_id=from_id,
            date=int(time.time()),
            text=text,
            **fields,
        )
        self.messages[(chat_id, stored.message_id)] = stored
        return stored

    def _record(self, call: ApiCall) -> None:
        self.calls.append(call)
        self._changed_event().set()

    def _update_event(self) -> asyncio.Event:
        if self._new_update is None:
            self._new_update = asyncio.Event()
        return self._new_update

    def _changed_event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed
