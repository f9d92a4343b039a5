"""Shared fixtures: a Bot API stand-in over loopback HTTP, the real Application running against it, SQLite
paths (the server and the helpers behind these fixtures live in tests/botapi_server.py).

Fixtures (all function-scoped, no network beyond 127.0.0.1):
- `fake_telegram`: a FakeTelegram with two users and a supergroup (see the constants below).
- `botapi_server`: that fake served over HTTP on 127.0.0.1:<random port> (tests/botapi_server.py).
- `db_path`: a fresh SQLite path for the session store.
- `bot_settings`: Settings pointing at the loopback server and `db_path`.
- `running_bot`: the real Application (bot/app.py) polling the loopback server; a `BotHarness` with helpers
  to play the users (`say`, `press`, `inline`) and wait for the bot's replies; `harness.errors` collects
  exceptions that reached the error handler.
- `inprocess_app`: the same Application over FakeTelegramRequest (no sockets, no polling), for fast tests
  that feed updates with `process`.
Waits are event-driven with generous limits (30 s), never timing assertions: tests stay reliable on a busy
machine.
"""

from __future__ import annotations

# Before anything imports huggingface_hub (it reads HF_HOME once, at import) or a test reads a default path:
# every place gpufit or its libraries write per user points into one temporary sandbox, and HOME is a fake,
# empty home that must still be empty when the suite ends (`_nothing_written_outside_temp_folders`).
import os
import tempfile
from pathlib import Path

SANDBOX = Path(tempfile.mkdtemp(prefix="gpufit-tests-"))
FAKE_HOME = SANDBOX / "home"
FAKE_HOME.mkdir()
os.environ["HOME"] = str(FAKE_HOME)
for _variable in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "HF_HOME"):
    os.environ[_variable] = str(SANDBOX / _variable.lower())
os.environ.pop("HF_HUB_CACHE", None)
os.environ.pop("HUGGINGFACE_HUB_CACHE", None)

import importlib  # noqa: E402
import shutil  # noqa: E402
from collections.abc import AsyncIterator, Iterator  # noqa: E402

import pytest  # noqa: E402
from botapi_server import (  # noqa: E402
    ANN,
    BOB,
    BOT_USERNAME,
    GROUP,
    LI,
    BotApiServer,
    BotHarness,
    InProcessBot,
    recording_errors,
    start_bot,
)

from bot.app import build_application, running  # noqa: E402
from bot.fake_telegram import FakeTelegram, FakeTelegramRequest  # noqa: E402
from bot.settings import Settings  # noqa: E402

# No test reaches the real Hugging Face Hub: lookups built from the environment answer from their cache or
# say they are offline; the lookup tests pass their own settings, pointed at the loopback stand-in
# (tests/hub_server.py). huggingface_hub reads HF_HUB_OFFLINE once, at import: it is imported before the
# variable is set, so its own offline switch stays off and gpufit's settings decide. (bot/hub/lookup.py
# imports these only on a process's first lookup; here they are imported now, as that lookup would find them.)
for _module in ("huggingface_hub", "huggingface_hub.constants", "huggingface_hub.hf_api", "httpx2"):
    importlib.import_module(_module)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"


@pytest.fixture(scope="session", autouse=True)
def _nothing_written_outside_temp_folders() -> Iterator[None]:
    """The suite writes only to temporary folders: HOME (a fake) is still empty at the end. (The user's real
    home is not compared: other processes of this user may write there while the suite runs.)"""
    yield
    written = sorted(str(p.relative_to(FAKE_HOME)) for p in FAKE_HOME.rglob("*"))
    shutil.rmtree(SANDBOX, ignore_errors=True)
    assert not written, f"the tests wrote into HOME: {written[:10]}"


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy in the environment must not capture 127.0.0.1 (httpx honours HTTP(S)_PROXY)."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


@pytest.fixture(autouse=True)
def _no_settings_from_the_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's GPUFIT_* / TELEGRAM_* variables must not change what the tests see."""
    import os

    for name in list(os.environ):
        if name.upper().startswith(("GPUFIT_", "TELEGRAM_")):
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _fresh_answer_caches() -> None:
    """bot.answer caches its pure answers; a test that monkeypatches their inputs must not see an old one."""
    from bot.answer import service
    from core import assessment
    from core.advisor import fit_fixes, plan_search

    for cached in (
        service._answer_text,
        service._answer_query,
        service._parse,
        plan_search._plans,
        fit_fixes._fixes,
        assessment._slot,
    ):
        cached.cache_clear()


@pytest.fixture
def fake_telegram() -> FakeTelegram:
    fake = FakeTelegram(bot_username=BOT_USERNAME)
    fake.add_user(ANN, "Ann", username="ann", language_code="en")
    fake.add_user(LI, "Li", username="li", language_code="zh-hans")
    fake.add_user(BOB, "Bob", language_code="en")
    fake.add_group(GROUP, "GPU team", creator=ANN)
    return fake


@pytest.fixture
async def botapi_server(fake_telegram: FakeTelegram) -> AsyncIterator[BotApiServer]:
    async with BotApiServer(fake_telegram) as server:
        yield server


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "gpufit.sqlite3"


@pytest.fixture
def bot_settings(botapi_server: BotApiServer, db_path: Path) -> Settings:
    return Settings(token=botapi_server.fake.token, api_url=botapi_server.base_url, db_path=db_path)


@pytest.fixture
async def running_bot(bot_settings: Settings, botapi_server: BotApiServer) -> AsyncIterator[BotHarness]:
    app, errors = start_bot(bot_settings)
    async with running(app, poll_timeout=2):
        yield BotHarness(app, botapi_server.fake, errors)


@pytest.fixture
async def inprocess_app(fake_telegram: FakeTelegram, db_path: Path) -> AsyncIterator[InProcessBot]:
    settings = Settings(token=fake_telegram.token, db_path=db_path)
    app = build_application(
        settings,
        request=FakeTelegramRequest(fake_telegram),
        get_updates_request=FakeTelegramRequest(fake_telegram),
    )
    errors = recording_errors(app)
    async with running(app, polling=False):
        yield InProcessBot(app, fake_telegram, errors)
