"""Each update answered once, even across a crash, with different chats answered at the same time.

Telegram re-delivers an update until a later getUpdates confirms it: the offset a poll carries confirms every
update below it. PTB confirms a batch with the very next poll, before the batch is handled, so a `kill -9`
mid-batch would lose every question still queued; and handling one update at a time makes every question wait
for all those before it (their CPU, their store commits, their sends). Three pieces:

- `PollWindow` knows which fetched updates are still being handled. `ConfirmAfterHandling`, the getUpdates
  transport, lowers the offset each poll carries to the lowest update still in hand, so a poll confirms only
  the handled prefix: after a crash Telegram delivers every unhandled update again, never loses one. Such a
  poll gets the in-hand updates back from Telegram; the transport drops them from the answer (PTB sees each
  update once) and passes on only the new ones. Since in-hand updates make Telegram answer a poll at once,
  a poll is sent only when it can bring something: when nothing is in hand (a normal long poll), when an
  update finished since the last poll (each finish lets the next questions in), or every `STUCK_POLL_SECONDS`
  while every update in hand is slow (a send held by flood control, a Hub lookup), so one slow chat does not
  hold the others back. Telegram hands at most 100 updates from the offset, which bounds what is in hand.
- Parking: a lowered offset brings back the update in hand *and every update after it*, handled or not, with
  each poll (under saturation 415 polls brought back 16,448 updates already had, for 750 new ones). So an
  update still in hand after `PARK_SECONDS` is parked: its JSON, as Telegram sent it, is committed to the
  store's `parked_updates`, and from then on the offset passes it (`PollWindow.park`): Telegram drops it, and
  the store is where it is kept until answered. The statement that marks it handled deletes it (a trigger:
  one transaction, so a crash leaves it parked or handled, never neither and never both), and that mark is
  committed at once, not after a ride. On start, before the first poll, `replay_parked` queues the parked
  updates, oldest first, ahead of anything new. One that Telegram also delivers again (a crash between the
  park's commit and the poll past it) is skipped as any repeat is: in flight, or handled in the store.
- `OnceOnlyUpdates`, the Application's update processor, handles updates concurrently, but each chat's
  updates, and each user's (a button press or an inline query touches the user's session), in the order
  they came: an update waits for the earlier ones sharing its chat or user, and for nothing else.
- It skips an update the store remembers as handled, and remembers each one once its handlers ran. The store
  is asked only about an update that can be there: one at or below the highest id it held at the start
  (read once) or below one this process already took in. Telegram numbers updates upwards, so a new update
  is above both and costs no lookup; one delivered again after a crash is below, and is looked up. That mark
  is a group commit (bot/store.py) and is not waited for before the update counts as finished: the mark only
  matters for an update Telegram delivers again, i.e. one the bot crashed before confirming, and a crash
  between the answer and the mark repeats that one answer (at least once, never lost) exactly as when the
  mark came first. A store that is down turns the check off (answers go on).

Webhook mode gets the order and the skip but not the window: PTB acknowledges a webhook call as soon as it is
queued, so there Telegram does not deliver again what a crash interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
from collections.abc import Awaitable, Iterable
from http import HTTPStatus
from typing import Any

from telegram import Update
from telegram._utils.types import JSONDict
from telegram.ext import Application, BaseUpdateProcessor
from telegram.request import BaseRequest, RequestData
from telegram.request._requestparameter import RequestParameter

from bot.session import STORE_KEY
from bot.store import SessionStore, StoreUnavailable

logger = logging.getLogger(__name__)

AnyApplication = Application[Any, Any, Any, Any, Any, Any]
_RECHECK_SECONDS = 1.0
# While every update in hand is slow, a poll still goes out this often to let other chats' questions in. It is
# also how long a question can wait behind one slow answer: at 0.1 s the paced bench's p99 was 72-78 ms, at
# 0.04 s 41 ms (0.02 s: 33-34 ms, at the cost of up to 50 polls a second behind a send held by flood control).
STUCK_POLL_SECONDS = 0.04
# Updates handled at once; Telegram hands at most 100 from the offset, a webhook has no such bound.
MAX_CONCURRENT_UPDATES = 256

# An update still in hand this long is parked: kept in the store (bot/store.py) and confirmed to Telegram
# before it is answered, so polls stop getting it, and every update after it, back again. On the paced bench
# answers take 14-35 ms from arrival to reply (p50-p99): at 0.1 s, ~3x that p99, parking (one store commit,
# ~1 ms of CPU) is for updates held up by something else (a send held by flood control, a Hub lookup, a long
# queue), and a young update's repeats last at most this long plus one STUCK_POLL_SECONDS.
PARK_SECONDS = 0.1
OrderKey = tuple[str, int]
POLL_WINDOW_KEY = "poll_window"  # bot_data: the Application's PollWindow (whether anything is still in hand)
_NO_BOUND = 2**63  # above any update id: every update looked up


class PollWindow:
    """The updates fetched and not yet confirmed to Telegram, which of them are still being handled, and
    which of those are parked (kept in the store, so the offset may pass them)."""

    def __init__(self) -> None:
        self._unconfirmed: set[int] = set()  # fetched, not yet below an offset sent (handled or not)
        self._in_hand: dict[int, JSONDict] = {}  # fetched, handlers not finished: the update as it came
        self._holding: set[int] = set()  # in hand and not parked: these keep the offset down
        self._finished_since_poll = False
        self._changed = asyncio.Event()

    @property
    def in_hand(self) -> frozenset[int]:
        return frozenset(self._in_hand)

    @property
    def holding(self) -> bool:
        """Whether an update in hand and not parked keeps the offset down."""
        return bool(self._holding)

    def holds(self, update_id: int) -> bool:
        return update_id in self._holding

    def raw(self, update_id: int) -> JSONDict | None:
        """An update in hand as Telegram sent it (what parking keeps), None once it finished."""
        return self._in_hand.get(update_id)

    def offset(self, requested: int) -> int:
        """The offset a poll may carry: PTB's (one above the newest update it got), but never above an update
        still in hand and not parked, so the poll confirms only updates handled or kept in the store."""
        return min(requested, *self._holding) if self._holding else requested

    def may_poll(self) -> bool:
        """Whether a poll now can bring news: nothing holding the offset down (a long poll), or an update
        finished or was parked since the last poll (the offset can go up)."""
        return not self._holding or self._finished_since_poll

    def park(self, update_id: int) -> None:
        """This update in hand is kept in the store now: the next poll may confirm it, answered or not. It is
        news for the polls only when it was the lowest holding the offset down (the offset can go up now):
        any other's park leaves the offset where it was, and a poll for it would bring the same back."""
        if update_id in self._holding:
            lowest = update_id == min(self._holding)
            self._holding.discard(update_id)
            if lowest:
                self._finished_since_poll = True
                self._changed.set()

    async def wait_for_news(self, seconds: float) -> None:
        """Until an update finishes, or `seconds` pass."""
        self._changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), seconds)

    def sent(self, offset: int) -> None:
        """A poll carrying `offset` reached Telegram: every update below it is confirmed, never sent again."""
        self._finished_since_poll = False
        if offset > 0:
            self._unconfirmed = {u for u in self._unconfirmed if u >= offset}

    def take_new(self, updates: Iterable[tuple[int, JSONDict]]) -> list[int]:
        """Of the (id, update) a poll returned, the ids not fetched before (now in hand), in order."""
        new = []
        for update_id, update in updates:
            if update_id not in self._unconfirmed:
                new.append(update_id)
                self._unconfirmed.add(update_id)
                self._in_hand[update_id] = update
                self._holding.add(update_id)
        return new

    def finish(self, update_id: int) -> None:
        """This update's handlers ran (or it was skipped): the next poll may confirm it."""
        if self._in_hand.pop(update_id, None) is not None:
            self._holding.discard(update_id)
            self._finished_since_poll = True
            self._changed.set()


