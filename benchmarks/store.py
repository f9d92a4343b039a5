"""Benchmark 3: the session store under 500 users answering the checklist at once.

Each user walks the whole checklist the way bot/checklist.py does (read, answer, compare-and-set on the step
with `save_checklist(expected_step=…)`), all 500 concurrently on one SQLite file (WAL, synchronous=FULL, so
every commit is an fsync). Commit latency is what a caller of save_checklist waits, queueing behind the
store's write lock included. Afterwards every user's checklist is read back: none may be lost or behind.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, fmt_ms, percentile
from bot.store import SessionStore
from core import checklist as ck

USERS = 500
ANSWERS = ("ft_lora", "p:7", "bf16", "s:2048:4", "t:100000000", "b:none", "c:rtx-4090:1")


async def walk(store: SessionStore, user: int, latencies: list[float]) -> int:
    """One user's checklist; returns how many compare-and-set saves were refused (none expected)."""
    refused = 0
    t0 = time.perf_counter()
    await store.save_checklist(user, user, ck.start("en"))
    latencies.append(time.perf_counter() - t0)
    for answer in ANSWERS:
        state = await store.get_checklist(user, user)
        if state is None:
            return refused + 1
        moved, error = ck.answer_step(state, answer)
        if error is not None:
            raise RuntimeError(f"checklist refused {answer!r}: {error.code}")
        t0 = time.perf_counter()
        saved = await store.save_checklist(user, user, moved, expected_step=state.step)
        latencies.append(time.perf_counter() - t0)
        refused += not saved
    return refused


async def measure(path: Path) -> dict[str, float]:
    store = await SessionStore.open(path)
    latencies: list[float] = []
    start = time.perf_counter()
    refused = await asyncio.gather(*(walk(store, 1000 + n, latencies) for n in range(USERS)))
    elapsed = time.perf_counter() - start
    complete = 0
    for n in range(USERS):
        state = await store.get_checklist(1000 + n, 1000 + n)
        complete += state is not None and state.done and state.answers.card == "rtx-4090"
    await store.close()
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT COUNT(*) FROM checklists WHERE step = ?", (ck.DONE,)).fetchone()[0]
    return {
        "commits": len(latencies),
        "answers": USERS * len(ANSWERS),
        "elapsed_s": elapsed,
        "p50_s": percentile(latencies, 50),
        "p99_s": percentile(latencies, 99),
        "max_s": max(latencies),
        "refused": sum(refused),
        "complete": complete,
        "rows_done": rows,
    }


def run(*, verbose: bool = True) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="gpufit-bench-store-") as tmp:
        r = asyncio.run(measure(Path(tmp) / "store.sqlite3"))
    answers_per_s = r["answers"] / r["elapsed_s"]
    lost = USERS - int(min(r["complete"], r["rows_done"]))
    if verbose:
        print(f"== 3. session store: {USERS} concurrent users × {len(ANSWERS)} checklist answers")
        print(
            f"   {r['commits']:.0f} commits in {r['elapsed_s']:.2f} s: {answers_per_s:,.0f} answers/s "
            f"({r['commits'] / r['elapsed_s']:,.0f} commits/s); commit latency p50 {fmt_ms(r['p50_s'])}, "
            f"p99 {fmt_ms(r['p99_s'])}, max {fmt_ms(r['max_s'])}; serialised, one commit takes "
            f"{fmt_ms(r['elapsed_s'] / r['commits'])}"
        )
        print(
            f"   read back: {r['complete']:.0f}/{USERS} complete, {r['rows_done']:.0f} finished rows, "
            f"{r['refused']:.0f} refused compare-and-set saves"
        )
    return [
        Row("3 store", "checklist answers/s, 500 users", "-", f"{answers_per_s:,.0f}/s"),
        Row("3 store", "save_checklist p99 (lock wait incl.)", "-", fmt_ms(r["p99_s"])),
        Row("3 store", "checklists lost", "0", str(lost), lost == 0 and r["refused"] == 0),
    ]


if __name__ == "__main__":
    from benchmarks.common import print_table

    print_table(run())
