"""A bot that has just started has what answers need already loaded (bot/warm.py, called from post_init).

The test first forgets everything this process loaded (every unbounded cache in core and bot: the data
loaders, the parser's name tables, the Jinja environment and its compiled templates, and the warm start
itself), as in a process just started. Then the console chat's real Application starts, and a user asks
questions of every kind and presses buttons; while they do, no template may be compiled, no file under
data/ or templates/ opened, and no unbounded cache filled. A start that skipped warming fails all three:
the first answers would compile their templates and load the tables themselves.
"""

from __future__ import annotations

import builtins
import functools
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pytest

from bot import throttle
from bot.app import running
from bot.console import ConsoleChat
from bot.settings import Settings
from core.paths import DATA_DIR, TEMPLATES_DIR

# One of each kind of answer (vision jobs too), both languages, button presses ("1": the first button of
# the last keyboard), commands, and the checklist's first steps.
LINES = (
    "/start",
    "can a 4090 run llama 2 13b?",
    "1",
    "两张4090跑qwen2.5 72b int4够不够",
    "fine-tune llama 3.1 8b on a 4090",
    "cheapest way to run llama 3.1 70b",
    "qwen3 32b 推理 最便宜租什么",
    "4090 vs a100",
    "H20怎么样",
    "why does memory bandwidth matter?",
    "run flux.1 dev on a 4090 at 1024x1024",
    "wan 2.1 720p 5 秒视频 4090 能跑吗",
    "学生党入门学习大模型租什么卡",
    "vicuna 13b on a 3090",
    "run frobnicator-xl on a 4090",
    "hello",
    "/cards",
    "/help",
    "/checklist",
    "1",
    "/cancel",
)


def unbounded_caches() -> dict[str, Callable[..., Any]]:
    """`@cache` functions of core and bot: what a process loads once and keeps (bounded ones hold answers)."""
    found: dict[str, Callable[..., Any]] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("core", "bot")):
            continue
        for attr, value in vars(module).items():
            if isinstance(value, functools._lru_cache_wrapper) and value.cache_info().maxsize is None:
                found[f"{name}.{attr}"] = value
    return found


def misses() -> dict[str, int]:
    """Misses per cache, by where it is defined (a module that imports a loader holds the same object)."""
    found: dict[str, int] = {}
    for cache in unbounded_caches().values():
        found[f"{cache.__module__}.{cache.__qualname__}"] = cache.cache_info().misses  # type: ignore[attr-defined]
    return found


async def test_a_started_bot_loads_nothing_while_answering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for cache in unbounded_caches().values():
        cache.cache_clear()  # type: ignore[attr-defined]
    chat = ConsoleChat(Settings(db_path=tmp_path / "gpufit.sqlite3"), io.StringIO(), ansi=False, lang="en")
    # one scripted user types faster than people: the flood throttle would answer with notices
    chat.app.bot_data[throttle.THROTTLE_KEY] = throttle.Throttle(burst=1_000_000, rate=1.0)
    compiled: list[str | None] = []
    opened: list[str] = []
    real_open, real_compile = builtins.open, jinja2.Environment.compile

    def watching_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).startswith((str(DATA_DIR), str(TEMPLATES_DIR))):
            opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def watching_compile(
        self: jinja2.Environment, source: Any, name: str | None = None, *a: Any, **k: Any
    ) -> Any:
        compiled.append(name)
        return real_compile(self, source, name, *a, **k)

    async with running(chat.app, polling=False):
        before = misses()
        with monkeypatch.context() as watch:
            watch.setattr(builtins, "open", watching_open)
            watch.setattr(jinja2.Environment, "compile", watching_compile)
            for line in LINES:
                await chat.say(line)
        after = misses()
    replies = len(chat.fake.calls_to("sendMessage")) + len(chat.fake.calls_to("editMessageText"))
    assert replies >= len(LINES)  # every line answered (a press edits its message)
    assert compiled == [], f"templates compiled on first use: {compiled}"
    assert opened == [], f"files read on first use: {opened}"
    filled = sorted(name for name, count in after.items() if count > before.get(name, 0))
    assert filled == [], f"tables built on first use: {filled}"