class ConfirmAfterHandling(BaseRequest):
    """The getUpdates transport: polls that confirm only handled updates and hand PTB each update once."""

    def __init__(self, inner: BaseRequest, window: PollWindow | None = None) -> None:
        self.inner = inner
        self.window = window or PollWindow()
        self._app: AnyApplication | None = None
        # the last answer read here, as PTB is to parse it next (the payload handed on, and its JSON)
        self._parsed: tuple[bytes, JSONDict] | None = None

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
        if url.rsplit("/", 1)[-1].lower() != "getupdates" or request_data is None:
            return await self.inner.do_request(
                url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
            )
        await self._until_worth_polling()
        requested = request_data.parameters.get("offset")
        offset = self.window.offset(requested) if isinstance(requested, int) else None
        if offset is not None and offset != requested:
            request_data = _with_offset(request_data, offset)
        status, payload = await self.inner.do_request(
            url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
        )
        if offset is not None and status == HTTPStatus.OK:  # an error answer may not have confirmed anything
            self.window.sent(offset)
        return status, self._only_new(status, payload)

    async def _until_worth_polling(self) -> None:
        """Hold the poll until it can bring news. PTB's last poll on stopping (the updater no longer running)
        first waits until the Application handled everything it queued, so it confirms all of that; an update
        PTB ignored because it came as the updater stopped stays in hand, unconfirmed, delivered again."""
        app = self._app
        window = self.window
        if app is not None and app.updater is not None and not app.updater.running:
            await _all_queued_handled(app)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STUCK_POLL_SECONDS
        while app is not None and app.running and window.holding:
            remaining = deadline - loop.time()
            if window.may_poll() or remaining <= 0:
                return
            await window.wait_for_news(remaining)

    def _only_new(self, status: int, payload: bytes) -> bytes:
        """The getUpdates answer without the updates PTB already has (they came again because the offset
        stayed below an update in hand). It is read once: PTB's parse of the payload handed on
        (`parse_json_payload`) gets the answer read here, without those updates."""
        self._parsed = None
        if status != HTTPStatus.OK:
            return payload
        try:
            answer = json.loads(payload)
            updates = answer["result"]
            ids = [int(update["update_id"]) for update in updates]
        except (ValueError, TypeError, KeyError):
            return payload  # not an answer we understand: PTB reports it
        new = set(self.window.take_new(zip(ids, updates, strict=True)))
        if len(new) != len(ids):
            answer["result"] = [
                update for update, update_id in zip(updates, ids, strict=True) if update_id in new
            ]
        self._parsed = (payload, answer)
        return payload

    def parse_json_payload(self, payload: bytes) -> JSONDict:  # type: ignore[override]  # PTB: static
        """PTB parses the payload do_request returned: the answer read there (once), or BaseRequest's parse
        for any other payload."""
        parsed, self._parsed = self._parsed, None
        if parsed is not None and parsed[0] is payload:
            return parsed[1]
        return BaseRequest.parse_json_payload(payload)


