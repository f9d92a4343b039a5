"""HTTP to the Bot API with retries that never send an answer twice, and lose none that they need not.

Flood control (429 with retry_after) is PTB's AIORateLimiter's job; this layer retries what it cannot,
and only where a retry is safe:
- the request provably never reached Telegram (connection refused or reset while connecting or writing,
  connect/write/pool timeout): retried for every method, nothing can duplicate;
- Telegram answered 500/502/503/504: retried for every method (the gateway answered instead of the Bot API);
- the connection broke or the read timed out AFTER the request was written: Telegram may have executed it.
  Idempotent calls (reads, edits, answers to queries, settings) are retried. Sends (sendMessage, sendPhoto,
  forward, copy) are NOT: Telegram has no idempotency key, so a retry after an unclear failure is how a bot
  answers twice. A slow-but-alive Telegram is instead given a generous read timeout for sends
  (`send_read_timeout`), so it finishes rather than times out. The price: if Telegram really lost such a
  request, that one answer is lost (the error handler logs it and apologises); tests/test_hardening_faults.py
  documents both sides. `retry_unclear_sends=True` flips the choice to at-least-once.
Backoff doubles from `backoff` seconds up to `max_backoff`; `max_retries` bounds the attempts.

What carries a call is `LeanRequest` (RetryingRequest's base, and the getUpdates transport of bot/app.py):
- requests without files go as one JSON body (the Bot API takes `application/json` as well as forms), the
  same name → value pairs PTB would send as a form: form-encoding a reply (`urllib.parse.urlencode`
  percent-encodes its HTML byte by byte, every Chinese character nine bytes) was ~0.7 ms of CPU per answer,
  the JSON ~15 µs. Uploads keep PTB's multipart form, through httpx;
- over bot/http11.py's keep-alive pool (~0.3 ms of CPU per call, httpx's ~3 ms) unless httpx is needed: a
  proxy (given, or in the environment with trust_env) or custom httpx options such as a mock transport.
  Both raise httpx's exceptions in the same situations, mapped to PTB's errors as PTB maps them.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import urllib.request
from typing import Any

import httpx
from telegram._utils.defaultvalue import DefaultValue
from telegram.error import NetworkError, TimedOut
from telegram.request import HTTPXRequest, RequestData

from bot.http11 import Http11Pool, Timeouts

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({500, 502, 503, 504})
# httpx errors raised before the request was fully written: Telegram cannot have seen a complete request.
NOT_DELIVERED = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.WriteError,
    httpx.WriteTimeout,
)
_SENDING_PREFIXES = ("send", "forward", "copy")
DEFAULT_SEND_READ_TIMEOUT = 30.0
# HTTPXRequest's own default pool size (256 in PTB 22.8), for a LeanRequest made without one.
_PTB_POOL_SIZE: int = inspect.signature(HTTPXRequest.__init__).parameters["connection_pool_size"].default
_POOL_TIMEOUT = (  # PTB's words
    "Pool timeout: All connections in the connection pool are occupied. Request was *not* sent to "
    "Telegram. Consider adjusting the connection pool size or the pool timeout."
)
_JSON_HEADERS = {"User-Agent": HTTPXRequest.USER_AGENT, "Content-Type": "application/json"}


def is_sending(endpoint: str) -> bool:
    """Methods that create a new message: repeating one after an unclear failure may duplicate it."""
    return endpoint.lower().startswith(_SENDING_PREFIXES)


def not_delivered(error: BaseException) -> bool:
    """Whether a transport error proves the request never reached Telegram (so any retry is safe)."""
    return isinstance(error.__cause__, NOT_DELIVERED)


class LeanRequest(HTTPXRequest):
    """HTTPXRequest whose calls without files go as JSON over bot/http11.py where httpx adds nothing (see
    the module docstring); anything else is HTTPXRequest's own."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._pool_size = int(kwargs.get("connection_pool_size", _PTB_POOL_SIZE))
        self._lean = _lean_possible(kwargs)
        self._pools: list[Http11Pool] = []

    async def shutdown(self) -> None:
        pools, self._pools = self._pools, []
        for pool in pools:
            await pool.aclose()
        await super().shutdown()

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
        if request_data is not None and request_data.contains_files:
            return await super().do_request(
                url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
            )
        client = self._client
        if client.is_closed:
            raise RuntimeError("This HTTPXRequest is not initialized!")
        defaults = client.timeout
        timeouts = Timeouts(
            connect=defaults.connect if isinstance(connect_timeout, DefaultValue) else connect_timeout,
            read=defaults.read if isinstance(read_timeout, DefaultValue) else read_timeout,
            write=defaults.write if isinstance(write_timeout, DefaultValue) else write_timeout,
            pool=defaults.pool if isinstance(pool_timeout, DefaultValue) else pool_timeout,
        )
        body = request_data.json_payload if request_data is not None else b""
        try:
            if self._lean:
                return await self._pool_for(url).request(method, url, _JSON_HEADERS, body, timeouts)
            response = await client.request(
                method=method,
                url=url,
                headers=_JSON_HEADERS,
                timeout=httpx.Timeout(
                    connect=timeouts.connect, read=timeouts.read, write=timeouts.write, pool=timeouts.pool
                ),
                content=body,
            )
        except httpx.PoolTimeout as error:
            raise TimedOut(_POOL_TIMEOUT) from error
        except httpx.TimeoutException as error:
            raise TimedOut from error
        except httpx.HTTPError as error:  # the base of httpx's errors: after its timeouts
            raise NetworkError(f"httpx.{error.__class__.__name__}: {error}") from error
        return response.status_code, response.content

    def _pool_for(self, url: str) -> Http11Pool:
        for pool in self._pools:
            if pool.serves(url):
                return pool
        scheme, _, rest = url.partition("://")
        pool = Http11Pool(f"{scheme}://{rest.split('/', 1)[0]}", max_connections=self._pool_size)
        self._pools.append(pool)
        return pool


