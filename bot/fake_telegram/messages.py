"""Bot API methods that send and change messages: sendMessage, editMessageText, editMessageReplyMarkup,
deleteMessage, sendDocument, sendPhoto, sendChatAction. Text is checked as Telegram checks it."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from bot.fake_telegram.chats import ChatMethods
from bot.fake_telegram.html import ParsedText, parse_message_text, validate_reply_markup
from bot.fake_telegram.images import check_photo
from bot.fake_telegram.state import StoredMessage
from bot.fake_telegram.wire import JSON, MAX_CAPTION_UTF16, NOT_MODIFIED, bad_request


class MessageMethods(ChatMethods):
    """What the bot sends into chats, stored as Telegram would show it."""

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
        """sendPhoto and sendDocument with a multipart upload (a file id or URL is accepted, not fetched):
        a photo must be an image Telegram can process, within its size limits; the bytes are kept."""
        chat = self._writable_chat(params)
        if kind not in files and not params.get(kind):
            raise bad_request(f"there is no {kind} in the request")
        name, content = files.get(kind, ("file", b""))
        width, height = check_photo(content) if kind == "photo" and kind in files else (0, 0)
        caption = params.get("caption")
        parsed = (
            parse_message_text(str(caption), params.get("parse_mode"), limit=MAX_CAPTION_UTF16)
            if caption
            else ParsedText("", [])
        )
        markup = validate_reply_markup(params.get("reply_markup"))
        reply_to = self._reply_target(chat["id"], params)
        stored = self._store(
            chat["id"],
            self.bot["id"],
            parsed.text,
            entities=parsed.entities,
            html=str(caption or ""),
            reply_markup=markup,
            reply_to=reply_to,
            kind=kind,
            file=content if kind in files else None,
            file_name=name if kind in files else None,
            thread_id=int(params["message_thread_id"]) if params.get("message_thread_id") else None,
        )
        message = self._message_json(stored)
        message.pop("text", None)
        message.pop("entities", None)
        if caption:
            message["caption"] = parsed.text
        file_id = f"{kind}-{chat['id']}-{stored.message_id}"
        if kind == "photo":
            message["photo"] = [
                {
                    "file_id": file_id,
                    "file_unique_id": file_id,
                    "width": width,
                    "height": height,
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
