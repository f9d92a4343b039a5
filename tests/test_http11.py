"""bot/http11.py over real sockets: answers by Content-Length, chunked or to the close; keep-alive reuse;
and httpx's exception classes in the situations where httpx raises them (bot/transport.py's retry rules
read those: never sent, or sent and the answer missing)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from bot.http11 import Http11Pool, Timeouts

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
QUICK = Timeouts(connect=2.0, read=2.0, write=2.0, pool=0.2)


@contextlib.asynccontextmanager
async def serving(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
    """A server on 127.0.0.1 running `handler` per connection; yields its origin and a connection count."""
    connections: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            await handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", connections
    finally:
        server.close()
        await server.wait_closed()


async def read_request(reader: asyncio.StreamReader) -> tuple[str, bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    length = 0
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return head, await reader.readexactly(length)


def keep_alive_json(answer: bytes) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(answer), answer))
            await writer.drain()

    return handler


async def test_keep_alive_connection_is_reused_and_the_request_is_what_was_asked() -> None:
    seen: list[tuple[str, bytes]] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            seen.append(await read_request(reader))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            await writer.drain()

    async with serving(handler) as (origin, connections):
        pool = Http11Pool(origin, max_connections=4)
        for _ in range(3):
            headers = {"Content-Type": "application/json"}
            answer = await pool.request("POST", origin + "/bot1:T/sendMessage", headers, b'{"a":1}', QUICK)
            assert answer == (200, b"{}")
        await pool.aclose()
    assert len(connections) == 1
    head, body = seen[0]
    assert head.startswith("POST /bot1:T/sendMessage HTTP/1.1\r\n")
    assert "Content-Type: application/json\r\n" in head and "Content-Length: 7\r\n" in head
    assert body == b'{"a":1}'


async def test_chunked_answer_and_interim_100_continue() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(
            b"HTTP/1.1 100 Continue\r\n\r\n"
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n"
        )
        await writer.drain()
        await read_request(reader)

    async with serving(handler) as (origin, _):
        pool = Http11Pool(origin, max_connections=1)
        assert await pool.request("POST", origin + "/x", {}, b"", QUICK) == (200, b"hello, world")
        await pool.aclose()


async def test_connection_close_and_body_to_the_end() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.0 502 Bad Gateway\r\n\r\n<html>gateway</html>")
        await writer.drain()

    async with serving(handler) as (origin, connections):
        pool = Http11Pool(origin, max_connections=1)
        assert await pool.request("POST", origin + "/x", {}, b"", QUICK) == (502, b"<html>gateway</html>")
        assert await pool.request("POST", origin + "/x", {}, b"", QUICK) == (502, b"<html>gateway</html>")
        await pool.aclose()
    assert len(connections) == 2  # not kept: HTTP/1.0 without keep-alive


async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        # then closes (the server's idle timeout): the pool must open a new connection next time

    async with serving(handler) as (origin, connections):
        pool = Http11Pool(origin, max_connections=1)
        assert await pool.request("POST", origin + "/x", {}, b"", QUICK) == (200, b"ok")
        await asyncio.sleep(0.05)  # the close reaches the event loop
        assert await pool.request("POST", origin + "/x", {}, b"", QUICK) == (200, b"ok")
        await pool.aclose()
    assert len(connections) == 2


async def test_a_gateway_error_that_closes_its_connection_retires_the_idle_ones_beside_it() -> None:
    """A gateway whose backend went away answers 502 and closes, on every connection kept to it
    (tests/botapi_server.py's draining connections do so after a refused one). The idle connections beside
    the one that said so are not tried one by one (each would spend one of the caller's retries on the same
    502): the next request goes out on a new connection."""
    gone = asyncio.Event()
    served_ok: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened_before_gone = not gone.is_set()
        while True:
            await read_request(reader)
            if opened_before_gone and gone.is_set():
                writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbad")
                await writer.drain()
                return
            await asyncio.sleep(0.05)  # slow enough that the three requests below each open a connection
            served_ok.append(1)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()

    async with serving(handler) as (origin, connections):
        pool = Http11Pool(origin, max_connections=4)
        three = [pool.request("POST", origin + "/x", {}, b"", QUICK) for _ in range(3)]
        assert await asyncio.gather(*three) == [(200, b"ok")] * 3
        assert len(connections) == 3  # three idle in the pool now
        gone.set()
        assert await pool.request("POST", origin + "/x", {}, b"", QUICK) == (502, b"bad")
        assert await pool.request("POST", origin + "/x", {}, b"", QUICK) == (200, b"ok")
        await pool.aclose()
    assert len(connections) == 4  # the retry's new one; the two other idle ones were never tried


async def test_refused_connection_is_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    pool = Http11Pool(f"http://127.0.0.1:{port}", max_connections=1)
    with pytest.raises(httpx.ConnectError):
        await pool.request("POST", f"http://127.0.0.1:{port}/x", {}, b"", QUICK)


async def test_no_answer_after_the_request_is_a_protocol_error_and_a_slow_one_a_read_timeout() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(5)

    async with serving(hang_up) as (origin, _):
        pool = Http11Pool(origin, max_connections=1)
        with pytest.raises(httpx.RemoteProtocolError):
            await pool.request("POST", origin + "/x", {}, b"", QUICK)
    async with serving(slow) as (origin, _):
        pool = Http11Pool(origin, max_connections=1)
        with pytest.raises(httpx.ReadTimeout):
            await pool.request("POST", origin + "/x", {}, b"", Timeouts(2.0, 0.1, 2.0, 0.2))
        await pool.aclose()


async def test_a_full_pool_is_a_pool_timeout_and_frees_its_slot() -> None:
    release = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            await release.wait()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()

    async with serving(handler) as (origin, _):
        pool = Http11Pool(origin, max_connections=1)
        first = asyncio.ensure_future(pool.request("POST", origin + "/x", {}, b"", QUICK))
        await asyncio.sleep(0.05)
        with pytest.raises(httpx.PoolTimeout):
            await pool.request("POST", origin + "/x", {}, b"", QUICK)
        release.set()
        assert await first == (200, b"ok")
        assert await pool.request("POST", origin + "/x", {}, b"", QUICK) == (200, b"ok")
        await pool.aclose()


async def test_a_cancelled_request_does_not_leave_its_connection_in_the_pool() -> None:
    answered = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await answered.wait()

    async with serving(handler) as (origin, connections):
        pool = Http11Pool(origin, max_connections=1)
        call = asyncio.ensure_future(pool.request("POST", origin + "/x", {}, b"", QUICK))
        await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        answered.set()
    async with serving(keep_alive_json(b"{}")) as (origin2, _):
        other = Http11Pool(origin2, max_connections=1)
        assert await other.request("POST", origin2 + "/x", {}, b"", QUICK) == (200, b"{}")
        await other.aclose()
    assert len(connections) == 1
    assert not pool._idle  # the half-used connection was closed, not kept
