"""The Bot API state machine: chats, messages, the update queue with offset confirmation, the outbox."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.fake_telegram.faults import Fault, RandomFaults
from bot.fake_telegram.html import ParsedText, parse_message_text, validate_reply_markup
from bot.fake_telegram.wire import (
    ANONYMOUS_ADMIN_ID,
    INT_FIELDS,
    JSON,
    JSON_FIELDS,
    MAX_CALLBACK_ANSWER,
    MAX_CAPTION_UTF16,
    MAX_INLINE_RESULTS,
    NOT_MODIFIED,
    OPT_IN_UPDATES,
    QUERY_TOO_OLD,
    ApiError,
    ConnectionDroppedError,
    bad_request,
    utf16_len,
)


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


class FakeTelegram:
    """The Bot API state machine: users, chats, the update queue, every call received, faults."""

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

    # -- the user side (tests, console) ------------------------------------------------------------

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

    def schedule(self, fault: Fault) -> None:
        self.faults.append(fault)

    # -- inspection --------------------------------------------------------------------------------

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

    def take_updates(self) -> list[JSON]:
        """Hand the queued updates to an in-process consumer (the console chat) instead of getUpdates."""
        taken = self._deliverable()
        self._updates = [u for u in self._updates if u not in taken]
        return taken

    @property
    def pending_updates(self) -> int:
        return len(self._updates)

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

    # -- the Bot API side --------------------------------------------------------------------------

    async def call(
        self,
        method: str,
        params: Mapping[str, Any],
        files: Mapping[str, tuple[str, bytes]] | None = None,
        *,
        token: str | None = None,
    ) -> tuple[int, bytes]:
        """Answer one Bot API call: (HTTP status, JSON body). May raise ConnectionDroppedError."""
        fault = next((f for f in self.faults if f.matches(method)), None)
        if fault is None and self.random_faults is not None:
            fault = self.random_faults.draw(method)
        if fault is not None:
            fault.times -= 1
            if fault.kind == "drop":
                self._record(ApiCall(method, dict(params), 0, description="dropped before handling"))
                raise ConnectionDroppedError(method)
            if fault.kind == "hang":
                self._record(ApiCall(method, dict(params), 0, description="held, never handled"))
                await self._release_event().wait()
                raise ConnectionDroppedError(method)
            if fault.kind == "429":
                error = ApiError(
                    429,
                    f"Too Many Requests: retry after {fault.retry_after}",
                    {"retry_after": fault.retry_after},
                )
                self._record(ApiCall(method, dict(params), 429, description=error.description))
                return 429, self._error_body(error)
            if fault.kind == "500":
                error = ApiError(500, "Internal Server Error")
                self._record(ApiCall(method, dict(params), 500, description=error.description))
                return 500, self._error_body(error)
            if fault.kind == "502":
                self._record(ApiCall(method, dict(params), 502, description="Bad Gateway"))
                return 502, b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
        status, body = await self._dispatch(method, params, files or {}, token)
        if fault is not None:
            if fault.kind == "slow":
                await asyncio.sleep(fault.delay)
            elif fault.kind == "drop_after":
                raise ConnectionDroppedError(method)
            elif fault.kind == "refuse":
                self.refusals += 1
        return status, body

    def release_held(self) -> None:
        """End every call held by a "hang" fault (its connection is dropped, it is never handled)."""
        held, self._released = self._release_event(), None
        held.set()

    def take_refusal(self) -> bool:
        """Whether the transport must refuse the next connection attempt (and count it as done)."""
        if self.refusals <= 0:
            return False
        self.refusals -= 1
        return True

    def _release_event(self) -> asyncio.Event:
        if self._released is None:
            self._released = asyncio.Event()
        return self._released

    async def _dispatch(
        self, method: str, raw: Mapping[str, Any], files: Mapping[str, tuple[str, bytes]], token: str | None
    ) -> tuple[int, bytes]:
        params = {key: self._decode(key, value) for key, value in raw.items()}
        record = ApiCall(method, params, 200)
        try:
            if token is not None and token != self.token:
                raise ApiError(401, "Unauthorized")
            handler = self._handlers().get(method.lower())
            if method.lower() == "getupdates":
                result = await self._get_updates(params)
            elif handler is None:
                raise ApiError(404, "Not Found")
            else:
                result = handler(params, files)
        except ApiError as error:
            record.status, record.description = error.status, error.description
            self._record(record)
            return error.status, self._error_body(error)
        record.result = result
        self._record(record)
        return 200, json.dumps({"ok": True, "result": result}, ensure_ascii=False).encode("utf-8")

    def _handlers(self) -> dict[str, Any]:
        return {
            "getme": lambda p, f: self.bot,
            "logout": lambda p, f: True,
            "close": lambda p, f: True,
            "deletewebhook": self._delete_webhook,
            "setwebhook": self._set_webhook,
            "getwebhookinfo": lambda p, f: {
                "url": self.webhook["url"],
                "has_custom_certificate": False,
                "pending_update_count": len(self._updates),
            },
            "sendmessage": self._send_message,
            "editmessagetext": self._edit_message_text,
            "editmessagereplymarkup": self._edit_reply_markup,
            "deletemessage": self._delete_message,
            "answercallbackquery": self._answer_callback_query,
            "answerinlinequery": self._answer_inline_query,
            "setmycommands": self._set_my_commands,
            "getmycommands": self._get_my_commands,
            "deletemycommands": self._delete_my_commands,
            "setmydescription": lambda p, f: True,
            "setmyshortdescription": lambda p, f: True,
            "sendchataction": self._send_chat_action,
            "senddocument": lambda p, f: self._send_file("document", p, f),
            "sendphoto": lambda p, f: self._send_file("photo", p, f),
            "getchatmember": self._get_chat_member,
            "getchat": lambda p, f: self._chat(p),
            "leavechat": self._leave_chat,
        }

    # ---- updates

    async def _get_updates(self, params: JSON) -> list[JSON]:
        if self.webhook["url"]:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; use "
                "deleteWebhook to delete the webhook first",
            )
        if params.get("allowed_updates") is not None:
            self.allowed_updates = list(params["allowed_updates"]) or None
        offset = int(params.get("offset", 0) or 0)
        limit = max(1, min(100, int(params.get("limit", 100) or 100)))
        timeout = float(params.get("timeout", 0) or 0)
        self.confirmed_offset = max(self.confirmed_offset, offset)
        if offset > 0:
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        elif offset < 0:
            self._updates = self._updates[offset:]
        self._changed_event().set()  # confirmed updates are gone: waiters on pending_updates re-check
        # A newer getUpdates ends the one still waiting, as Telegram does.
        self._poll_generation += 1
        generation = self._poll_generation
        self._update_event().set()
        deadline = time.monotonic() + timeout
        while not self._deliverable():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            event = self._update_event()
            event.clear()
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                break
            if self._poll_generation != generation:
                raise ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; make sure that only "
                    "one bot instance is running",
                )
        batch = self._deliverable()[:limit]
        for update in batch:
            self.deliveries[update["update_id"]] = self.deliveries.get(update["update_id"], 0) + 1
        self._changed_event().set()
        return batch

    def _deliverable(self) -> list[JSON]:
        allowed = set(self.allowed_updates) if self.allowed_updates else None
        out = []
        for update in self._updates:
            kind = next(k for k in update if k != "update_id")
            if (allowed is None and kind not in OPT_IN_UPDATES) or (allowed is not None and kind in allowed):
                out.append(update)
        return out

    def _enqueue(self, body: JSON) -> JSON:
        update = {"update_id": next(self._update_ids)} | body
        self._updates.append(update)
        self._update_event().set()
        self._changed_event().set()
        return update

    def _update_event(self) -> asyncio.Event:
        if self._new_update is None:
            self._new_update = asyncio.Event()
        return self._new_update

    def _changed_event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def _delete_webhook(self, params: JSON, files: Any) -> bool:
        self.webhook = {"url": "", "secret_token": None, "allowed_updates": None}
        if params.get("drop_pending_updates"):
            self._updates.clear()
        return True

    def _set_webhook(self, params: JSON, files: Any) -> bool:
        url = str(params.get("url", ""))
        if url and not url.startswith("https://"):
            raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        secret = params.get("secret_token")
        if secret is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", str(secret)):
            raise bad_request("bad webhook: secret token contains unallowed characters")
        self.webhook = {"url": url, "secret_token": secret, "allowed_updates": params.get("allowed_updates")}
        return True

    # ---- messages

    def _chat(self, params: JSON) -> JSON:
        chat_id = params.get("chat_id")
        try:
            chat_id = int(chat_id)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise bad_request("chat not found") from None
        chat = self.chats.get(chat_id)
        if chat is None:
            raise bad_request("chat not found")
        return chat

    def _writable_chat(self, params: JSON) -> JSON:
        chat = self._chat(params)
        if chat["type"] == "private":
            if chat["id"] in self.blocked_by:
                raise ApiError(403, "Forbidden: bot was blocked by the user")
        else:
            status = self.members.get((chat["id"], self.bot["id"]), "left")
            if status == "kicked":
                raise ApiError(403, f"Forbidden: bot was kicked from the {chat['type']} chat")
            if status == "left":
                raise ApiError(403, f"Forbidden: bot is not a member of the {chat['type']} chat")
        return chat

    def _send_message(self, params: JSON, files: Any) -> JSON:
        chat = self._writable_chat(params)
        parsed = parse_message_text(str(params.get("text", "")), params.get("parse_mode"))
        markup = validate_reply_markup(params.get("reply_markup"))
        reply_to = self._reply_target(chat["id"], params)
        stored = self._store(
            chat["id"],
            self.bot["id"],
            parsed.text,
            entities=parsed.entities,
            html=str(params.get("text", "")),
            reply_markup=markup,
            reply_to=reply_to,
        )
        return self._message_json(stored)

    def _reply_target(self, chat_id: int, params: JSON) -> int | None:
        reply = params.get("reply_parameters")
        if not reply:
            return None
        message_id = int(reply.get("message_id", 0))
        if (chat_id, message_id) not in self.messages and not reply.get("allow_sending_without_reply"):
            raise bad_request("message to be replied not found")
        return message_id

    def _editable(self, params: JSON) -> StoredMessage | None:
        if params.get("inline_message_id"):
            return None  # messages sent via inline mode: accepted, not tracked
        chat = self._chat(params)
        stored = self.messages.get((chat["id"], int(params.get("message_id", 0))))
        if stored is None or stored.deleted:
            raise bad_request("message to edit not found")
        if stored.from_id != self.bot["id"]:
            raise bad_request("message can't be edited")
        return stored

    def _edit_message_text(self, params: JSON, files: Any) -> JSON | bool:
        parsed = parse_message_text(str(params.get("text", "")), params.get("parse_mode"))
        markup = validate_reply_markup(params.get("reply_markup"))
        stored = self._editable(params)
        if stored is None:
            return True
        if (
            stored.text == parsed.text
            and stored.entities == parsed.entities
            and stored.reply_markup == markup
        ):
            raise bad_request(NOT_MODIFIED.removeprefix("Bad Request: "))
        stored.text, stored.entities, stored.html = parsed.text, parsed.entities, str(params.get("text", ""))
        stored.reply_markup = markup
        stored.edits += 1
        return self._message_json(stored) | {"edit_date": int(time.time())}

    def _edit_reply_markup(self, params: JSON, files: Any) -> JSON | bool:
        markup = validate_reply_markup(params.get("reply_markup"))
        stored = self._editable(params)
        if stored is None:
            return True
        if stored.reply_markup == markup:
            raise bad_request(NOT_MODIFIED.removeprefix("Bad Request: "))
        stored.reply_markup = markup
        stored.edits += 1
        return self._message_json(stored) | {"edit_date": int(time.time())}

    def _delete_message(self, params: JSON, files: Any) -> bool:
        chat = self._chat(params)
        stored = self.messages.get((chat["id"], int(params.get("message_id", 0))))
        if stored is None or stored.deleted:
            raise bad_request("message to delete not found")
        stored.deleted = True
        return True

    def _send_file(self, kind: str, params: JSON, files: Mapping[str, tuple[str, bytes]]) -> JSON:
        chat = self._writable_chat(params)
        if kind not in files and not params.get(kind):
            raise bad_request(f"there is no {kind} in the request")
        caption = params.get("caption")
        parsed = (
            parse_message_text(str(caption), params.get("parse_mode"), limit=MAX_CAPTION_UTF16)
            if caption
            else ParsedText("", [])
        )
        markup = validate_reply_markup(params.get("reply_markup"))
        stored = self._store(
            chat["id"],
            self.bot["id"],
            parsed.text,
            entities=parsed.entities,
            html=str(caption or ""),
            reply_markup=markup,
            kind=kind,
        )
        message = self._message_json(stored)
        message.pop("text", None)
        message.pop("entities", None)
        if caption:
            message["caption"] = parsed.text
        file_id = f"{kind}-{chat['id']}-{stored.message_id}"
        name, content = files.get(kind, ("file", b""))
        if kind == "photo":
            message["photo"] = [
                {
                    "file_id": file_id,
                    "file_unique_id": file_id,
                    "width": 640,
                    "height": 480,
                    "file_size": len(content),
                }
            ]
        else:
            message["document"] = {
                "file_id": file_id,
                "file_unique_id": file_id,
                "file_name": name,
                "file_size": len(content),
            }
        return message

    def _send_chat_action(self, params: JSON, files: Any) -> bool:
        self._writable_chat(params)
        return True

    def _leave_chat(self, params: JSON, files: Any) -> bool:
        chat = self._chat(params)
        self.members[(chat["id"], self.bot["id"])] = "left"
        return True

    # ---- callbacks, inline, commands, members

    def _answer_callback_query(self, params: JSON, files: Any) -> bool:
        query_id = str(params.get("callback_query_id", ""))
        if query_id not in self._pending_callbacks:
            raise ApiError(400, QUERY_TOO_OLD)
        text = params.get("text")
        if text is not None and len(str(text)) > MAX_CALLBACK_ANSWER:
            raise bad_request("MESSAGE_TOO_LONG")
        self._pending_callbacks.discard(query_id)
        self.callback_answers[query_id] = params
        return True

    def _answer_inline_query(self, params: JSON, files: Any) -> bool:
        query_id = str(params.get("inline_query_id", ""))
        if query_id not in self._pending_inline:
            raise ApiError(400, QUERY_TOO_OLD)
        results = params.get("results") or []
        if not isinstance(results, list) or len(results) > MAX_INLINE_RESULTS:
            raise bad_request("RESULTS_TOO_MUCH")
        seen: set[str] = set()
        for result in results:
            result_id = str(result.get("id", ""))
            if not 1 <= len(result_id.encode("utf-8")) <= 64:
                raise bad_request("RESULT_ID_INVALID")
            if result_id in seen:
                raise bad_request("RESULT_ID_DUPLICATE")
            seen.add(result_id)
            if result.get("type") == "article":
                if not str(result.get("title", "")).strip():
                    raise bad_request("RESULT_TITLE_EMPTY")
                content = result.get("input_message_content") or {}
                parse_message_text(str(content.get("message_text", "")), content.get("parse_mode"))
            validate_reply_markup(result.get("reply_markup"))
        self._pending_inline.discard(query_id)
        self.inline_answers[query_id] = params
        return True

    @staticmethod
    def _scope_key(params: JSON) -> tuple[str, str]:
        scope = params.get("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True), str(params.get("language_code") or "")

    def _set_my_commands(self, params: JSON, files: Any) -> bool:
        commands = params.get("commands") or []
        if len(commands) > 100:
            raise bad_request("BOT_COMMANDS_TOO_MUCH")
        for command in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", str(command.get("command", ""))):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        lang = str(params.get("language_code") or "")
        if lang and not re.fullmatch(r"[a-z]{2}", lang):
            raise bad_request("LANG_CODE_INVALID")
        self.commands[self._scope_key(params)] = list(commands)
        return True

    def _get_my_commands(self, params: JSON, files: Any) -> list[JSON]:
        return self.commands.get(self._scope_key(params), [])

    def _delete_my_commands(self, params: JSON, files: Any) -> bool:
        self.commands.pop(self._scope_key(params), None)
        return True

    def _get_chat_member(self, params: JSON, files: Any) -> JSON:
        chat = self._chat(params)
        user_id = int(params.get("user_id", 0))
        user = self.bot if user_id == self.bot["id"] else self.users.get(user_id)
        if user is None:
            raise bad_request("user not found")
        status = self.members.get((chat["id"], user_id), "member" if chat["type"] == "private" else "left")
        return self._member_json(status, user)

    @staticmethod
    def _member_json(status: str, user: JSON) -> JSON:
        if status == "creator":
            return {"status": "creator", "user": user, "is_anonymous": False}
        if status == "administrator":
            rights = dict.fromkeys(
                (
                    "can_manage_chat",
                    "can_delete_messages",
                    "can_manage_video_chats",
                    "can_restrict_members",
                    "can_promote_members",
                    "can_change_info",
                    "can_invite_users",
                    "can_post_stories",
                    "can_edit_stories",
                    "can_delete_stories",
                ),
                True,
            )
            return {
                "status": "administrator",
                "user": user,
                "can_be_edited": False,
                "is_anonymous": False,
            } | rights
        if status == "kicked":
            return {"status": "kicked", "user": user, "until_date": 0}
        return {"status": status, "user": user}

    # ---- helpers

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

    def _message_json(self, stored: StoredMessage, *, sender: JSON | None = None) -> JSON:
        if sender is None:
            sender = (
                self.bot
                if stored.from_id == self.bot["id"]
                else self.users.get(
                    stored.from_id,
                    {
                        "id": stored.from_id,
                        "is_bot": stored.from_id == ANONYMOUS_ADMIN_ID,
                        "first_name": "Group",
                    },
                )
            )
        message: JSON = {
            "message_id": stored.message_id,
            "date": stored.date,
            "chat": self.chats[stored.chat_id],
            "from": sender,
        }
        if stored.sender_chat_id is not None:
            message["sender_chat"] = self.chats[stored.sender_chat_id]
        if stored.kind == "text":
            message["text"] = stored.text
            if stored.entities:
                message["entities"] = stored.entities
        if stored.reply_markup is not None and "inline_keyboard" in stored.reply_markup:
            message["reply_markup"] = stored.reply_markup
        if stored.reply_to is not None and (stored.chat_id, stored.reply_to) in self.messages:
            message["reply_to_message"] = self._message_json(self.messages[(stored.chat_id, stored.reply_to)])
        return message

    def _user_entities(self, text: str) -> list[JSON]:
        entities: list[JSON] = []
        command = re.match(r"/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?", text)
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

    def _decode(self, key: str, value: Any) -> Any:
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if key in JSON_FIELDS and isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                raise bad_request(f"can't parse {key} JSON object") from None
        if isinstance(value, str) and value in ("true", "false") and key not in ("text", "caption", "query"):
            return value == "true"
        if key in INT_FIELDS and isinstance(value, str) and re.fullmatch(r"-?\d+", value):
            return int(value)
        return value

    def _record(self, call: ApiCall) -> None:
        self.calls.append(call)
        self._changed_event().set()

    @staticmethod
    def _error_body(error: ApiError) -> bytes:
        body: JSON = {"ok": False, "error_code": error.status, "description": error.description}
        if error.parameters:
            body["parameters"] = error.parameters
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
