"""Bot API methods that answer a user's query: answerCallbackQuery and answerInlineQuery, each accepted once
per query id and only while the query is pending, with Telegram's limits on answers and results."""

from __future__ import annotations

from typing import Any

from bot.fake_telegram.html import parse_message_text, validate_reply_markup
from bot.fake_telegram.state import TelegramState
from bot.fake_telegram.wire import (
    JSON,
    MAX_CALLBACK_ANSWER,
    MAX_INLINE_RESULTS,
    MAX_RESULT_ID_BYTES,
    MIN_RESULT_ID_BYTES,
    QUERY_TOO_OLD,
    ApiError,
    bad_request,
)


class CallbackMethods(TelegramState):
    """Answers to button presses and inline queries."""

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
            if not MIN_RESULT_ID_BYTES <= len(result_id.encode("utf-8")) <= MAX_RESULT_ID_BYTES:
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
