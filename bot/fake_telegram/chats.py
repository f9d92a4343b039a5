"""Bot API methods on chats: which chat a call names, whether the bot may write there (blocked, kicked, left),
getChat, getChatMember and leaveChat."""

from __future__ import annotations

from typing import Any

from bot.fake_telegram.serialise import JsonWire
from bot.fake_telegram.wire import JSON, ApiError, bad_request


class ChatMethods(JsonWire):
    """Chat lookup with Telegram's refusals, and the chat and member methods."""

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

    def _get_chat_member(self, params: JSON, files: Any) -> JSON:
        chat = self._chat(params)
        user_id = int(params.get("user_id", 0))
        user = self.bot if user_id == self.bot["id"] else self.users.get(user_id)
        if user is None:
            raise bad_request("user not found")
        status = self.members.get((chat["id"], user_id), "member" if chat["type"] == "private" else "left")
        return self._member_json(status, user)

    def _get_chat(self, params: JSON, files: Any) -> JSON:
        return self._chat(params)

    def _leave_chat(self, params: JSON, files: Any) -> bool:
        chat = self._chat(params)
        self.members[(chat["id"], self.bot["id"])] = "left"
        return True
