"""What the benchmarks share: summary rows, percentiles, process memory, and clearing per-question caches."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.warm import clear_question_caches, question_caches

__all__ = ["clear_question_caches", "question_caches"]  # shared with the bot's start (core/warm.py)

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Row:
    """One line of the summary: what was measured against what the issue asks for."""

    benchmark: str
    metric: str
    target: str
    measured: str
    ok: bool | None = None  # None: reported only, no target


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (no interpolation: p99 of 2,000 samples is the 1,980th)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(pct / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def proc_status() -> dict[str, int]:
    """VmRSS / VmHWM of this process in bytes (Linux /proc/self/status)."""
    found: dict[str, int] = {}
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    found[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return found


def env_for_children() -> dict[str, str]:
    """The environment for subprocesses: loopback never goes through a proxy; the checkout is importable."""
    env = dict(os.environ)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def fmt_rate(value: float) -> str:
    return f"{value:,.0f}/s"


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 0.1 else f"{seconds * 1e3:,.0f} ms"


def print_table(rows: Sequence[Row]) -> None:
    headers = ("benchmark", "metric", "target", "measured", "ok")
    cells = [
        (r.benchmark, r.metric, r.target, r.measured, "-" if r.ok is None else ("yes" if r.ok else "NO"))
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    print(line)
    print("  ".join("-" * w for w in widths))
    for c in cells:
        print("  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)))


async def start_standin(
    *, messages: int, users: int, rate: float, fresh: bool = False
) -> asyncio.subprocess.Process:
    """The Bot API stand-in in its own process (benchmarks.standin), its pipes open for the hello line."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "benchmarks.standin",
        *(["--fresh"] if fresh else []),
        "--messages",
        str(messages),
        "--users",
        str(users),
        "--rate",
        str(rate),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env_for_children(),
    )