def _lean_possible(options: dict[str, Any]) -> bool:
    """Whether httpx would add nothing to a call: no proxy (given, or from the environment when httpx
    trusts it), HTTP/1.1, and no httpx options beyond trust_env (a mock transport, certificates, mounts)."""
    httpx_kwargs: dict[str, Any] = options.get("httpx_kwargs") or {}
    if options.get("proxy") is not None or options.get("socket_options") is not None:
        return False
    if options.get("http_version", "1.1") != "1.1" or set(httpx_kwargs) - {"trust_env"}:
        return False
    return not (httpx_kwargs.get("trust_env", True) and _environment_proxies())


def _environment_proxies() -> bool:
    proxies = urllib.request.getproxies()
    return any(proxies.get(scheme) for scheme in ("http", "https", "all"))


class RetryingRequest(LeanRequest):
    """HTTPXRequest that retries transient failures with exponential backoff (see the module docstring)."""

    def __init__(
        self,
        *,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        retry_unclear_sends: bool = False,
        send_read_timeout: float | None = DEFAULT_SEND_READ_TIMEOUT,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.retry_unclear_sends = retry_unclear_sends
        self.send_read_timeout = send_read_timeout

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
        # A send waits long enough for a slow Telegram to finish, since it cannot be safely repeated.
        if (
            is_sending(endpoint)
            and self.send_read_timeout is not None
            and (not isinstance(read_timeout, int | float) or read_timeout < self.send_read_timeout)
        ):
            read_timeout = self.send_read_timeout
        attempt = 0
        while True:
            try:
                status, payload = await super().do_request(
                    url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
                )
            except (TimedOut, NetworkError) as error:
                if attempt >= self.max_retries or not self.may_retry(endpoint, error):
                    if is_sending(endpoint) and not not_delivered(error):
                        logger.warning(
                            "%s may or may not have reached Telegram (%s); not repeated, so it is not sent "
                            "twice",
                            endpoint,
                            type(error.__cause__ or error).__name__,
                        )
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

    def may_retry(self, endpoint: str, error: BaseException) -> bool:
        """Safe to repeat: the request never left, or the method is idempotent (or duplicates are allowed)."""
        if not_delivered(error):
            return True
        return self.retry_unclear_sends or not is_sending(endpoint)
