"""The update queue: what users did, waiting for getUpdates (or a webhook), kept until an offset confirms it.

Telegram keeps an update until a later getUpdates carries an offset above it, so an unconfirmed update is
delivered again (`confirmed_offset` and `deliveries` show what happened); a newer getUpdates ends the one
still waiting with 409; chat_member and reactions come only when allowed_updates names them.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from bot.fake_telegram.serialise import JsonWire
from bot.fake_telegram.wire import (
    JSON,
    MAX_SECRET_TOKEN,
    MAX_UPDATES_LIMIT,
    MIN_UPDATES_LIMIT,
    OPT_IN_UPDATES,
    ApiError,
    bad_request,
)

_SECRET_TOKEN = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_SECRET_TOKEN}}}")


class UpdateQueue(JsonWire):
    """getUpdates with offsets and long polling, the webhook methods, and the in-process hand-over."""

    def take_updates(self) -> list[JSON]:
        """Hand the queued updates to an in-process consumer (the console chat) instead of getUpdates."""
        taken = self._deliverable()
        self._updates = [u for u in self._updates if u not in taken]
        return taken

    @property
    def pending_updates(self) -> int:
        return len(self._updates)

    @property
    def last_update_id(self) -> int:
        """The id of the newest update still held (0 if none): what a test waits to see confirmed."""
        return self._updates[-1]["update_id"] if self._updates else 0

    async def _get_updates(self, params: JSON) -> list[JSON]:
        if self.webhook["url"]:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; use "
                "deleteWebhook to delete the webhook first",
            )
        if params.get("allowed_updates") is not None:
            self.allowed_updates = list(params["allowed_updates"]) or None
        offset = int(params.get("offset", 0) or 0)
        limit = int(params.get("limit", MAX_UPDATES_LIMIT) or MAX_UPDATES_LIMIT)
        limit = max(MIN_UPDATES_LIMIT, min(MAX_UPDATES_LIMIT, limit))
        timeout = float(params.get("timeout", 0) or 0)
        self.confirmed_offset = max(self.confirmed_offset, offset)
        if offset > 0:
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        elif offset < 0:
            self._updates = self._updates[offset:]
        self._changed_event().set()  # confirmed updates are gone: waiters on pending_updates re-check
        # A newer getUpdates ends the one still waiting, as Telegram does.
        self._poll_generation += 1
        generation = self._poll_generation
        self._update_event().set()
        deadline = time.monotonic() + timeout
        while not self._deliverable():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            event = self._update_event()
            event.clear()
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                break
            if self._poll_generation != generation:
                raise ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; make sure that only "
                    "one bot instance is running",
                )
        batch = self._deliverable()[:limit]
        for update in batch:
            self.deliveries[update["update_id"]] = self.deliveries.get(update["update_id"], 0) + 1
        self._changed_event().set()
        return batch

    def _deliverable(self) -> list[JSON]:
        allowed = set(self.allowed_updates) if self.allowed_updates else None
        out = []
        for update in self._updates:
            kind = next(k for k in update if k != "update_id")
            if (allowed is None and kind not in OPT_IN_UPDATES) or (allowed is not None and kind in allowed):
                out.append(update)
        return out

    def _enqueue(self, body: JSON) -> JSON:
        update = {"update_id": next(self._update_ids)} | body
        self._updates.append(update)
        self._update_event().set()
        self._changed_event().set()
        return update

    def _delete_webhook(self, params: JSON, files: Any) -> bool:
        self.webhook = {"url": "", "secret_token": None, "allowed_updates": None}
        if params.get("drop_pending_updates"):
            self._updates.clear()
        return True

    def _set_webhook(self, params: JSON, files: Any) -> bool:
        url = str(params.get("url", ""))
        if url and not url.startswith("https://"):
            raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        secret = params.get("secret_token")
        if secret is not None and not _SECRET_TOKEN.fullmatch(str(secret)):
            raise bad_request("bad webhook: secret token contains unallowed characters")
        self.webhook = {"url": url, "secret_token": secret, "allowed_updates": params.get("allowed_updates")}
        return True

    def _webhook_info(self, params: JSON, files: Any) -> JSON:
        return {
            "url": self.webhook["url"],
            "has_custom_certificate": False,
            "pending_update_count": len(self._updates),
        }
