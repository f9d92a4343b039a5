"""The real bot (`python -m bot`, polling) in a process of its own, talking to the loopback stand-in that runs
in the test's process, so a test can `kill -9` it mid-conversation and start it again on the same database.

Settings come from the environment as in production: TELEGRAM_BOT_TOKEN, TELEGRAM_API_URL (the stand-in),
GPUFIT_DB (a temporary file). Scripted users type faster than people, so the flood throttle is opened up.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from types import TracebackType

from botapi_server import WAIT, BotApiServer

REPO = Path(__file__).resolve().parents[1]


class BotProcess:
    """`async with BotProcess(server, db, log) as bot:` starts `python -m bot` and waits until it is about to
    poll (deleteWebhook comes right before the first getUpdates, which is recorded only once it returns)."""

    def __init__(self, server: BotApiServer, db_path: Path, log_path: Path) -> None:
        self.server = server
        self.db_path = db_path
        self.log_path = log_path
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> BotProcess:
        fake = self.server.fake
        starts_before = len(fake.calls_to("deleteWebhook"))
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "TELEGRAM_BOT_TOKEN": fake.token,
            "TELEGRAM_API_URL": self.server.base_url,
            "GPUFIT_DB": str(self.db_path),
            "GPUFIT_THROTTLE_BURST": "1000000",
            "GPUFIT_LOG_LEVEL": "INFO",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        with self.log_path.open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", cwd=REPO, env=env, stdout=log, stderr=log
            )
        await fake.wait_for(
            lambda: len(fake.calls_to("deleteWebhook")) > starts_before or self.exited,
            within=WAIT * 2,
            what="the bot process to start polling",
        )
        assert not self.exited, f"the bot process exited: {self.log_path.read_text()[-2000:]}"
        return self

    @property
    def exited(self) -> bool:
        return self.process is not None and self.process.returncode is not None

    async def kill(self) -> None:
        """SIGKILL: no shutdown, no last getUpdates, no store close; what was not committed is gone."""
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
            await self.process.wait()

    async def __aenter__(self) -> BotProcess:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.kill()
