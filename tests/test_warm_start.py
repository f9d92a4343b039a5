"""A bot that has just started has what answers need already loaded (bot/warm.py, called from post_init).

Checked in a fresh interpreter (this test process has long loaded everything): the console chat's real
Application starts, then a few people ask questions of every kind and press a button; while they do,
no template may be compiled, no file under data/ or templates/ opened, and no unbounded cache (the data
loaders, the parser's name tables) filled. A start that skipped warming fails all three: the first answers
would compile their templates and load the tables themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROBE = r"""
import asyncio, builtins, functools, io, json, sys, tempfile
from pathlib import Path

import jinja2

from bot import throttle
from bot.app import running
from bot.console import ConsoleChat
from core.paths import DATA_DIR, TEMPLATES_DIR

LINES = [line for line in sys.stdin.read().splitlines() if line]
WATCHED = (str(DATA_DIR), str(TEMPLATES_DIR))
seen = {"compiled": [], "opened": []}


def unbounded_caches():
    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("core", "bot")):
            continue
        for attr, value in vars(module).items():
            if isinstance(value, functools._lru_cache_wrapper) and value.cache_info().maxsize is None:
                found[f"{name}.{attr}"] = value
    return found


def misses():
    return {name: cache.cache_info().misses for name, cache in unbounded_caches().items()}


real_open, real_compile = builtins.open, jinja2.Environment.compile


def watching_open(file, *args, **kwargs):
    if str(file).startswith(WATCHED):
        seen["opened"].append(str(file))
    return real_open(file, *args, **kwargs)


def watching_compile(self, source, name=None, *args, **kwargs):
    seen["compiled"].append(name)
    return real_compile(self, source, name, *args, **kwargs)


async def main():
    with tempfile.TemporaryDirectory() as folder:
        chat = ConsoleChat(Path(folder) / "gpufit.sqlite3", io.StringIO(), ansi=False, lang="en")
        # one scripted user types faster than people: the flood throttle would answer with notices
        chat.app.bot_data[throttle.THROTTLE_KEY] = throttle.Throttle(burst=1_000_000, rate=1.0)
        async with running(chat.app, polling=False):
            before = misses()
            builtins.open, jinja2.Environment.compile = watching_open, watching_compile
            try:
                for line in LINES:
                    await chat.say(line)
            finally:
                builtins.open, jinja2.Environment.compile = real_open, real_compile
            after = misses()
        replies = len(chat.fake.calls_to("sendMessage")) + len(chat.fake.calls_to("editMessageText"))
    filled = sorted(name for name, count in after.items() if count > before.get(name, 0))
    print(json.dumps(seen | {"filled": filled, "replies": replies}))


asyncio.run(main())
"""

# One of each kind of answer, both languages, a button press ("1": the first button of the last keyboard),
# commands, and the checklist's first steps.
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


def test_a_started_bot_loads_nothing_while_answering() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        input="\n".join(LINES),
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["replies"] >= len(LINES)  # every line answered (a press edits its message)
    assert seen["compiled"] == [], f"templates compiled on first use: {seen['compiled']}"
    assert seen["opened"] == [], f"files read on first use: {seen['opened']}"
    assert seen["filled"] == [], f"tables built on first use: {seen['filled']}"
