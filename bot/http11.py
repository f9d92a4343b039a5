"""A small HTTP/1.1 client for the Bot API: keep-alive connections over asyncio streams, nothing else.

Why not httpx for every call: on the paced load benchmark (benchmarks/fresh.py) one Bot API call through
httpx → httpcore → h11 → anyio cost ~2.9 ms of CPU (sequential; ~3.9 ms with a few calls in flight, since
httpcore checks every pooled connection on each request and each response), the same call over a raw
asyncio stream ~0.3 ms; a reply is one sendMessage and a share of a getUpdates. The Bot API needs little of
HTTP: POST with a JSON or form body to one host, a JSON answer with Content-Length (chunked is read too).

What it keeps from httpx, so bot/transport.py's retry rules read the same: its exception classes, raised in
the same situations: `ConnectError` / `ConnectTimeout` (never connected), `PoolTimeout` (no free connection
in time), `WriteError` / `WriteTimeout` (the request was not completely written), `ReadTimeout`, `ReadError`
and `RemoteProtocolError` (written, the answer missing or broken: Telegram may have executed it). TLS is
verified against certifi's bundle, as httpx does. An idle connection the server closed is seen closed by the
event loop before it is reused (no request is written into a dead connection it knows of); idle ones expire
after `keepalive_expiry` seconds, as in httpx; and a 5xx answer that closes its connection retires the idle
ones beside it (`_drop_idle`).

bot/transport.py uses it only where httpx would add nothing: no proxy (neither given nor in the environment)
and no custom httpx transport (the tests' mock transports keep going through httpx).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import certifi
import httpx

KEEPALIVE_EXPIRY = 5.0  # httpx's default
GATEWAY_FAILURE = 500  # an answer at or above it that closes its connection retires the idle ones too
MAX_HEADER_BYTES = 64 * 1024


@dataclass(frozen=True)
class Timeouts:
    """Seconds for each phase (None: no limit), as httpx.Timeout names them."""

    connect: float | None
    read: float | None
    write: float | None
    pool: float | None


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    idle_since: float = field(default_factory=time.monotonic)
    used: bool = False  # a request went over it before (a failure without an answer may be a stale close)

    def usable(self, now: float, expiry: float) -> bool:
        return (
            not self.writer.is_closing()
            and not self.reader.at_eof()
            and self.reader.exception() is None
            and now - self.idle_since < expiry
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


class Http11Pool:
    """Keep-alive connections to one origin at most `max_connections` at a time."""

    def __init__(
        self,
        origin: str,
        *,
        max_connections: int,
        keepalive_expiry: float = KEEPALIVE_EXPIRY,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) origin: {origin!r}")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        default_port = 443 if parts.scheme == "https" else 80
        host_header = f"[{self.host}]" if ":" in self.host else self.host
        self._host_header = host_header if self.port == default_port else f"{host_header}:{self.port}"
        self._ssl = (ssl_context or default_ssl_context()) if parts.scheme == "https" else None
        self._idle: deque[_Connection] = deque()
        self._slots = asyncio.Semaphore(max_connections)
        self._expiry = keepalive_expiry
        self._closed = False

    def serves(self, url: str) -> bool:
        parts = urlsplit(url)
        return (
            parts.scheme == self.scheme
            and parts.hostname == self.host
            and (parts.port or (443 if parts.scheme == "https" else 80)) == self.port
        )

    async def request(
        self, method: str, url: str, headers: dict[str, str], body: bytes, timeouts: Timeouts
    ) -> tuple[int, bytes]:
        """(status, body) of one request; httpx's exceptions on failure (module docstring)."""
        if self._closed:
            raise RuntimeError("the HTTP pool is closed")
        parts = urlsplit(url)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        head = [f"{method} {target} HTTP/1.1", f"Host: {self._host_header}"]
        head.extend(f"{name}: {value}" for name, value in headers.items())
        head.append(f"Content-Length: {len(body)}")
        payload = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        if self._slots.locked():
            try:
                async with asyncio.timeout(timeouts.pool):
                    await self._slots.acquire()
            except TimeoutError as error:
                raise httpx.PoolTimeout("no free connection in the pool") from error
        else:
            await self._slots.acquire()  # free: taken at once
        try:
            connection = await self._connection(timeouts.connect)
            try:
                status, answer, keep = await self._exchange(connection, payload, timeouts)
            except BaseException:
                connection.close()  # half a request or half an answer: the connection is unusable
                raise
            if keep and not self._closed:
                connection.idle_since = time.monotonic()
                connection.used = True
                self._idle.append(connection)
            else:
                connection.close()
                if status >= GATEWAY_FAILURE:
                    self._drop_idle()
            return status, answer
        finally:
            self._slots.release()

    def _drop_idle(self) -> None:
        """A server error that closed its connection (a gateway whose backend went away) says the same of
        the connections that were idle beside it: each would take a request only to answer it the same way,
        and the caller's retries would be spent on them one by one (bot/transport.py allows four). So they
        are closed, and the retry goes out on a new connection, to whatever now answers there."""
        while self._idle:
            self._idle.popleft().close()

    async def aclose(self) -> None:
        self._closed = True
        while self._idle:
            connection = self._idle.popleft()
            connection.close()
            with contextlib.suppress(Exception):
                await connection.writer.wait_closed()

    async def _connection(self, connect_timeout: float | None) -> _Connection:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()  # the most recently used: the likeliest still open
            if connection.usable(now, self._expiry):
                return connection
            connection.close()
        try:
            async with asyncio.timeout(connect_timeout):
                reader, writer = await asyncio.open_connection(
                    self.host,
                    self.port,
                    ssl=self._ssl,
                    server_hostname=self.host if self._ssl is not None else None,
                    limit=MAX_HEADER_BYTES,
                )
        except TimeoutError as error:
            raise httpx.ConnectTimeout(f"connecting to {self.host}:{self.port} timed out") from error
        except (OSError, ssl.SSLError) as error:
            raise httpx.ConnectError(str(error) or type(error).__name__) from error
        return _Connection(reader, writer)

    async def _exchange(
        self, connection: _Connection, payload: bytes, timeouts: Timeouts
    ) -> tuple[int, bytes, bool]:
        writer, reader = connection.writer, connection.reader
        try:
            writer.write(payload)
            async with asyncio.timeout(timeouts.write):
                await writer.drain()
        except TimeoutError as error:
            raise httpx.WriteTimeout("writing the request timed out") from error
        except OSError as error:
            raise httpx.WriteError(str(error) or type(error).__name__) from error
        try:
            async with asyncio.timeout(timeouts.read):
                return await _read_response(reader)
        except TimeoutError as error:
            raise httpx.ReadTimeout("reading the answer timed out") from error
        except asyncio.IncompleteReadError as error:
            if not error.partial and connection.used:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.") from error
            raise httpx.RemoteProtocolError("the answer was cut short") from error
        except asyncio.LimitOverrunError as error:
            raise httpx.RemoteProtocolError("the answer's headers are too long") from error
        except (OSError, ssl.SSLError) as error:
            raise httpx.ReadError(str(error) or type(error).__name__) from error


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """(status, body, whether the connection may be reused) of one answer."""
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        status_text = rest.partition(" ")[0]
        if not version.startswith("HTTP/1.") or not status_text.isdigit():
            raise httpx.RemoteProtocolError(f"not an HTTP/1.x answer: {lines[0][:80]!r}")
        status = int(status_text)
        if status >= 200 or status == 101:  # 1xx (100 Continue, 103 Early Hints) come before the answer
            break
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
    keep = version == "HTTP/1.1" and "close" not in fields.get("connection", "").lower()
    if status in (204, 304):
        return status, b"", keep
    if "chunked" in fields.get("transfer-encoding", "").lower():
        return status, await _read_chunked(reader), keep
    length = fields.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise httpx.RemoteProtocolError(f"bad Content-Length {length!r}")
        return status, await reader.readexactly(int(length)), keep
    return status, await reader.read(-1), False  # the body runs to the connection's close


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size_text = size_line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError as error:
            raise httpx.RemoteProtocolError(f"bad chunk size {size_text[:20]!r}") from error
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, then the blank line
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


_default_context: list[ssl.SSLContext] = []


def default_ssl_context() -> ssl.SSLContext:
    """Certificates verified against certifi's bundle (what httpx verifies with), made once."""
    if not _default_context:
        _default_context.append(ssl.create_default_context(cafile=certifi.where()))
    return _default_context[0]
