"""PTB's transport answered from a FakeTelegram in this process: no sockets, same semantics."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from bot.fake_telegram.fake import FakeTelegram
from bot.fake_telegram.wire import ConnectionDroppedError


class FakeTelegramRequest(BaseRequest):
    """PTB's transport, answered from a FakeTelegram in this process: no sockets, same semantics."""

    def __init__(self, fake: FakeTelegram, *, read_timeout: float = 5.0) -> None:
        self.fake = fake
        self._read_timeout = read_timeout

    @property
    def read_timeout(self) -> float:
        return self._read_timeout

    async def initialize(self) -> None:
        """Nothing to open."""

    async def shutdown(self) -> None:
        """Nothing to close."""

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
        base, endpoint = url.rsplit("/", 1)
        token = base.rsplit("/bot", 1)[-1] if "/bot" in base else None
        params: dict[str, Any] = dict(request_data.json_parameters) if request_data else {}
        files: dict[str, tuple[str, bytes]] = {}
        if request_data is not None and request_data.contains_files:
            for name, part in request_data.multipart_data.items():
                filename, content = part[0], part[1]
                data = content if isinstance(content, bytes) else content.read()
                files[name] = (filename or name, data)
                params.pop(name, None)
        if self.fake.take_refusal():
            raise NetworkError("httpx.ConnectError: [Errno 111] Connection refused") from httpx.ConnectError(
                "[Errno 111] Connection refused"
            )
        timeout = read_timeout if isinstance(read_timeout, int | float) else self._read_timeout
        if endpoint.lower() == "getupdates":
            timeout = float(params.get("timeout", 0) or 0) + self._read_timeout
        try:
            return await asyncio.wait_for(self.fake.call(endpoint, params, files, token=token), timeout)
        except TimeoutError as err:
            raise TimedOut("Timed out") from err
        except ConnectionDroppedError as err:
            raise NetworkError(
                "httpx.RemoteProtocolError: Server disconnected without sending a response."
            ) from err