async def _all_queued_handled(app: AnyApplication) -> None:
    while app.running:
        try:
            await asyncio.wait_for(app.update_queue.join(), _RECHECK_SECONDS)
        except TimeoutError:
            continue  # still handling; re-check that the Application was not stopped meanwhile
        return


def _with_offset(request_data: RequestData, offset: int) -> RequestData:
    """The getUpdates request as PTB built it, with another offset: its other parameters as PTB made them
    (building `allowed_updates` again, every update type one by one, was most of a lowered poll's cost).
    RequestParameter lives in a private module of PTB (pinned to one version in pyproject.toml), as do
    RequestData's parameters; RequestData itself is final."""
    parameters = [p for p in request_data._parameters if p.name != "offset"]
    return RequestData([*parameters, RequestParameter.from_input("offset", offset)])


class ChatOrder:
    """Per-chat and per-user order among concurrent updates: each update waits for the earlier ones that share
    its chat or its user, and nothing else. Taken in arrival order, before any await."""

    def __init__(self) -> None:
        self._last: dict[OrderKey, asyncio.Future[None]] = {}

    def enter(self, keys: tuple[OrderKey, ...]) -> tuple[list[asyncio.Future[None]], asyncio.Future[None]]:
        """The earlier updates to wait for, and this update's own turn (to be passed to `leave`)."""
        before = [self._last[key] for key in keys if key in self._last]
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        for key in keys:
            self._last[key] = mine
        return before, mine

    def leave(self, keys: tuple[OrderKey, ...], mine: asyncio.Future[None]) -> None:
        if not mine.done():
            mine.set_result(None)
        for key in keys:
            if self._last.get(key) is mine:
                del self._last[key]

    @property
    def busy_keys(self) -> int:
        return len(self._last)


