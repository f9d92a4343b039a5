"""core/ is the pure domain: it imports nothing outward, never prints and never reads the environment.

Every module under core/ is parsed (not imported, so a forbidden import cannot hide behind a guard or a
lazy import) and each offence is listed as module:line.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"

# Top-level packages core must not import: the bot and Telegram, rendering, databases, HTTP and sockets,
# the Hugging Face Hub client.
FORBIDDEN_PACKAGES = frozenset(
    {
        "bot",
        "telegram",
        "jinja2",
        "markupsafe",
        "sqlite3",
        "aiosqlite",
        "http",
        "urllib",
        "urllib3",
        "requests",
        "httpx",
        "aiohttp",
        "socket",
        "ssl",
        "huggingface_hub",
    }
)
# asyncio's networking: streams, servers, sockets (asyncio itself is not forbidden, its network is).
ASYNCIO_NETWORKING = frozenset(
    {
        "open_connection",
        "start_server",
        "open_unix_connection",
        "start_unix_server",
        "create_connection",
        "create_server",
        "create_unix_connection",
        "create_unix_server",
        "create_datagram_endpoint",
        "sock_connect",
        "sock_accept",
        "getaddrinfo",
    }
)
# The environment and the process's standard streams.
FORBIDDEN_ATTRIBUTES = {
    "os": frozenset({"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}),
    "sys": frozenset({"stdout", "stderr", "__stdout__", "__stderr__"}),
}
FORBIDDEN_CALLS = frozenset({"print", "breakpoint", "input"})


class Offence(NamedTuple):
    module: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.what}"


def _top(name: str) -> str:
    return name.split(".", 1)[0]


class _Checker(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.offences: list[Offence] = []
        # Local names bound to os / sys / asyncio (import os as _os; from os import environ).
        self.aliases: dict[str, str] = {}

    def _flag(self, node: ast.AST, what: str) -> None:
        self.offences.append(Offence(self.module, getattr(node, "lineno", 0), what))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if _top(alias.name) in FORBIDDEN_PACKAGES:
                self._flag(node, f"import {alias.name}")
            if alias.name in ("os", "sys", "asyncio"):
                self.aliases[alias.asname or alias.name] = alias.name
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module:
            if _top(node.module) in FORBIDDEN_PACKAGES:
                self._flag(node, f"from {node.module} import ...")
            for alias in node.names:
                if node.module in FORBIDDEN_ATTRIBUTES and alias.name in FORBIDDEN_ATTRIBUTES[node.module]:
                    self._flag(node, f"from {node.module} import {alias.name}")
                if node.module.startswith("asyncio") and alias.name in ASYNCIO_NETWORKING:
                    self._flag(node, f"from {node.module} import {alias.name}")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name):
            owner = self.aliases.get(node.value.id)
            if owner in FORBIDDEN_ATTRIBUTES and node.attr in FORBIDDEN_ATTRIBUTES[owner]:
                self._flag(node, f"{owner}.{node.attr}")
        if node.attr in ASYNCIO_NETWORKING:
            self._flag(node, f"asyncio networking: .{node.attr}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            self._flag(node, f"{node.func.id}(...)")
        dynamic = (isinstance(node.func, ast.Name) and node.func.id == "__import__") or (
            isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
        )
        if dynamic and node.args and isinstance(node.args[0], ast.Constant):
            name = node.args[0].value
            if isinstance(name, str) and _top(name) in FORBIDDEN_PACKAGES:
                self._flag(node, f"dynamic import of {name}")
        self.generic_visit(node)


def offences_in(path: Path) -> list[Offence]:
    module = path.relative_to(ROOT).as_posix()
    checker = _Checker(module)
    checker.visit(ast.parse(path.read_text(encoding="utf-8"), filename=module))
    return checker.offences


def core_offences() -> list[Offence]:
    return [offence for path in sorted(CORE.rglob("*.py")) for offence in offences_in(path)]


def _report(found: list[Offence]) -> str:
    return "core/ must stay pure:\n" + "\n".join(str(offence) for offence in found)


def test_core_imports_nothing_outward_prints_nothing_and_reads_no_environment() -> None:
    found = core_offences()
    assert not found, _report(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import telegram\n", "import telegram"),
        ("from jinja2 import Environment\n", "from jinja2 import ..."),
        ("import urllib.request\n", "import urllib.request"),
        ("from http import HTTPStatus\n", "from http import ..."),
        ("import os\nx = os.environ['A']\n", "os.environ"),
        ("import os as _o\nx = _o.getenv('A')\n", "os.getenv"),
        ("from os import putenv\n", "from os import putenv"),
        ("print('x')\n", "print(...)"),
        ("import sys\nsys.stderr.write('x')\n", "sys.stderr"),
        ("import asyncio\nasyncio.open_connection('h', 1)\n", "asyncio networking: .open_connection"),
        ("import importlib\nimportlib.import_module('bot.settings')\n", "dynamic import of bot.settings"),
    ],
)
def test_the_checker_catches_each_kind_of_offence(source: str, expected: str) -> None:
    checker = _Checker("core/_probe.py")
    checker.visit(ast.parse(source))
    assert [offence.what for offence in checker.offences] == [expected]


def test_the_checker_passes_pure_code() -> None:
    checker = _Checker("core/_probe.py")
    checker.visit(ast.parse("import os.path\nimport sys\nx = os.path.join('a')\nsys.exit(0)\n"))
    assert checker.offences == []
