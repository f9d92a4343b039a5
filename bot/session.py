"""Per-chat, per-user session access for handlers: the store when it works, plain answers when it does not.

The store is opened by the Application (bot/app.py) and lives in `bot_data["store"]`. A store that is down
(locked, corrupt, disk full) must not silence the bot: every read falls back to "nothing remembered" and every
write is skipped, with the store logging the outage once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from telegram import Chat, Update, User
from telegram.ext import ContextTypes

from bot.store import ChatMemory, GroupSettings, KeyboardRow, SessionStore, StoreUnavailable
from core.query import Query
from core.vision.job import VisionJob

logger = logging.getLogger(__name__)
T = TypeVar("T")

STORE_KEY = "store"


def store_of(context: ContextTypes.DEFAULT_TYPE) -> SessionStore | None:
    store = context.bot_data.get(STORE_KEY)
    return store if isinstance(store, SessionStore) else None


async def _safely(
    context: ContextTypes.DEFAULT_TYPE, call: Callable[[SessionStore], Awaitable[T]], default: T
) -> T:
    store = store_of(context)
    if store is None:
        return default
    try:
        return await call(store)
    except StoreUnavailable:
        return default


def ids(update: Update) -> tuple[int, int]:
    """(chat id, user id) of an update; sessions and checklists are keyed by both."""
    chat = update.effective_chat
    user = update.effective_user
    chat_id = chat.id if chat else (user.id if user else 0)
    user_id = user.id if user else chat_id
    return chat_id, user_id


async def last_query(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> Query | None:
    return await _safely(context, lambda s: s.get_last_query(chat_id, user_id), None)


async def remember_query(
    context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int, query: Query
) -> None:
    await _safely(context, lambda s: s.set_last_query(chat_id, user_id, query), None)


async def last_vision(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> VisionJob | None:
    """The last vision job answered in this chat for this user (kept in the store: its follow-ups work
    after a restart)."""
    return await _safely(context, lambda s: s.get_last_vision(chat_id, user_id), None)


async def remember_answer(
    context: ContextTypes.DEFAULT_TYPE,
    chat_id: int,
    user_id: int,
    query: Query | None,
    vision: VisionJob | None,
) -> None:
    """What the next message here follows up: the answer's query, or its vision job (one write)."""
    if query is None and vision is None:
        return
    await _safely(context, lambda s: s.set_last_question(chat_id, user_id, query, vision), None)


# Where the ChatMemory read by an earlier handler of the same update waits for the next one (the context is
# one object per update, shared by every handler group).
_MEMORY_ATTRIBUTE = "gpufit_chat_memory"


async def chat_memory(
    context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int, *, keep: bool = False
) -> ChatMemory:
    """Everything the store holds for this user here before a question (one read; nothing if it is down).

    `keep`: the checklist's handler (bot/checklist.py) reads it first, to see whether a message answers a
    step, and keeps it for this update's question handler, which then needs no read of its own (a private
    message was two trips to SQLite's thread, one is enough). What was kept is taken once, and only for the
    same chat and user; nothing is written between the two (a message the checklist takes stops there)."""
    kept = context.__dict__.pop(_MEMORY_ATTRIBUTE, None)
    if isinstance(kept, tuple) and kept[0] == (chat_id, user_id) and isinstance(kept[1], ChatMemory):
        memory: ChatMemory = kept[1]
    else:
        memory = await _safely(context, lambda s: s.get_chat_memory(chat_id, user_id), ChatMemory())
    if keep:
        context.__dict__[_MEMORY_ATTRIBUTE] = ((chat_id, user_id), memory)
    return memory


def lang_from(memory: ChatMemory, chat: Chat | None) -> str | None:
    """lang_override's choice from a ChatMemory already read: the user's /lang, else a group's language."""
    if chat is None:
        return None
    if memory.lang in ("en", "zh"):
        return memory.lang
    if chat.type != Chat.PRIVATE and memory.group.lang in ("en", "zh"):
        return memory.group.lang
    return None


async def remember_with_keyboard(
    context: ContextTypes.DEFAULT_TYPE,
    chat_id: int,
    user_id: int,
    query: Query | None,
    vision: VisionJob | None,
    *,
    keyboard: KeyboardRow | None,
) -> str | None:
    """remember_answer and save_keyboard in one commit; the keyboard's key (None: no keyboard, or the store
    is down, and then the answer goes without buttons as save_keyboard's would)."""
    return await _safely(
        context, lambda s: s.remember_answer(chat_id, user_id, query, vision, keyboard), None
    )


async def lang_override(context: ContextTypes.DEFAULT_TYPE, chat: Chat | None, user_id: int) -> str | None:
    """The user's /lang choice in this chat, else the group's /settings lang; None means "detect"."""
    if chat is None:
        return None
    own = await _safely(context, lambda s: s.get_lang(chat.id, user_id), None)
    if own in ("en", "zh"):
        return own
    if chat.type != Chat.PRIVATE:
        settings = await group_settings(context, chat.id)
        if settings.lang in ("en", "zh"):
            return settings.lang
    return None


async def set_lang(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int, lang: str | None) -> bool:
    return await _safely(context, lambda s: _then_true(s.set_lang(chat_id, user_id, lang)), False)


async def group_settings(context: ContextTypes.DEFAULT_TYPE, chat_id: int) -> GroupSettings:
    return await _safely(context, lambda s: s.get_group_settings(chat_id), GroupSettings())


async def set_group_settings(context: ContextTypes.DEFAULT_TYPE, chat_id: int, **fields: str | None) -> bool:
    return await _safely(context, lambda s: _then_true(s.set_group_settings(chat_id, **fields)), False)


async def save_keyboard(
    context: ContextTypes.DEFAULT_TYPE,
    chat_id: int,
    message_id: int | None,
    query: Query,
    lang: str,
    *,
    chart: str | None = None,
) -> str | None:
    return await _safely(
        context, lambda s: _maybe(s.save_keyboard_query(chat_id, message_id, query, lang, chart)), None
    )


async def load_chart(context: ContextTypes.DEFAULT_TYPE, key: str) -> str | None:
    return await _safely(context, lambda s: s.load_keyboard_chart(key), None)


async def load_keyboard(context: ContextTypes.DEFAULT_TYPE, key: str) -> tuple[Query, str] | None:
    return await _safely(context, lambda s: s.load_keyboard_query(key), None)


async def forget(context: ContextTypes.DEFAULT_TYPE, user_id: int) -> int | None:
    return await _safely(context, lambda s: _maybe(s.forget_user(user_id)), None)


async def mark_blocked(context: ContextTypes.DEFAULT_TYPE, chat_id: int) -> None:
    await _safely(context, lambda s: s.mark_blocked(chat_id), None)


def ui_lang(override: str | None, user: User | None) -> str:
    """The language for the bot's own words when there is no question text to detect it from."""
    if override in ("en", "zh"):
        return override
    code = (user.language_code or "") if user else ""
    return "zh" if code.lower().startswith("zh") else "en"


async def _then_true(call: Awaitable[Any]) -> bool:
    await call
    return True


async def _maybe(call: Awaitable[T]) -> T | None:
    return await call