def order_keys(update: object) -> tuple[OrderKey, ...]:
    """What an update must keep its order with: its chat and its user (an inline query has only a user)."""
    if not isinstance(update, Update):
        return ()
    chat = update.effective_chat
    user = update.effective_user
    keys: list[OrderKey] = []
    if chat is not None:
        keys.append(("chat", chat.id))
    if user is not None:
        keys.append(("user", user.id))
    return tuple(keys)


class OnceOnlyUpdates(BaseUpdateProcessor):
    """Updates of different chats at once, each chat's and user's in order; an update the store already
    handled is skipped, a new one remembered."""

    def __init__(self, window: PollWindow | None = None) -> None:
        super().__init__(max_concurrent_updates=MAX_CONCURRENT_UPDATES)
        self._app: AnyApplication | None = None
        self._window = window
        self._order = ChatOrder()
        self._in_flight: set[int] = set()  # ids being handled here, until marked (a webhook's repeat)
        self._parking: set[int] = set()  # ids in hand long enough to be parked (bot/store.py), being or done
        self._park_tasks: set[asyncio.Task[None]] = set()  # parks under way (held: the loop keeps weak refs)
        self._seen_below = -1  # every update id this process took in is at most this
        # the store's newest handled id at the start, read by the first update
        self._stored_below: asyncio.Future[int | None] | None = None

    def watch(self, app: AnyApplication) -> None:
        self._app = app

    async def initialize(self) -> None:
        """Nothing to open."""

    async def shutdown(self) -> None:
        """Nothing to close."""

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = self._key(update)
        if key is not None and key[1] in self._in_flight:
            logger.info("update %d is being handled already; not answered again", key[1])
            _close(coroutine)
            return
        seen_below = self._seen_below
        if key is not None:
            self._in_flight.add(key[1])
            self._seen_below = max(seen_below, key[1])
        keys = order_keys(update)
        before, mine = self._order.enter(keys)  # before any await: arrival order
        store = self._store()
        park_timer = self._park_later(key, update, store)
        try:
            try:
                if before:
                    await asyncio.wait(before)
                lookup = store
                if (
                    key is not None
                    and store is not None
                    and key[1] > seen_below
                    and key[1] > await self._stored_newest(store, key[0])
                ):
                    lookup = None  # cannot be among the handled (module docstring): not looked up
                answered = await self._answer_unless_handled(coroutine, key, lookup)
            finally:
                if park_timer is not None:
                    park_timer.cancel()
                self._order.leave(keys, mine)
                if self._window is not None and isinstance(update, Update):
                    self._window.finish(update.update_id)
            parked = key is not None and key[1] in self._parking
            if key is not None and store is not None and (parked or (answered and store.healthy)):
                # A store that is down is not asked (a lock would add a wait to every update); it logs its
                # outage once, and until it is back a crash may repeat an answer. A parked update's mark
                # unparks it (bot/store.py), so it is made at once, and whether or not it was answered here
                # (skipped: handled before a restart, its row left by a crash): else it comes back on start.
                with contextlib.suppress(StoreUnavailable):
                    await store.mark_handled(*key, at_once=parked)
        finally:
            if key is not None:
                self._in_flight.discard(key[1])
                self._parking.discard(key[1])

    def replaying(self, update_id: int) -> None:
        """This update comes from the store's parked ones (replay_parked): its mark unparks it, at once."""
        self._parking.add(update_id)

    def _park_later(
        self, key: tuple[int, int] | None, update: object, store: SessionStore | None
    ) -> asyncio.TimerHandle | None:
        """An update polled in is parked if it is still in hand after PARK_SECONDS (module docstring)."""
        window = self._window
        if key is None or store is None or window is None or not window.holds(key[1]):
            return None
        return asyncio.get_running_loop().call_later(PARK_SECONDS, self._start_parking, key, update, store)

    def _start_parking(self, key: tuple[int, int], update: object, store: SessionStore) -> None:
        if self._window is None or not self._window.holds(key[1]) or not store.healthy:
            return
        self._parking.add(key[1])
        task = asyncio.ensure_future(self._park(key, update, store))
        self._park_tasks.add(task)
        task.add_done_callback(self._park_tasks.discard)

    async def _park(self, key: tuple[int, int], update: object, store: SessionStore) -> None:
        """Keep the update in the store, then let the polls confirm it (PollWindow.park). It may finish
        meanwhile: the park was queued before its mark, and a park after a mark parks nothing."""
        window = self._window
        raw = window.raw(key[1]) if window is not None else None
        if window is None or raw is None:
            return
        user = update.effective_user if isinstance(update, Update) else None
        payload = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
        try:
            parked = await store.park_update(*key, user.id if user is not None else None, payload)
        except StoreUnavailable:
            return  # not parked: it keeps the offset down until answered, as before parking existed
        if parked:
            window.park(key[1])

    @staticmethod
    async def _answer_unless_handled(
        coroutine: Awaitable[Any], key: tuple[int, int] | None, store: SessionStore | None
    ) -> bool:
        """Run the handlers unless the store remembers this update handled; whether they ran."""
        if key is not None and store is not None and await _was_handled(store, *key):
            logger.info("update %d was handled before a restart; not answered again", key[1])
            _close(coroutine)
            return False
        await coroutine
        return True

    async def _stored_newest(self, store: SessionStore, bot_id: int) -> int:
        """The newest update id the store held as handled when first asked (-1: none). Asked once, shared by
        the updates that arrive meanwhile; a store that cannot say is asked again by the next update (and
        every update is looked up until it can: an unbounded answer)."""
        if self._stored_below is None:
            self._stored_below = asyncio.ensure_future(_newest_handled(store, bot_id))
        newest = await asyncio.shield(self._stored_below)
        if newest is None:
            self._stored_below = None
            return _NO_BOUND
        return newest

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


