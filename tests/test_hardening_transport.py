"""The retry policy of bot/transport.py, call by call, over httpx's mock transport (no sockets, no timing).

Retried for every method: failures that prove the request never left (connect error or timeout, pool timeout,
write error) and 5xx answers. Retried only for idempotent methods: failures after the request was written
(read timeout, connection closed without an answer), where Telegram may already have executed it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from telegram.error import NetworkError, TimedOut

from bot.transport import RetryingRequest, is_sending

URL = "http://127.0.0.1:1/bot123456789:TEST-token-for-the-fake-bot-api-00000/"
OK = b'{"ok":true,"result":true}'


def _request(failures: list[Exception | int], **options: Any) -> tuple[RetryingRequest, list[str]]:
    """A RetryingRequest whose first calls fail as listed (an exception, or an HTTP status), then succeed."""
    seen: list[str] = []
    pending = list(failures)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path.rsplit("/", 1)[-1])
        if pending:
            failure = pending.pop(0)
            if isinstance(failure, Exception):
                raise failure
            return httpx.Response(failure, content=b"<html>gateway</html>")
        return httpx.Response(200, content=OK)

    request = RetryingRequest(
        backoff=0.0, max_backoff=0.0, httpx_kwargs={"transport": httpx.MockTransport(handle)}, **options
    )
    return request, seen


async def _call(request: RetryingRequest, method: str) -> tuple[int, bytes]:
    await request.initialize()
    try:
        return await request.do_request(URL + method, "POST")
    finally:
        await request.shutdown()


NOT_SENT: list[Callable[[], Exception]] = [
    lambda: httpx.ConnectError("[Errno 111] Connection refused"),
    lambda: httpx.ConnectTimeout("connect timed out"),
    lambda: httpx.PoolTimeout("no free connection"),
    lambda: httpx.WriteError("[Errno 104] Connection reset by peer"),
]
UNCLEAR: list[Callable[[], Exception]] = [
    lambda: httpx.ReadTimeout("read timed out"),
    lambda: httpx.RemoteProtocolError("Server disconnected without sending a response."),
    lambda: httpx.ReadError("[Errno 104] Connection reset by peer"),
]


@pytest.mark.parametrize("method", ["sendMessage", "editMessageText", "answerCallbackQuery"])
@pytest.mark.parametrize("failure", NOT_SENT)
async def test_a_request_that_never_left_is_retried_for_every_method(
    method: str, failure: Callable[[], Exception]
) -> None:
    request, seen = _request([failure(), failure()])
    assert await _call(request, method) == (200, OK)
    assert seen == [method] * 3


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_server_errors_are_retried_even_for_sends(status: int) -> None:
    request, seen = _request([status])
    assert await _call(request, "sendMessage") == (200, OK)
    assert seen == ["sendMessage", "sendMessage"]


@pytest.mark.parametrize("failure", UNCLEAR)
async def test_an_unclear_send_is_not_repeated(failure: Callable[[], Exception]) -> None:
    request, seen = _request([failure()])
    with pytest.raises((TimedOut, NetworkError)):
        await _call(request, "sendMessage")
    assert seen == ["sendMessage"], "a send that may have arrived must not be sent again"


@pytest.mark.parametrize(
    "method", ["editMessageText", "answerCallbackQuery", "getChatMember", "setMyCommands"]
)
@pytest.mark.parametrize("failure", UNCLEAR)
async def test_an_unclear_idempotent_call_is_repeated(method: str, failure: Callable[[], Exception]) -> None:
    request, seen = _request([failure()])
    assert await _call(request, method) == (200, OK)
    assert seen == [method, method]


async def test_retry_unclear_sends_chooses_at_least_once() -> None:
    request, seen = _request([httpx.ReadTimeout("read timed out")], retry_unclear_sends=True)
    assert await _call(request, "sendMessage") == (200, OK)
    assert seen == ["sendMessage", "sendMessage"]


async def test_retries_are_bounded() -> None:
    request, seen = _request([502] * 10, max_retries=3)
    status, _ = await _call(request, "sendMessage")
    assert status == 502 and len(seen) == 4


async def test_sends_get_the_generous_read_timeout() -> None:
    timeouts: dict[str, float | None] = {}

    def handle(request: httpx.Request) -> httpx.Response:
        timeouts[request.url.path.rsplit("/", 1)[-1]] = request.extensions["timeout"]["read"]
        return httpx.Response(200, content=OK)

    request = RetryingRequest(
        read_timeout=5.0,
        send_read_timeout=40.0,
        httpx_kwargs={"transport": httpx.MockTransport(handle)},
    )
    await _call(request, "sendMessage")
    await _call(request, "editMessageText")
    assert timeouts == {"sendMessage": 40.0, "editMessageText": 5.0}


def test_sending_methods() -> None:
    assert all(
        is_sending(m) for m in ("sendMessage", "sendPhoto", "sendDocument", "copyMessage", "forwardMessage")
    )
    assert not any(
        is_sending(m) for m in ("editMessageText", "answerCallbackQuery", "getUpdates", "setMyCommands")
    )
