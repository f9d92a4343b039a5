"""Fault injection: the entry point of every Bot API call, where scheduled or random faults strike.

See faults.py for what each kind means. A fault before handling (drop, hang, 429, 500, 502) leaves the state
untouched; one after handling (slow, drop_after, refuse) lets the call take effect first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from bot.fake_telegram.dispatch import BotApi
from bot.fake_telegram.faults import Fault
from bot.fake_telegram.state import ApiCall
from bot.fake_telegram.wire import ApiError, ConnectionDroppedError


class FaultInjection(BotApi):
    """`call` answers like BotApi unless a fault is due; release_held and take_refusal serve the transport."""

    def schedule(self, fault: Fault) -> None:
        self.faults.append(fault)

    async def call(
        self,
        method: str,
        params: Mapping[str, Any],
        files: Mapping[str, tuple[str, bytes]] | None = None,
        *,
        token: str | None = None,
    ) -> tuple[int, bytes]:
        """Answer one Bot API call: (HTTP status, JSON body). May raise ConnectionDroppedError."""
        fault = next((f for f in self.faults if f.matches(method)), None)
        if fault is None and self.random_faults is not None:
            fault = self.random_faults.draw(method)
        if fault is not None:
            fault.times -= 1
            if fault.kind == "drop":
                self._record(ApiCall(method, dict(params), 0, description="dropped before handling"))
                raise ConnectionDroppedError(method)
            if fault.kind == "hang":
                self._record(ApiCall(method, dict(params), 0, description="held, never handled"))
                await self._release_event().wait()
                raise ConnectionDroppedError(method)
            if fault.kind == "429":
                error = ApiError(
                    429,
                    f"Too Many Requests: retry after {fault.retry_after}",
                    {"retry_after": fault.retry_after},
                )
                self._record(ApiCall(method, dict(params), 429, description=error.description))
                return 429, self._error_body(error)
            if fault.kind == "500":
                error = ApiError(500, "Internal Server Error")
                self._record(ApiCall(method, dict(params), 500, description=error.description))
                return 500, self._error_body(error)
            if fault.kind == "502":
                self._record(ApiCall(method, dict(params), 502, description="Bad Gateway"))
                return 502, b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
        status, body = await self._dispatch(method, params, files or {}, token)
        if fault is not None:
            if fault.kind == "slow":
                await asyncio.sleep(fault.delay)
            elif fault.kind == "drop_after":
                raise ConnectionDroppedError(method)
            elif fault.kind == "refuse":
                self.refusals += 1
        return status, body

    def release_held(self) -> None:
        """End every call held by a "hang" fault (its connection is dropped, it is never handled)."""
        held, self._released = self._release_event(), None
        held.set()

    def take_refusal(self) -> bool:
        """Whether the transport must refuse the next connection attempt (and count it as done)."""
        if self.refusals <= 0:
            return False
        self.refusals -= 1
        return True

    def _release_event(self) -> asyncio.Event:
        if self._released is None:
            self._released = asyncio.Event()
        return self._released