async def replay_parked(app: AnyApplication) -> int:
    """Queue the updates parked before a restart (and not handled since), oldest first, ahead of any new
    update (call before polling starts); how many. A parked update was confirmed to Telegram (or will be
    delivered again too: then the copy is skipped, as any update handled twice would be), so the store is
    the only place it is kept."""
    store = app.bot_data.get(STORE_KEY)
    if not isinstance(store, SessionStore):
        return 0
    try:
        parked = await store.parked_updates(app.bot.id)
    except StoreUnavailable as error:
        logger.error("updates parked before the restart cannot be read (%s): not answered now", error)
        return 0
    queued = 0
    for update_id, payload in parked:
        try:
            update = Update.de_json(json.loads(payload), app.bot)
        except (ValueError, TypeError, KeyError) as error:
            logger.warning("parked update %d cannot be read (%s); not answered", update_id, error)
            continue
        if isinstance(app.update_processor, OnceOnlyUpdates):
            app.update_processor.replaying(update_id)
        await app.update_queue.put(update)
        queued += 1
    if queued:
        logger.info("answering %d updates parked before the restart", queued)
    return queued


def _close(coroutine: Awaitable[Any]) -> None:
    if inspect.iscoroutine(coroutine):
        coroutine.close()


async def _newest_handled(store: SessionStore, bot_id: int) -> int | None:
    """The store's newest handled id (-1: none); None when the store cannot say."""
    try:
        newest = await store.newest_handled(bot_id)
    except StoreUnavailable:
        return None
    return -1 if newest is None else newest


async def _was_handled(store: SessionStore, bot_id: int, update_id: int) -> bool:
    try:
        return await store.was_handled(bot_id, update_id)
    except StoreUnavailable:
        return False
