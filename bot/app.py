"""The one place the Application is built and its handlers registered (bot, console chat and tests share it).

Handler order: the per-user flood throttle first (group -2, bot/throttle.py); then the checklist in its own
handler group (-1), so its typed answers and "ck:" buttons win while a checklist is active and stop there;
then, in group 0 where the first match wins, commands, group triggers (mentions, replies), our buttons, inline
queries, and last the private catch-all text handler.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from telegram import (
    BotCommand,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    LinkPreviewOptions,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import TelegramError
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder, Defaults
from telegram.request import BaseRequest

from bot import buttons, checklist, errors, groups, inline, private, throttle
from bot.answer.hub import learn_cached
from bot.delivery import POLL_WINDOW_KEY, ConfirmAfterHandling, OnceOnlyUpdates, PollWindow, replay_parked
from bot.hub.cache import SqliteModelCache
from bot.hub.lookup import HUB_LOOKUP_KEY, HubLookup
from bot.hub.settings import HubSettings
from bot.replies import text
from bot.session import STORE_KEY
from bot.settings import Settings, apply_to_core
from bot.store import SessionStore, StoreUnavailable
from bot.transport import LeanRequest, RetryingRequest
from bot.warm import warm

logger = logging.getLogger(__name__)

RATE_LIMIT_RETRIES = 3
COMMAND_LANGS = (None, "zh")  # None: the default list (English); "zh": Chinese clients
OWNS_STORE_KEY = "owns_store"


def default_request() -> BaseRequest:
    return RetryingRequest(
        connection_pool_size=32,
        read_timeout=15.0,
        send_read_timeout=30.0,  # sends are not repeated after a timeout: give a slow Telegram time
        write_timeout=15.0,
        connect_timeout=10.0,
        pool_timeout=5.0,
    )


def default_get_updates_request() -> BaseRequest:
    # A couple of connections, so a long-poll cut by the network does not leave the pool stuck (PTB #4036).
    # LeanRequest: the polls over bot/http11.py too, unless a proxy needs httpx (bot/transport.py).
    return LeanRequest(connection_pool_size=2, read_timeout=10.0, connect_timeout=10.0, pool_timeout=5.0)


def build_application(
    settings: Settings,
    *,
    request: BaseRequest | None = None,
    get_updates_request: BaseRequest | None = None,
    store: SessionStore | None = None,
) -> Application[Any, Any, Any, Any, Any, Any]:
    """The bot: HTML by default, flood control with retries, the session store opened on start, each update
    confirmed to Telegram only once handled, different chats' updates handled at once, each chat's in order
    (bot/delivery.py)."""
    problem = apply_to_core(settings)
    if problem:
        logger.warning("%s", problem)  # answers say so too (templates/*/prices_missing.j2)
    window = PollWindow()  # what the polls may confirm: shared by the transport and the update processor
    updates_request = ConfirmAfterHandling(get_updates_request or default_get_updates_request(), window)
    processor = OnceOnlyUpdates(window)
    app = (
        ApplicationBuilder()
        .token(settings.token_value)
        .base_url(settings.base_url)
        .base_file_url(settings.base_file_url)
        .defaults(
            Defaults(parse_mode=ParseMode.HTML, link_preview_options=LinkPreviewOptions(is_disabled=True))
        )
        .rate_limiter(AIORateLimiter(max_retries=RATE_LIMIT_RETRIES))
        .request(request or default_request())
        .get_updates_request(updates_request)
        .concurrent_updates(processor)
        .post_init(on_start)
        .post_shutdown(on_stop)
        .build()
    )
    updates_request.watch(app)
    processor.watch(app)
    app.bot_data["settings"] = settings
    app.bot_data[POLL_WINDOW_KEY] = window
    app.bot_data[HUB_LOOKUP_KEY] = HubLookup(HubSettings.from_env(), SqliteModelCache(settings.db_path))
    app.bot_data[throttle.THROTTLE_KEY] = throttle.Throttle(
        burst=settings.throttle_burst, rate=settings.throttle_rate
    )
    if store is not None:
        app.bot_data[STORE_KEY] = store
        app.bot_data[OWNS_STORE_KEY] = False
    register(app)
    return app


def register(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    app.add_handlers(throttle.handlers(), group=throttle.THROTTLE_GROUP)
    app.add_handlers(checklist.handlers(), group=checklist.HANDLER_GROUP)
    for handler in (
        *private.handlers(),
        *groups.handlers(),
        *buttons.handlers(),
        *inline.handlers(),
        *private.private_text_handlers(),
    ):
        app.add_handler(handler)
    app.add_error_handler(errors.on_error)


async def on_start(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Load what answers need (bot/warm.py: the first user should not wait for it), open the session store
    (answers still work without it), queue the updates parked before a restart and publish the command
    menus."""
    warm()
    if STORE_KEY not in app.bot_data:
        settings: Settings = app.bot_data["settings"]
        try:
            settings.db_path.parent.mkdir(parents=True, exist_ok=True)
            app.bot_data[STORE_KEY] = await SessionStore.open(
                settings.db_path, retention_days=settings.retention_days
            )
            app.bot_data[OWNS_STORE_KEY] = True
        except (StoreUnavailable, OSError) as error:
            logger.error(
                "session store %s unavailable (%s): answering without memory", settings.db_path, error
            )
    lookup = app.bot_data.get(HUB_LOOKUP_KEY)
    if isinstance(lookup, HubLookup) and isinstance(lookup.cache, SqliteModelCache):
        # Models looked up before a restart stay known to stored queries and buttons.
        await asyncio.to_thread(learn_cached, lookup.cache)
    # Updates parked before a restart (bot/delivery.py) are answered first: queued before the first poll.
    await replay_parked(app)
    await publish_commands(app)


