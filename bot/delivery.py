"""Each update answered once, even across a crash: confirm to Telegram only what was handled, skip repeats.

Telegram re-delivers an update until a later getUpdates confirms it (offset above its id). PTB confirms a
batch with the very next poll, before the batch is handled, so a `kill -9` mid-batch would lose every
question still queued. Two small pieces close that gap:
- `ConfirmAfterHandling` wraps the getUpdates transport and holds each poll until the Application has handled
  every update it already holds (`update_queue.join()`), so the offset the poll carries confirms only handled
  updates; after a crash Telegram delivers the rest again. It also keeps one batch in memory at a time.
- `OnceOnlyUpdates` (the Application's update processor, one update at a time as before) skips an update the
  store remembers as handled, and remembers each one right after its handlers ran. Between the answer reaching
  Telegram and that commit lies a window of a few milliseconds where a crash still repeats one answer (at
  least once, never lost); a store that is down turns the check off (answers go on).
Webhook mode gets the skip but not the hold: PTB acknowledges a webhook call as soon as it is queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable
from typing import Any

from telegram import Update
from telegram.ext import Application, BaseUpdateProcessor
from telegram.request import BaseRequest, RequestData

from bot.session import STORE_KEY
from bot.store import SessionStore, StoreUnavailable

logger = logging.getLogger(__name__)

AnyApplication = Application[Any, Any, Any, Any, Any, Any]
_RECHECK_SECONDS = 1.0


class ConfirmAfterHandling(BaseRequest):
    """The getUpdates transport, holding each poll until every update fetched before it was handled."""

    def __init__(self, inner: BaseRequest) -> None:
        self.inner = inner
        self._app: AnyApplication | None = None

    def watch(self, app: AnyApplication) -> None:
        self._app = app

    @property
    def read_timeout(self) -> float | None:
        return self.inner.read_timeout

    async def initialize(self) -> None:
        await self.inner.initialize()

    async def shutdown(self) -> None:
        await self.inner.shutdown()

    async def do_request(  # noqa: PLR0917 (PTB's signature)
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if url.rsplit("/", 1)[-1].lower() == "getupdates":
            await self._handled_so_far()
        return await self.inner.do_request(
            url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
        )

    async def _handled_so_far(self) -> None:
        app = self._app
        while app is not None and app.running:
            try:
                await asyncio.wait_for(app.update_queue.join(), _RECHECK_SECONDS)
            except TimeoutError:
                continue  # still handling; re-check that the Application was not stopped meanwhile
            return


class OnceOnlyUpdates(BaseUpdateProcessor):
    """One update at a time; an update the store already handled is skipped, a new one remembered."""

    def __init__(self) -> None:
        super().__init__(max_concurrent_updates=1)
        self._app: AnyApplication | None = None

    def watch(self, app: AnyApplication) -> None:
        self._app = app

    async def initialize(self) -> None:
        """Nothing to open."""

    async def shutdown(self) -> None:
        """Nothing to close."""

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = self._key(update)
        store = self._store()
        if key is not None and store is not None and await _was_handled(store, *key):
            logger.info("update %d was handled before a restart; not answered again", key[1])
            if inspect.iscoroutine(coroutine):
                coroutine.close()
            return
        await coroutine
        if key is not None and store is not None and store.healthy:
            # A store that is down is not asked (a lock would add a wait to every update); it logs its outage
            # once, and until it is back a crash may repeat an answer.
            with contextlib.suppress(StoreUnavailable):
                await store.mark_handled(*key)

    def _key(self, update: object) -> tuple[int, int] | None:
        if self._app is None or not isinstance(update, Update):
            return None
        try:
            return self._app.bot.id, update.update_id
        except RuntimeError:  # the bot was not initialised (no getMe yet): nothing to key on
            return None

    def _store(self) -> SessionStore | None:
        store = self._app.bot_data.get(STORE_KEY) if self._app is not None else None
        return store if isinstance(store, SessionStore) else None


async def _was_handled(store: SessionStore, bot_id: int, update_id: int) -> bool:
    try:
        return await store.was_handled(bot_id, update_id)
    except StoreUnavailable:
        return False
