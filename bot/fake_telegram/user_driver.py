"""The user side of the stand-in: what simulated users do (write, press a button, send an inline query, add or
block the bot) and what a test reads back (the bot's messages, the calls it made, Telegram's refusals)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Iterable
from typing import Any

from bot.fake_telegram.state import ApiCall, StoredMessage
from bot.fake_telegram.updates import UpdateQueue
from bot.fake_telegram.wire import ANONYMOUS_ADMIN_ID, JSON, MAX_COMMAND, MIN_COMMAND, utf16_len

_COMMAND = re.compile(rf"/[A-Za-z0-9_]{{{MIN_COMMAND},{MAX_COMMAND}}}(?:@[A-Za-z0-9_]{{3,32}})?")


class UserDriver(UpdateQueue):
    """Users act by putting updates into the queue, as their Telegram clients would."""

    def add_user(
        self,
        user_id: int,
        first_name: str = "Ann",
        *,
        username: str | None = None,
        language_code: str | None = "en",
    ) -> JSON:
        user: JSON = {"id": user_id, "is_bot": False, "first_name": first_name}
        if username:
            user["username"] = username
        if language_code:
            user["language_code"] = language_code
        self.users[user_id] = user
        self.chats.setdefault(user_id, {"id": user_id, "type": "private", "first_name": first_name})
        return user

    def add_group(
        self,
        chat_id: int,
        title: str = "GPU team",
        *,
        supergroup: bool = True,
        admins: Iterable[int] = (),
        creator: int | None = None,
    ) -> JSON:
        chat: JSON = {"id": chat_id, "type": "supergroup" if supergroup else "group", "title": title}
        self.chats[chat_id] = chat
        self.members[(chat_id, self.bot["id"])] = "member"
        for admin in admins:
            self.members[(chat_id, admin)] = "administrator"
        if creator is not None:
            self.members[(chat_id, creator)] = "creator"
        return chat

    def send_text(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        *,
        reply_to: int | None = None,
        anonymous_admin: bool = False,
    ) -> JSON:
        """A user writes `text`; commands and mentions get their entities, as a Telegram client adds them."""
        chat = self.chats[chat_id]
        if anonymous_admin:
            sender: JSON = {
                "id": ANONYMOUS_ADMIN_ID,
                "is_bot": True,
                "first_name": "Group",
                "username": "GroupAnonymousBot",
            }
        else:
            sender = self.users[user_id]
            self.members.setdefault((chat_id, user_id), "member")
        stored = self._store(
            chat_id, sender["id"], text, entities=self._user_entities(text), reply_to=reply_to
        )
        if anonymous_admin:
            stored.sender_chat_id = chat_id
        message = self._message_json(stored, sender=sender)
        if chat["type"] != "private" and self.privacy_mode and not self._privacy_allows(stored):
            return message  # Telegram does not deliver it to a bot in privacy mode
        self._enqueue({"message": message})
        return message

    def press(self, chat_id: int, message_id: int, data: str, user_id: int) -> str:
        """A user presses the inline button with `data` under a message; returns the callback query id."""
        stored = self.messages[(chat_id, message_id)]
        buttons = [b for row in (stored.reply_markup or {}).get("inline_keyboard", []) for b in row]
        if not any(b.get("callback_data") == data for b in buttons):
            raise ValueError(f"no button with callback data {data!r} under message {message_id}")
        query_id = str(next(self._query_ids))
        self._pending_callbacks.add(query_id)
        self._enqueue(
            {
                "callback_query": {
                    "id": query_id,
                    "from": self.users[user_id],
                    "chat_instance": str(abs(chat_id) * 7 + 3),
                    "data": data,
                    "message": self._message_json(stored),
                }
            }
        )
        return query_id

    def press_stale(self, chat_id: int, message_id: int, data: str, user_id: int) -> str:
        """A press on a button an older bot version drew (the message no longer shows it)."""
        stored = self.messages[(chat_id, message_id)]
        saved = stored.reply_markup
        stored.reply_markup = {"inline_keyboard": [[{"text": "old", "callback_data": data}]]}
        try:
            return self.press(chat_id, message_id, data, user_id)
        finally:
            stored.reply_markup = saved

    def inline_query(self, user_id: int, query: str, *, chat_type: str = "sender") -> str:
        query_id = str(next(self._query_ids))
        self._pending_inline.add(query_id)
        self._enqueue(
            {
                "inline_query": {
                    "id": query_id,
                    "from": self.users[user_id],
                    "query": query,
                    "offset": "",
                    "chat_type": chat_type,
                }
            }
        )
        return query_id

    def bot_membership(self, chat_id: int, by_user: int, new_status: str) -> None:
        """The bot is added to (member), promoted in (administrator), removed from (left/kicked) a chat."""
        old_status = self.members.get((chat_id, self.bot["id"]), "left")
        self.members[(chat_id, self.bot["id"])] = new_status
        if self.chats[chat_id]["type"] == "private" and new_status == "kicked":
            self.blocked_by.add(chat_id)
        elif self.chats[chat_id]["type"] == "private" and new_status == "member":
            self.blocked_by.discard(chat_id)
        self._enqueue(
            {
                "my_chat_member": {
                    "chat": self.chats[chat_id],
                    "from": self.users[by_user],
                    "date": int(time.time()),
                    "old_chat_member": self._member_json(old_status, self.bot),
                    "new_chat_member": self._member_json(new_status, self.bot),
                }
            }
        )

    def block(self, user_id: int) -> None:
        """The user blocks the bot: sends to that chat get 403 from now on."""
        self.blocked_by.add(user_id)

    # -- reading what happened -------------------------------------------------------------------

    def chat_messages(self, chat_id: int, *, from_bot: bool | None = None) -> list[StoredMessage]:
        found = [m for (c, _), m in sorted(self.messages.items()) if c == chat_id and not m.deleted]
        if from_bot is not None:
            found = [m for m in found if (m.from_id == self.bot["id"]) == from_bot]
        return found

    def bot_messages(self, chat_id: int) -> list[StoredMessage]:
        return self.chat_messages(chat_id, from_bot=True)

    def calls_to(self, method: str, *, ok: bool | None = None) -> list[ApiCall]:
        found = [c for c in self.calls if c.method.lower() == method.lower()]
        if ok is not None:
            found = [c for c in found if (c.status == 200) == ok]
        return found

    def refused(self) -> list[ApiCall]:
        """Calls Telegram would have refused as malformed (400), the ones a test should never see.

        "message is not modified" and "query is too old" are left out: they depend on timing and state, not on
        what the bot built, and the bot handles both."""
        benign = ("message is not modified", "query is too old")
        return [
            c for c in self.calls if c.status == 400 and not any(b in (c.description or "") for b in benign)
        ]

    async def wait_for(self, predicate: Any, *, within: float = 30.0, what: str = "condition") -> None:
        """Wait until `predicate()` holds, re-checking after every call the bot makes (no sleeps in tests)."""
        deadline = time.monotonic() + within
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out after {within:.0f}s waiting for {what}")
            changed = self._changed_event()
            changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), timeout=min(remaining, 0.5))

    def _user_entities(self, text: str) -> list[JSON]:
        entities: list[JSON] = []
        command = _COMMAND.match(text)
        if command:
            entities.append({"type": "bot_command", "offset": 0, "length": utf16_len(command.group(0))})
        for mention in re.finditer(r"(?<![\w@])@[A-Za-z0-9_]{3,32}", text):
            if command and mention.start() < command.end():
                continue
            entities.append(
                {
                    "type": "mention",
                    "offset": utf16_len(text[: mention.start()]),
                    "length": utf16_len(mention.group(0)),
                }
            )
        return entities

    def _privacy_allows(self, stored: StoredMessage) -> bool:
        if stored.text.startswith("/"):
            return True
        if stored.reply_to is not None:
            target = self.messages.get((stored.chat_id, stored.reply_to))
            return target is not None and target.from_id == self.bot["id"]
        return False