async def on_stop(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    store = app.bot_data.get(STORE_KEY)
    if isinstance(store, SessionStore) and app.bot_data.get(OWNS_STORE_KEY):
        await store.close()
        del app.bot_data[STORE_KEY]


def command_list(scope: str, lang: str) -> list[BotCommand]:
    lines = text("bot_commands", lang, scope=scope).splitlines()
    return [
        BotCommand(name.strip(), about.strip())
        for name, _, about in (ln.partition("|") for ln in lines)
        if name.strip() and about.strip()
    ]


async def publish_commands(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """The command menus: private chats and groups, English by default and Chinese for zh clients."""
    for scope_name, scope in (
        ("private", BotCommandScopeAllPrivateChats()),
        ("group", BotCommandScopeAllGroupChats()),
    ):
        for code in COMMAND_LANGS:
            try:
                await app.bot.set_my_commands(
                    command_list(scope_name, code or "en"), scope=scope, language_code=code
                )
            except TelegramError as error:
                logger.warning("set_my_commands(%s, %s) failed: %s", scope_name, code, error)


@asynccontextmanager
async def running(
    app: Application[Any, Any, Any, Any, Any, Any], *, polling: bool = True, poll_timeout: float = 10.0
) -> AsyncIterator[Application[Any, Any, Any, Any, Any, Any]]:
    """The lifecycle run_polling performs, for callers that own the event loop (tests, the console chat):
    initialize, post_init, start, poll; and on exit the same in reverse, post_shutdown included."""
    await app.initialize()
    try:
        if app.post_init is not None:
            await app.post_init(app)
        await app.start()
        if polling and app.updater is not None:
            await app.updater.start_polling(
                timeout=timedelta(seconds=poll_timeout), allowed_updates=Update.ALL_TYPES
            )
        yield app
    finally:
        if app.updater is not None and app.updater.running:
            await app.updater.stop()
        if app.running:
            await app.stop()
        if app.post_shutdown is not None:
            await app.post_shutdown(app)
        await app.shutdown()
