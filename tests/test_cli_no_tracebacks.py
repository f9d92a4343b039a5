"""No traceback reaches a user of the command line (issue 20): bad numbers are one line naming the flag and
exit code 2; bad settings are one line at start (the database) or a start without prices that says so at
start and in the answers (the price file); a bot that cannot reach Telegram logs one line per retry."""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from telegram.error import NetworkError

from bot.cli import build_parser, main
from bot.logging_setup import RedactingFilter
from core.cost import use_price_file

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _shipped_prices() -> Iterator[None]:
    yield
    use_price_file(None)  # main() hands core the GPUFIT_PRICES of the test


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["estimate", "--params", "13B", "--batch", "-4"], "--batch"),
        (["estimate", "--params", "13B", "--batch", "0"], "--batch"),
        (["estimate", "--params", "13B", "--gpus", "0"], "--gpus"),
        (["estimate", "--params", "13B", "--gpus", "-2"], "--gpus"),
        (["estimate", "--params", "0B"], "--params"),
        (["estimate", "--params=-3B"], "--params"),
        (["estimate", "--params", "13B", "--task", "lora", "--lora-rank", "-1"], "--lora-rank"),
        (["estimate", "--params", "13B", "--seq", "10M"], "--seq"),
        (["estimate", "--params", "13B", "--seq", "lots"], "--seq"),
        (["estimate", "--model", "llama-3.1-8b", "--tokens", "0"], "--tokens"),
        (["estimate", "--params", "13B", "--gpus", "two"], "--gpus"),
        (["vision", "sdxl", "--steps", "0"], "--steps"),
        (["vision", "sdxl", "--width", "-5"], "--width"),
        (["vision", "sdxl", "--height", "8"], "--height"),
        (["vision", "sdxl", "--batch", "-1"], "--batch"),
        (["vision", "whisper-large-v3", "--audio-hours", "-2"], "--audio-hours"),
    ],
)
def test_a_bad_number_is_one_line_naming_its_flag(
    argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as leaving:
        main(argv)
    assert leaving.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert f"argument {flag}:" in err and "Traceback" not in err and "ValidationError" not in err
    assert argv[-1].split("=")[-1] in err


def test_long_contexts_are_read_with_their_unit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--params", "8B", "--seq", "1m", "--json"]) == 0
    assert '"seq": 1048576' in capsys.readouterr().out


def test_every_flag_says_what_it_is_for() -> None:
    parser = build_parser()
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subcommands.choices.items():
        for action in sub._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help, f"gpufit {name} {'/'.join(action.option_strings) or action.dest}"


def test_bot_help_names_the_token(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bot", "--help"])
    assert "TELEGRAM_BOT_TOKEN" in capsys.readouterr().out


def test_an_unwritable_database_stops_the_chat_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for path in (blocker / "gpufit.sqlite3", tmp_path):
        monkeypatch.setenv("GPUFIT_DB", str(path))
        assert main(["chat"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and f"GPUFIT_DB={path}" in err, err


@pytest.mark.parametrize("content", [None, "x = [", "[meta]\nowner = 3\n"])
def test_an_unusable_price_file_is_said_at_start_and_in_answers(
    content: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.toml"
    if content is not None:
        prices.write_text(content)
    monkeypatch.setenv("GPUFIT_PRICES", str(prices))
    assert main(["ask", "can a 4090 run llama 3.1 8b", "--lang", "en"]) == 0
    out, err = capsys.readouterr()
    assert f"GPUFIT_PRICES={prices}" in err and "answering without prices" in err
    assert len(err.strip().splitlines()) == 1
    assert "No prices: the price file" in out and "✅" in out
    assert main(["ask", "4090能跑llama 3.1 8b吗", "--lang", "zh"]) == 0
    assert "没有价格" in capsys.readouterr().out


def test_a_network_error_is_logged_in_one_line() -> None:
    try:
        raise NetworkError("httpx.ConnectError: [Errno -2] Name or service not known")
    except NetworkError:
        record = logging.LogRecord(
            "telegram.ext", logging.ERROR, __file__, 1, "Aborting.", None, sys.exc_info()
        )
    RedactingFilter().filter(record)
    line = logging.Formatter("%(message)s").format(record)
    assert line == "Aborting. (NetworkError: httpx.ConnectError: [Errno -2] Name or service not known)"
    try:
        raise KeyError("a bug")
    except KeyError:
        bug = logging.LogRecord("bot", logging.ERROR, __file__, 1, "handler failed", None, sys.exc_info())
    RedactingFilter().filter(bug)
    assert "Traceback" in logging.Formatter("%(message)s").format(bug)  # real errors keep theirs


def test_the_bot_without_network_says_so_in_a_few_lines(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "TELEGRAM_BOT_TOKEN": "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi",
        "TELEGRAM_API_URL": "http://127.0.0.1:9",  # nothing listens: connection refused
        "GPUFIT_DB": str(tmp_path / "bot.sqlite3"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "bot"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and len(lines) <= 8, done.stderr
    assert lines[-1].startswith("gpufit bot: cannot reach the Bot API at http://127.0.0.1:9")
