"""`make bench`: every benchmark in turn, then one summary table (target vs measured)."""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable

from benchmarks import charts, coldstart, e2e, fresh, pipeline, store
from benchmarks.common import Row, print_table

BENCHMARKS: tuple[tuple[str, Callable[..., list[Row]]], ...] = (
    ("1 pipeline", pipeline.run),
    ("2 end to end + 4 memory", e2e.run),
    ("3 store", store.run),
    ("4 cold start", coldstart.run),
    ("5 fresh start", fresh.run),
    ("6 charts", charts.run),
)


def main() -> int:
    rows: list[Row] = []
    failed = 0
    started = time.perf_counter()
    for name, run in BENCHMARKS:
        t0 = time.perf_counter()
        try:
            rows.extend(run(verbose=True))
        except Exception:
            failed += 1
            traceback.print_exc()
            rows.append(Row(name, "benchmark failed", "-", "see traceback above", False))
        print(f"   ({name}: {time.perf_counter() - t0:.0f} s)\n", flush=True)
    print(f"== summary ({time.perf_counter() - started:.0f} s; figures vary with machine load)")
    print_table(rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
