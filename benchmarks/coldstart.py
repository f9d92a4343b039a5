"""Benchmark 4b: cold start of `gpufit ask "<q>"`, a fresh process each time, as a user runs it.

Over the target, `python -X importtime` names the imports that cost most.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import ROOT, Row, env_for_children

RUNS = 5
TARGET_S = 1.0
ASK_SCRIPT = "import sys; from bot.cli import main; sys.exit(main())"
QUESTIONS = ("两张4090跑qwen2.5 72b int4够不够", "can a 4090 run llama 2 13b?")


def gpufit_command() -> list[str]:
    script = Path(sys.executable).parent / "gpufit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "core"]


def time_once(question: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [*gpufit_command(), "ask", question],
        cwd=ROOT,
        env=env_for_children(),
        check=True,
        capture_output=True,
        timeout=60,
    )
    return time.perf_counter() - start


def import_offenders(question: str, top: int = 12) -> list[tuple[float, str]]:
    """Own import time summed per top-level package of `gpufit ask`, from `-X importtime` (seconds)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", ASK_SCRIPT, "ask", question],
        cwd=ROOT,
        env=env_for_children(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    by_package: dict[str, float] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        own, _, name = line.removeprefix("import time:").split("|", 2)
        if not own.strip().isdigit():
            continue
        package = name.strip().split(".")[0]
        by_package[package] = by_package.get(package, 0.0) + int(own) / 1e6
    return sorted(((s, p) for p, s in by_package.items()), reverse=True)[:top]


def run(*, verbose: bool = True) -> list[Row]:
    times = [time_once(QUESTIONS[i % len(QUESTIONS)]) for i in range(RUNS)]
    best, median = min(times), statistics.median(times)
    if verbose:
        print(f"== 4b. cold start: {' '.join(gpufit_command())} ask …, {RUNS} fresh processes")
        print(
            "   "
            + ", ".join(f"{t * 1e3:.0f} ms" for t in times)
            + f"; min {best * 1e3:.0f} ms, median {median * 1e3:.0f} ms"
        )
        offenders = import_offenders(QUESTIONS[0])
        print("   import time by top-level package (own time summed, -X importtime):")
        for seconds, package in offenders:
            print(f"     {seconds * 1e3:7.0f} ms  {package}")
    return [
        Row(
            "4 cold start",
            "gpufit ask, median of 5",
            f"< {TARGET_S:.0f} s",
            f"{median * 1e3:.0f} ms (min {best * 1e3:.0f} ms)",
            median < TARGET_S,
        )
    ]


if __name__ == "__main__":
    from benchmarks.common import print_table

    print_table(run())
