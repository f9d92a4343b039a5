"""Bot API methods on the bot's command menu: setMyCommands, getMyCommands, deleteMyCommands, per scope and
language, with Telegram's checks on command names and descriptions."""

from __future__ import annotations

import json
import re
from typing import Any

from bot.fake_telegram.state import TelegramState
from bot.fake_telegram.wire import (
    JSON,
    MAX_COMMAND,
    MAX_COMMAND_DESCRIPTION,
    MAX_COMMANDS,
    MIN_COMMAND,
    bad_request,
)

_COMMAND = re.compile(rf"[a-z0-9_]{{{MIN_COMMAND},{MAX_COMMAND}}}")


class CommandMethods(TelegramState):
    """The command menu, kept per (scope, language)."""

    @staticmethod
    def _scope_key(params: JSON) -> tuple[str, str]:
        scope = params.get("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True), str(params.get("language_code") or "")

    def _set_my_commands(self, params: JSON, files: Any) -> bool:
        commands = params.get("commands") or []
        if len(commands) > MAX_COMMANDS:
            raise bad_request("BOT_COMMANDS_TOO_MUCH")
        for command in commands:
            if not _COMMAND.fullmatch(str(command.get("command", ""))):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= MAX_COMMAND_DESCRIPTION:
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
