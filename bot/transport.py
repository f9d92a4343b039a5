"""HTTP to the Bot API with retries, so a flaky network or a Telegram 5xx does not lose an answer.

Flood control (429 with retry_after) is PTB's AIORateLimiter's job; this layer retries what it cannot:
- the request never left (connect error, connect or pool timeout): always retried, nothing can duplicate;
- Telegram answered 500/502/503/504: retried (the gateway did not hand the call to the Bot API);
- the connection broke or timed out after the request was written: the call may have been executed.
  Reads, edits, answers to queries and settings are idempotent and retried. Sends (sendMessage, sendPhoto…)
  are retried too, deliberately: Telegram has no idempotency key, so the choice is between a rare duplicate
  answer and a lost one, and a duplicate is the lesser harm for a Q&A bot (`retry_sends=False` flips it).
  A retried edit that had already landed comes back as "message is not modified", which the bot ignores.
Backoff doubles from `backoff` seconds up to `max_backoff`; `max_retries` bounds the attempts.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
from telegram.error import NetworkError, TimedOut
from telegram.request import HTTPXRequest, RequestData

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({500, 502, 503, 504})
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_SENDING_PREFIXES = ("send", "forward", "copy")


def is_sending(endpoint: str) -> bool:
    """Methods that create a new message: repeating one after an unclear failure may duplicate it."""
    return endpoint.lower().startswith(_SENDING_PREFIXES)


class RetryingRequest(HTTPXRequest):
    """HTTPXRequest that retries transient failures with exponential backoff (see the module docstring)."""

    def __init__(
        self,
        *,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        retry_sends: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.retry_sends = retry_sends

    async def do_request(  # noqa: PLR0917 (PTB's signature)
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = HTTPXRequest.DEFAULT_NONE,
        write_timeout: Any = HTTPXRequest.DEFAULT_NONE,
        connect_timeout: Any = HTTPXRequest.DEFAULT_NONE,
        pool_timeout: Any = HTTPXRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        endpoint = url.rsplit("/", 1)[-1]
        attempt = 0
        while True:
            try:
                status, payload = await super().do_request(
                    url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
                )
            except (TimedOut, NetworkError) as error:
                if attempt >= self.max_retries or not self._may_retry(endpoint, error):
                    raise
                reason = f"{type(error).__name__}: {error.message}"
            else:
                if status not in RETRY_STATUSES or attempt >= self.max_retries:
                    return status, payload
                reason = f"HTTP {status}"
            attempt += 1
            delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
            logger.warning(
                "%s failed (%s); retry %d/%d in %.1fs", endpoint, reason, attempt, self.max_retries, delay
            )
            await asyncio.sleep(delay)

    def _may_retry(self, endpoint: str, error: Exception) -> bool:
        if isinstance(error.__cause__, _NOT_SENT):
            return True
        return self.retry_sends or not is_sending(endpoint)
