"""The Bot API wire format both ways: form values decoded as Telegram reads them, messages, chat members and
answers encoded as Telegram writes them."""

from __future__ import annotations

import json
import re
from typing import Any

from bot.fake_telegram.state import StoredMessage, TelegramState
from bot.fake_telegram.wire import ANONYMOUS_ADMIN_ID, INT_FIELDS, JSON, JSON_FIELDS, ApiError, bad_request


class JsonWire(TelegramState):
    """Decoding of call parameters and encoding of what Telegram answers or puts into updates."""

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

    @staticmethod
    def _ok_body(result: Any) -> bytes:
        return json.dumps({"ok": True, "result": result}, ensure_ascii=False).encode("utf-8")

    @staticmethod
    def _error_body(error: ApiError) -> bytes:
        body: JSON = {"ok": False, "error_code": error.status, "description": error.description}
        if error.parameters:
            body["parameters"] = error.parameters
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
