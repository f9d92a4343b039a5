"""Benchmark 6: drawing charts — CPU and wall time per chart kind, PNG size, and matplotlib's one-off cost.

`python -m benchmarks.charts`. Each kind is drawn from a real answer (bot/charts/demo.py's questions) in
both languages, `REPEATS` times after one warm-up draw; the first draw of the process (matplotlib's import,
the font registration) is reported apart, since the bot pays it once. The target is the issue's: a compare
chart within 150 ms of CPU on this machine.
"""

from __future__ import annotations

import statistics
import time

from benchmarks.common import Row
from bot.answer import answer
from bot.charts import render_png
from bot.charts.demo import QUESTIONS

REPEATS = 5
TARGET_COMPARE_CPU_MS = 150.0
MAX_PNG_BYTES = 150_000


def run(verbose: bool = False) -> list[Row]:
    specs = {
        (name, lang): answer(pair[0 if lang == "en" else 1], lang=lang).chart
        for name, pair in QUESTIONS.items()
        for lang in ("en", "zh")
    }
    first_cpu, first_wall = time.process_time(), time.perf_counter()
    some = next(spec for spec in specs.values() if spec is not None)
    render_png(some, "en")
    first = ((time.process_time() - first_cpu) * 1000, (time.perf_counter() - first_wall) * 1000)
    rows: list[Row] = [
        Row("6 charts", "first chart of a process (import + fonts)", "-", f"{first[0]:.0f} ms CPU", None)
    ]
    if verbose:
        print(f"== charts: first draw {first[0]:.0f} ms CPU / {first[1]:.0f} ms wall")
        print(f"   {'chart':<16} {'lang':<4} {'CPU ms':>7} {'wall ms':>8} {'PNG KB':>7}  size")
    biggest = 0
    for (name, lang), spec in specs.items():
        if spec is None:
            continue
        render_png(spec, lang)
        cpu, wall = [], []
        png = b""
        for _ in range(REPEATS):
            c0, w0 = time.process_time(), time.perf_counter()
            png = render_png(spec, lang)
            cpu.append((time.process_time() - c0) * 1000)
            wall.append((time.perf_counter() - w0) * 1000)
        biggest = max(biggest, len(png))
        cpu_ms, wall_ms = statistics.median(cpu), statistics.median(wall)
        if verbose:
            width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
            size = f"{len(png) / 1000:>7.0f}  {width}×{height}"
            print(f"   {name:<16} {lang:<4} {cpu_ms:>7.0f} {wall_ms:>8.0f} {size}")
        if name == "compare":
            rows.append(
                Row(
                    "6 charts",
                    f"compare chart ({lang}), median CPU / wall",
                    f"≤ {TARGET_COMPARE_CPU_MS:.0f} ms CPU",
                    f"{cpu_ms:.0f} / {wall_ms:.0f} ms",
                    cpu_ms <= TARGET_COMPARE_CPU_MS,
                )
            )
    rows.append(
        Row(
            "6 charts",
            "largest PNG of all kinds",
            f"< {MAX_PNG_BYTES // 1000} KB",
            f"{biggest / 1000:.0f} KB",
            biggest < MAX_PNG_BYTES,
        )
    )
    return rows


if __name__ == "__main__":
    run(verbose=True)
