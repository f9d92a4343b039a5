"""Bot API dispatch: a method name to its handler, the token check, Telegram's envelope around answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.fake_telegram.callbacks import CallbackMethods
from bot.fake_telegram.commands import CommandMethods
from bot.fake_telegram.messages import MessageMethods
from bot.fake_telegram.state import ApiCall
from bot.fake_telegram.updates import UpdateQueue
from bot.fake_telegram.wire import ApiError


class BotApi(UpdateQueue, MessageMethods, CommandMethods, CallbackMethods):
    """Every Bot API method the stand-in knows, answered as (HTTP status, JSON body); every call recorded."""

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
        return 200, self._ok_body(result)

    def _handlers(self) -> dict[str, Any]:
        return {
            "getme": lambda p, f: self.bot,
            "logout": lambda p, f: True,
            "close": lambda p, f: True,
            "deletewebhook": self._delete_webhook,
            "setwebhook": self._set_webhook,
            "getwebhookinfo": self._webhook_info,
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
            "getchat": self._get_chat,
            "leavechat": self._leave_chat,
        }
