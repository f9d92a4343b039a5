"""`gpufit chat` in-process: the store it uses, what survives a restart, /help, the prompt, exports, Ctrl-C.

The same console as a real subprocess on a terminal is driven in tests/test_console_session.py."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from bot.console import PROMPT, chat_session, run_console
from bot.settings import Settings, load_settings

Line = str | Callable[[str], str]  # a line, or one worked out from what the console printed so far


def _chat(
    settings: Settings, lines: Iterable[Line], *, lang: str = "en", export_dir: Path | None = None
) -> str:
    out = io.StringIO()
    queue = iter(lines)

    def read() -> str:
        item = next(queue, None)
        if item is None:
            return ""
        return (item if isinstance(item, str) else item(out.getvalue())) + "\n"

    code = chat_session(read, out, settings, ansi=False, lang=lang, export_dir=export_dir)
    assert code == 0
    return out.getvalue()


def press(label: str) -> Callable[[str], str]:
    return lambda printed: _button(printed, label)


def _button(printed: str, label: str) -> str:
    """The number of the last keyboard's button whose label contains `label`."""
    last = [line for line in printed.splitlines() if line.startswith("  [1] ")][-1]
    for part in last.strip().split("  ["):
        number, _, text = part.lstrip("[").partition("] ")
        if label in text:
            return number
    raise AssertionError(f"no button {label!r} in {last!r}")


def test_default_store_is_under_the_data_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    assert load_settings(require_token=False).db_path == tmp_path / "data" / "gpufit" / "gpufit.sqlite3"
    out = io.StringIO()
    assert run_console(io.StringIO("/lang zh\n"), out) == 0
    assert (tmp_path / "data" / "gpufit" / "gpufit.sqlite3").exists()
    again = io.StringIO()
    assert run_console(io.StringIO(""), again) == 0
    assert "gpufit 对话" in again.getvalue(), "the language chosen last time is kept"


def test_gpufit_db_in_dotenv_is_the_console_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(f"GPUFIT_DB={tmp_path / 'mine.sqlite3'}\n", encoding="utf-8")
    assert run_console(io.StringIO("hello\n"), io.StringIO()) == 0
    assert (tmp_path / "mine.sqlite3").exists()


def test_question_and_checklist_survive_a_restart(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "s.sqlite3")
    _chat(settings, ["13b lora on a 4090"])
    again = _chat(settings, ["换成A100呢"])
    assert "A100" in again and "13B" in again, "the last question is remembered"
    first = _chat(settings, ["/checklist", press("Inference")])
    assert "1/7" in first and "2/7" in first
    resumed = _chat(settings, ["/checklist"])
    assert "2/7" in resumed, "the unfinished checklist is offered again"


def test_help_says_how_to_press_a_button_and_quit(tmp_path: Path) -> None:
    printed = _chat(Settings(db_path=tmp_path / "s.sqlite3"), ["/help"])
    assert "type its number" in printed
    assert "Ctrl-C" in printed and "/quit" in printed


def test_start_greets_nobody_rather_than_a_made_up_name(tmp_path: Path) -> None:
    printed = _chat(Settings(db_path=tmp_path / "s.sqlite3"), ["/start"])
    assert "Hi! I'm gpufit." in printed and "Hi you" not in printed


def test_prompt_shows_when_output_is_piped(tmp_path: Path) -> None:
    printed = _chat(Settings(db_path=tmp_path / "s.sqlite3"), ["hello"])
    assert printed.count(PROMPT) >= 2


def test_ctrl_c_while_waiting_for_a_line_ends_cleanly(tmp_path: Path) -> None:
    def interrupted() -> str:
        raise KeyboardInterrupt

    out = io.StringIO()
    assert chat_session(interrupted, out, Settings(db_path=tmp_path / "s.sqlite3"), ansi=False) == 0
    assert "Traceback" not in out.getvalue()
    # The store was closed: a new session opens the same file at once.
    assert "gpufit chat" in _chat(Settings(db_path=tmp_path / "s.sqlite3"), [])


def test_export_writes_the_sheet_to_a_file_and_says_where(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "s.sqlite3")
    lines: list[Line] = ["/checklist", "inference", "qwen2.5 7b", *["/skip"] * 5, press("Export")]
    printed = _chat(settings, lines, export_dir=tmp_path)
    assert "Pre-rental sheet" in printed
    files = list(tmp_path.glob("gpufit-checklist-*.md"))
    assert len(files) == 1
    assert str(files[0]) in printed
    assert "Qwen2.5 7B" in files[0].read_text(encoding="utf-8")
