"""A loopback Bot API server for end-to-end tests: real HTTP in front of bot.fake_telegram.FakeTelegram.

The bot under test talks to it exactly as to api.telegram.org (`base_url=http://127.0.0.1:<port>/bot`): httpx,
keep-alive connections, form and multipart bodies, long-polling getUpdates. Bot API semantics and
validation live in FakeTelegram (one implementation, shared with the console chat); this module adds only
HTTP and the faults that need a socket: a dropped connection is a real closed socket, a slow answer a
real delay, a refused connection (Fault "refuse") a closed listening socket, so the client's next connection
attempt fails with ECONNREFUSED before its request leaves.

Stdlib only (`asyncio.start_server`); it runs on the test's event loop, so tests drive the fake directly.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import fcntl
import json
import socket
import termios
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from telegram import Update
from telegram.ext import Application, ContextTypes
from telegram.request import BaseRequest, HTTPXRequest

from bot.app import build_application
from bot.delivery import POLL_WINDOW_KEY, PollWindow
from bot.fake_telegram import ConnectionDroppedError, FakeTelegram, StoredMessage
from bot.settings import Settings
from bot.transport import LeanRequest, RetryingRequest

BOT_USERNAME = "GpufitTestBot"
ANN = 111  # English-speaking user, creator of GROUP
LI = 222  # Chinese-speaking user, plain member of GROUP
BOB = 333  # English-speaking user, plain member of GROUP
GROUP = -1001234567890
WAIT = 30.0  # seconds; a limit for slow machines, not an expectation


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    429: "Too Many Requests",
    502: "Bad Gateway",
}


class BotApiServer:
    """`async with BotApiServer(fake) as server:` serves `fake` on 127.0.0.1:<random port>."""

    def __init__(
        self, fake: FakeTelegram | None = None, *, host: str = "127.0.0.1", refuse_for: float = 0.1
    ) -> None:
        self.fake = fake or FakeTelegram()
        self.host = host
        self.port = 0
        self.requests = 0
        self.refused_windows = 0
        self.refuse_for = refuse_for
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.StreamWriter] = set()
        self._idle: dict[asyncio.StreamWriter, asyncio.StreamReader] = {}
        self._draining: set[asyncio.StreamWriter] = set()  # answer 502 and close (refuse_connections)
        self._reopen: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Future[None]] = set()
        self._stopped = False

    @property
    def base_url(self) -> str:
        """What `ApplicationBuilder.base_url()` takes; PTB appends the token."""
        return f"http://{self.host}:{self.port}/bot"

    async def start(self) -> BotApiServer:
        self._server = await asyncio.start_server(self._serve, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        self._stopped = True
        self.fake.release_held()
        if self._reopen is not None:
            self._reopen.cancel()
        for writer in list(self._connections):
            writer.transport.abort()
        if self._server is None:
            return
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), timeout=5)
        self._server = None

    def refuse_connections(self, answered: asyncio.StreamWriter | None = None) -> None:
        """Close the listening socket for `refuse_for` seconds, and the connections no request is on (so the
        client must connect anew and is refused): the one failure a client can prove its request never left.
        Synchronous, so no client write can slip in between the checks and the close."""
        for writer, reader in list(self._idle.items()):
            if writer is answered and writer.transport.get_write_buffer_size():
                writer.close()  # the answer is still being written: it goes out first, then the FIN
            elif writer is answered:
                with contextlib.suppress(OSError):
                    writer.get_extra_info("socket").shutdown(socket.SHUT_RDWR)
                writer.transport.abort()
            elif _nothing_pending(writer, reader):
                # A client with requests in flight on other connections may be about to write on this one:
                # cutting it could cut such a request after it left (a failure the client cannot see
                # through). Its next request is answered 502 unhandled instead, as a gateway whose backend
                # went away, and the connection closed, so the client's retry needs a new connection.
                self._draining.add(writer)
        if self._server is None or self._stopped:
            return
        self._server.close()
        self._server = None
        self.refused_windows += 1
        self._reopen = asyncio.get_running_loop().call_later(self.refuse_for, self._listen_again)

    def _listen_again(self) -> None:
        if self._stopped:
            return
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self.port))
        listener.listen(128)  # connections queue from now on, before asyncio accepts them
        self._tasks.add(asyncio.ensure_future(self._serve_on(listener)))

    async def _serve_on(self, listener: socket.socket) -> None:
        server = await asyncio.start_server(self._serve, sock=listener)
        if self._stopped:
            server.close()
        else:
            self._server = server

    async def __aenter__(self) -> BotApiServer:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        try:
            while True:
                self._idle[writer] = reader
                request = await _read_request(reader)
                self._idle.pop(writer, None)
                if request is None:
                    break
                self.requests += 1
                if writer in self._draining:
                    writer.write(_GONE)
                    await writer.drain()
                    break
                _, target, headers, body = request
                try:
                    status, payload = await self._answer(target, headers, body)
                except ConnectionDroppedError:
                    writer.transport.abort()
                    break
                # A refusal closes this connection after the answer: the answer says so (Connection: close),
                # as a server that means to close does, so the client does not reuse it (a request written
                # into it before the close reached the client would be lost without a way to tell).
                refusing = self.fake.take_refusal()
                head = (
                    f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
                    f"Server: fake-telegram\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(payload)}\r\n"
                    f"Connection: {'close' if refusing else 'keep-alive'}\r\n\r\n"
                )
                writer.write(head.encode("ascii") + payload)
                await writer.drain()
                if refusing:
                    self._idle[writer] = reader
                    self.refuse_connections(answered=writer)
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._idle.pop(writer, None)
            self._draining.discard(writer)
            self._connections.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _answer(self, target: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        parts = urlsplit(target)
        segments = [s for s in parts.path.split("/") if s]
        if len(segments) != 2 or not segments[0].startswith("bot"):
            return 404, b'{"ok":false,"error_code":404,"description":"Not Found"}'
        token, endpoint = unquote(segments[0][3:]), segments[1]
        params: dict[str, Any] = dict(parse_qsl(parts.query, keep_blank_values=True))
        files: dict[str, tuple[str, bytes]] = {}
        content_type = headers.get("content-type", "")
        if content_type.startswith("application/x-www-form-urlencoded"):
            params.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        elif content_type.startswith("application/json") and body:
            decoded = json.loads(body)
            params.update({k: v if isinstance(v, str) else json.dumps(v) for k, v in decoded.items()})
        elif content_type.startswith("multipart/form-data"):
            fields, files = _parse_multipart(content_type, body)
            params.update(fields)
        return await self.fake.call(endpoint, params, files, token=token)


_GONE_BODY = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
_GONE = (
    b"HTTP/1.1 502 Bad Gateway\r\nServer: fake-telegram\r\nContent-Type: text/html\r\n"
    + f"Content-Length: {len(_GONE_BODY)}\r\nConnection: close\r\n\r\n".encode("ascii")
    + _GONE_BODY
)


def _nothing_pending(writer: asyncio.StreamWriter, reader: asyncio.StreamReader) -> bool:
    """No byte of a next request has arrived on this connection (neither read into `reader` nor waiting in
    the kernel): closing it cannot cut a request the client already sent."""
    if getattr(reader, "_buffer", b""):
        return False
    sock = writer.get_extra_info("socket")
    if sock is None:
        return False
    pending = array.array("i", [0])
    try:
        fcntl.ioctl(sock.fileno(), termios.FIONREAD, pending)
    except OSError:
        return False
    return pending[0] == 0


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    """One HTTP/1.1 request (Content-Length or chunked body); None when the client closed the connection."""
    try:
        line = await reader.readline()
    except (ConnectionError, asyncio.IncompleteReadError):
        return None
    if not line:
        return None
    method, target, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        header = (await reader.readline()).decode("latin-1")
        if header in ("\r\n", "\n", ""):
            break
        name, _, value = header.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int((await reader.readline()).split(b";")[0].strip(), 16)
            if size == 0:
                await reader.readline()
                break
            chunks.append(await reader.readexactly(size))
            await reader.readline()
        body = b"".join(chunks)
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    return method, target, headers, body


def _parse_multipart(content_type: str, body: bytes) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        filename = part.get_filename()
        data = part.get_payload(decode=True)
        if not isinstance(name, str) or not isinstance(data, bytes):
            continue
        if filename is not None:
            files[name] = (filename, data)
        else:
            fields[name] = data.decode("utf-8")
    return fields, files


# -- driving a bot against the stand-in (used by tests/conftest.py fixtures) ------------------------------


def loopback_request(**overrides: Any) -> RetryingRequest:
    """The production transport with quick backoff, ignoring proxy settings."""
    options: dict[str, Any] = {
        "backoff": 0.05,
        "max_backoff": 0.5,
        "read_timeout": 10.0,
        "connect_timeout": 10.0,
        "pool_timeout": 10.0,
        "httpx_kwargs": {"trust_env": False},
    }
    options.update(overrides)
    return RetryingRequest(**options)


def loopback_updates_request() -> HTTPXRequest:
    """PTB's own getUpdates transport (httpx), as a bare PTB bot polls (benchmarks' echo bot)."""
    return HTTPXRequest(connection_pool_size=2, read_timeout=10.0, httpx_kwargs={"trust_env": False})


def loopback_lean_updates_request() -> LeanRequest:
    """The production getUpdates transport (bot/app.py's default_get_updates_request), ignoring proxies."""
    return LeanRequest(connection_pool_size=2, read_timeout=10.0, httpx_kwargs={"trust_env": False})


@dataclass
class BotHarness:
    """The running bot and the fake Telegram it talks to, with the users' side of a chat."""

    app: Application[Any, Any, Any, Any, Any, Any]
    fake: FakeTelegram
    errors: list[BaseException] = field(default_factory=list)

    async def say(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        *,
        reply_to: int | None = None,
        replies: int = 1,
        anonymous_admin: bool = False,
    ) -> list[StoredMessage]:
        """A user writes; wait for `replies` new bot messages in that chat and return them."""
        before = len(self.fake.bot_messages(chat_id))
        message = self.fake.send_text(
            chat_id, user_id, text, reply_to=reply_to, anonymous_admin=anonymous_admin
        )
        if replies == 0:
            return []
        await self.wait_until(
            lambda: len(self.fake.bot_messages(chat_id)) >= before + replies,
            f"{replies} bot message(s) after {message['text']!r}",
        )
        return self.fake.bot_messages(chat_id)[before:]

    async def press(
        self, chat_id: int, message_id: int, data: str, user_id: int, *, stale: bool = False
    ) -> str:
        """A user presses a button; wait until the bot answered the callback query."""
        if stale:
            query_id = self.fake.press_stale(chat_id, message_id, data, user_id)
        else:
            query_id = self.fake.press(chat_id, message_id, data, user_id)
        await self.wait_until(lambda: query_id in self.fake.callback_answers, f"answer to callback {data!r}")
        return query_id

    async def inline(self, user_id: int, query: str) -> dict[str, Any]:
        query_id = self.fake.inline_query(user_id, query)
        await self.wait_until(lambda: query_id in self.fake.inline_answers, f"inline answer to {query!r}")
        return self.fake.inline_answers[query_id]

    def settled(self) -> bool:
        """Every update Telegram holds was fetched and handled: none pending at the stand-in, none in hand.
        (An update fetched is confirmed once handled or once parked in the store, bot/delivery.py, so nothing
        pending alone does not say it was handled.)"""
        window = self.app.bot_data.get(POLL_WINDOW_KEY)
        return self.fake.pending_updates == 0 and (not isinstance(window, PollWindow) or not window.in_hand)

    async def wait_until(self, predicate: Callable[[], bool], what: str) -> None:
        await self.fake.wait_for(lambda: predicate() or bool(self.errors), within=WAIT, what=what)
        assert not self.errors, f"handler errors: {self.errors!r}"

    def buttons(self, message: StoredMessage) -> list[dict[str, Any]]:
        markup = message.reply_markup or {}
        return [button for row in markup.get("inline_keyboard", []) for button in row]


UNTHROTTLED = 1_000_000  # scripted users type faster than people; flood tests set their own limits


def start_bot(
    settings: Settings, *, throttled: bool = False, get_updates_request: BaseRequest | None = None
) -> tuple[Application[Any, Any, Any, Any, Any, Any], list[BaseException]]:
    """The production Application over loopback, with an extra error handler that records what went wrong.
    Scripted users are not throttled unless `throttled` (the settings' limits then apply)."""
    if not throttled:
        settings = settings.model_copy(update={"throttle_burst": UNTHROTTLED})
    app = build_application(
        settings,
        request=loopback_request(),
        get_updates_request=get_updates_request or loopback_lean_updates_request(),
    )
    return app, recording_errors(app)


def recording_errors(app: Application[Any, Any, Any, Any, Any, Any]) -> list[BaseException]:
    """An extra error handler that keeps every exception a handler raised (the bot's own one still runs)."""
    errors: list[BaseException] = []

    async def record(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        if context.error is not None:
            errors.append(context.error)

    app.add_error_handler(record)
    return errors


@dataclass
class InProcessBot:
    app: Application[Any, Any, Any, Any, Any, Any]
    fake: FakeTelegram
    errors: list[BaseException]

    async def process(self) -> None:
        """Feed every queued update to the Application, the way the console chat does."""
        for payload in self.fake.take_updates():
            await self.app.process_update(Update.de_json(payload, self.app.bot))
