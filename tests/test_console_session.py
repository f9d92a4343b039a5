"""`gpufit chat` as a person meets it: a real subprocess on a terminal (pexpect), a fresh HOME and store.

It walks the pre-rental checklist to the end in English and in Chinese, quits with Ctrl-C in the middle and
resumes where it stopped, exports the sheet to a file, and quits with Ctrl-C at the end. Waits are for the
prompt (generous limits, no timing asserts)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

from bot.console import PROMPT

ROOT = Path(__file__).resolve().parent.parent
WAIT_S = 90
_BUTTON = re.compile(r"\[(\d+)\] ([^\[\r\n]+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pexpect needs a POSIX terminal")


class Console:
    """One `gpufit chat` process; `say` types a line and returns what it printed before the next prompt."""

    def __init__(self, home: Path, locale: str) -> None:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "LANG": locale,
            "LC_ALL": locale,
            "PYTHONPATH": str(ROOT),
            "NO_PROXY": "*",
        }
        self.child = pexpect.spawn(
            sys.executable,
            [
                "-c",
                "import sys; from bot.cli import main; sys.exit(main(['chat']))",
            ],  # what `gpufit chat` runs
            cwd=str(home),
            env=env,
            encoding="utf-8",
            timeout=WAIT_S,
            dimensions=(60, 400),
        )
        self.shown = self._until_prompt()

    def _until_prompt(self) -> str:
        self.child.expect_exact(PROMPT)
        return _ANSI.sub("", str(self.child.before))

    def say(self, line: str) -> str:
        self.child.sendline(line)
        self.shown = self._until_prompt()
        return self.shown

    def press(self, label: str) -> str:
        """Type the number of the button whose label holds `label` (from the last keyboard shown)."""
        buttons = {text.strip(): number for number, text in _BUTTON.findall(self.shown)}
        number = next((n for text, n in buttons.items() if label in text), None)
        assert number is not None, f"no button {label!r} in {sorted(buttons)}"
        return self.say(number)

    def ctrl_c(self) -> str:
        """Ctrl-C: the process ends at once, cleanly (exit status 0, no traceback)."""
        self.child.sendintr()
        return self._ended()

    def ctrl_d(self) -> str:
        """Ctrl-D on an empty line: end of input, the same clean end."""
        self.child.sendeof()
        return self._ended()

    def _ended(self) -> str:
        self.child.expect(pexpect.EOF)
        rest = str(self.child.before)
        self.child.close()
        assert self.child.exitstatus == 0, rest
        assert "Traceback" not in rest
        return rest


def _saved_file(printed: str) -> Path:
    match = re.search(r"(/\S+\.md)", printed)
    assert match, printed
    return Path(match.group(1))


def test_checklist_in_english_with_a_restart_export_and_ctrl_c(tmp_path: Path) -> None:
    chat = Console(tmp_path, "en_US.UTF-8")
    assert "gpufit chat" in chat.shown
    assert "1/7" in chat.say("/checklist")
    assert "2/7" in chat.say("serve llama 3.1 70b for users")
    assert "3/7" in chat.say("/skip")
    chat.ctrl_c()

    chat = Console(tmp_path, "en_US.UTF-8")
    offer = chat.say("/checklist")
    assert "3/7" in offer or "step 3" in offer.lower()
    assert "3/7" in chat.press("Continue")
    for _ in range(4):
        chat.say("/skip")
    sheet = chat.say("/skip")
    assert "Pre-rental sheet" in sheet
    assert "Llama 3.1 70B" in sheet, "the model named at step 1 is kept through the skipped model step"
    saved = chat.press("Export")
    path = _saved_file(saved)
    assert path.parent == tmp_path and path.exists()
    assert "Llama 3.1 70B" in path.read_text(encoding="utf-8")
    chat.ctrl_c()


def test_ctrl_c_while_an_answer_is_being_worked_out_ends_cleanly(tmp_path: Path) -> None:
    chat = Console(tmp_path, "en_US.UTF-8")
    chat.child.sendline("cheapest way to serve a 70B model for 100 users")
    chat.ctrl_c()


def test_checklist_in_chinese_to_the_end_and_export(tmp_path: Path) -> None:
    chat = Console(tmp_path, "zh_CN.UTF-8")
    assert "gpufit 对话" in chat.shown
    assert "1/7" in chat.say("/checklist")
    assert "2/7" in chat.say("LoRA 微调")
    assert "3/7" in chat.say("qwen2.5 14b")
    assert "4/7" in chat.say("bf16")
    assert "5/7" in chat.say("4096，batch 4")
    assert "6/7" in chat.say("2万条样本，3轮")
    assert "7/7" in chat.say("预算 5000 元")
    sheet = chat.say("推荐")
    assert "租前清单" in sheet and "Qwen2.5 14B" in sheet
    path = _saved_file(chat.press("导出"))
    assert path.exists() and "Qwen2.5 14B" in path.read_text(encoding="utf-8")
    chat.ctrl_d()
