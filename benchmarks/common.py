"""What the benchmarks share: summary rows, percentiles, process memory, and clearing per-question caches."""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def question_caches() -> list[Any]:
    """Bounded caches (`lru_cache(maxsize=N)`) in loaded core modules that remember results for a question's
    inputs: cleared, a question is new to the process again.

    Left warm, as a running bot has them: the data loaders, unbounded (`@cache`: catalog, registry,
    templates) or `lru_cache(maxsize=1)` without parameters (load_runtimes, load_job_constants): they read
    a table once per process, whatever is asked, so clearing them between questions would charge each
    answer a reload that a real bot never pays.
    """
    found = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("core") or module is None:
            continue
        for value in vars(module).values():
            info = getattr(value, "cache_info", None)
            if (
                isinstance(value, functools._lru_cache_wrapper)
                and info is not None
                and info().maxsize is not None
                and _takes_inputs(value)
                and value not in found
            ):
                found.append(value)
    return found


def _takes_inputs(cached: Any) -> bool:
    """Whether a cached function has parameters (a loader has none: it remembers one table, not answers)."""
    return bool(inspect.signature(cached.__wrapped__).parameters)


def clear_question_caches() -> int:
    caches = question_caches()
    for cache in caches:
        cache.cache_clear()
    return len(caches)


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
