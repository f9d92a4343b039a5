"""Benchmarks for issue 7: answer pipeline, end to end through the bot, session store, memory and cold start.

`make bench` (= `python -m benchmarks`) runs them all and prints a summary table; each module also runs on
its own (`python -m benchmarks.pipeline`, …). Figures are printed, never asserted: tests stay timing-free.
"""

import sys
from pathlib import Path

# The loopback Bot API stand-in lives with the tests (tests/botapi_server.py), imported as `botapi_server`
# the way tests/conftest.py does (pytest's pythonpath), so mypy sees one module under one name.
_TESTS = str(Path(__file__).resolve().parent.parent / "tests")
if _TESTS not in sys.path:
    sys.path.append(_TESTS)
