"""Benchmark 5: a bot just started, at Telegram's pace, every question new — first answers and CPU per reply.

750 users each ask one question the process has never seen (benchmarks.questions.fresh_questions), 25 per
second (Telegram lets a bot send about 30 messages/s), to the shipped Application (AIORateLimiter, store
commits and all) in a process that has just started: no warm-up round. Beside it, a bare python-telegram-bot
echo bot, in its own fresh process, on the same stand-in at the same pace.

- Latency is taken by the stand-in (benchmarks/standin.py, its own process), from the update's arrival to the
  reply; the first 20 answers after the start are reported on their own (they paid for whatever loads on
  first use), beside the p99 of the rest.
- CPU per reply is the bot process's CPU time (all threads) from the start of polling until every reply is in,
  divided by the replies; what the start itself cost (imports, building, initialising) is reported apart.
- CPU per reply is also split by thread (Linux: /proc/self/task): the event loop (PTB, HTTP, the store's side
  of each trip), the worker threads (the answers: parse, advise, render, run by asyncio.to_thread) and
  SQLite's threads (aiosqlite: one per connection). It says where a change has to look.
- CPU per update is the same clock around each update the Application handles (store checks included), in
  order: the first 20 beside the rest. On a busy machine updates queue and every latency grows, the first
  ones' included; the CPU an update takes does not, so this is the figure that says whether the first users
  pay for loading.

Run as `python -m benchmarks.fresh` (benchmarks/__main__.py does); each bot runs in a child
`python -m benchmarks.fresh --bot gpufit|echo` so that "after a start" means a fresh interpreter.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Row, env_for_children, fmt_ms, percentile, start_standin

MESSAGES = 750
USERS = 750
RATE = 25.0
FIRST = 20  # benchmarks.standin.FIRST
TARGET_P99_S = 0.050
BOTS = ("echo", "gpufit")


async def one_bot(bot: str) -> dict[str, Any]:
    """In this (fresh) process: the stand-in child, then the bot polling it until the load is answered."""
    from botapi_server import loopback_lean_updates_request, loopback_request

    from benchmarks.e2e import POLL_TIMEOUT, echo_bot
    from bot.app import build_application, running
    from bot.settings import Settings

    child = await start_standin(messages=MESSAGES, users=USERS, rate=RATE, fresh=True)
    assert child.stdout is not None and child.stdin is not None
    try:
        hello = json.loads(await asyncio.wait_for(child.stdout.readline(), 60))
        with tempfile.TemporaryDirectory(prefix="gpufit-bench-") as tmp:
            if bot == "echo":
                app = echo_bot(hello)
            else:
                settings = Settings(
                    token=hello["token"],
                    api_url=hello["base_url"],
                    db_path=Path(tmp) / "gpufit.sqlite3",
                    log_level="WARNING",
                )
                app = build_application(
                    settings, request=loopback_request(), get_updates_request=loopback_lean_updates_request()
                )
            service = time_each_update(app)
            async with running(app, poll_timeout=POLL_TIMEOUT):
                polling_cpu = time.process_time()
                threads_before = cpu_by_thread()
                line = await asyncio.wait_for(child.stdout.readline(), 300)
                load_cpu = time.process_time() - polling_cpu
                threads_after = cpu_by_thread()
        result: dict[str, Any] = json.loads(line)
    finally:
        child.stdin.close()
        try:
            await asyncio.wait_for(child.wait(), 20)
        except TimeoutError:
            child.kill()
    return {
        "bot": bot,
        "start_cpu_s": polling_cpu,  # process_time counts from the interpreter's start
        "load_cpu_s": load_cpu,
        "cpu_per_reply_s": load_cpu / result["replies"] if result["replies"] else float("nan"),
        "load_average": os.getloadavg()[0],  # the machine's 1-minute load when the run ended
        "service_cpu_s": service,
        "thread_cpu_per_reply_s": {
            kind: (threads_after[kind] - threads_before.get(kind, 0.0)) / max(result["replies"], 1)
            for kind in threads_after
        },
    } | result


def cpu_by_thread() -> dict[str, float]:
    """CPU seconds so far of this process's threads by kind (event loop, workers, SQLite, other); empty where
    /proc/self/task is not there. Clock ticks (10 ms): meaningful over the whole load, not per reply."""
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    spent: dict[str, float] = {}
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return spent
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat", encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        kind = _thread_kind(names.get(int(task), ""))
        spent[kind] = spent.get(kind, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return spent


def _thread_kind(name: str) -> str:
    if name == "MainThread":
        return "event loop"
    if name.startswith("asyncio_"):
        return "workers"
    if "_connection_worker_thread" in name:
        return "SQLite"
    return "other"


def time_each_update(app: Any) -> list[float]:
    """CPU seconds this process spends on each update, in the order they finish (the Application's update
    processor, store checks included). Unlike the latency, it does not grow when a busy machine makes
    updates queue: it shows what the first answers cost beside the later ones. Updates are handled
    concurrently, so a clock around an update would also count the others running meanwhile: the clock runs
    only while this update's own code runs (`_StepTimed`), which leaves out what other threads (SQLite's)
    do meanwhile."""
    spent: list[float] = []
    processor = app.update_processor

    class Timed(type(processor)):  # type: ignore[misc]
        __slots__ = ()  # PTB's processors have slots: the same layout, so the instance can switch class

        async def process_update(self, update: object, coroutine: Any) -> None:
            await _StepTimed(super().process_update(update, coroutine), spent)

    processor.__class__ = Timed
    return spent


class _StepTimed:
    """Awaits a coroutine, adding the CPU time of its own steps (each run between two suspensions) to `sink`
    once it ends: the CPU that is this update's, however many others run between its steps."""

    def __init__(self, coroutine: Any, sink: list[float]) -> None:
        self._coroutine = coroutine
        self._sink = sink

    def __await__(self) -> Any:
        steps = self._coroutine.__await__()
        spent = 0.0
        value: Any = None
        error: BaseException | None = None
        while True:
            started = time.process_time()
            try:
                yielded = steps.throw(error) if error is not None else steps.send(value)
            except StopIteration as stop:
                self._sink.append(spent + time.process_time() - started)
                return stop.value
            except BaseException:
                self._sink.append(spent + time.process_time() - started)
                raise
            spent += time.process_time() - started
            try:
                value, error = (yield yielded), None
            except BaseException as thrown:  # handed on into the coroutine, as await does
                value, error = None, thrown


def run_bot_in_subprocess(bot: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.fresh", "--bot", bot],
        capture_output=True,
        text=True,
        env=env_for_children(),
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise RuntimeError(f"benchmarks.fresh --bot {bot} exited with {done.returncode}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def rows_from(runs: dict[str, dict[str, Any]], *, verbose: bool = True) -> list[Row]:
    if verbose:
        print(
            f"== 5. fresh start: {MESSAGES} users, one new question each, {RATE:.0f} msg/s over 127.0.0.1"
            " (each bot a fresh process, the stand-in its own)"
        )
        print(
            "   bot      replies lost  p50       p99       first 20: p50 / max    rest p99"
            "   CPU/reply  CPU at start   CPU per update: first 20 max, rest p50 / p99"
        )
        for r in runs.values():
            first = [v for v in r["first_s"] if not math.isnan(v)] or [math.nan]
            print(
                f"   {r['bot']:8s} {r['replies']:7d} {r['lost']:4d}  {fmt_ms(r['p50_s']):9s}"
                f" {fmt_ms(r['p99_s']):9s} {fmt_ms(percentile(first, 50)):>9s} / {fmt_ms(max(first)):9s}"
                f" {fmt_ms(r['rest_p99_s']):9s}  {fmt_ms(r['cpu_per_reply_s']):9s}  {r['start_cpu_s']:.2f} s"
                f"         {fmt_ms(max(r['service_cpu_s'][:FIRST])):9s}"
                f" {fmt_ms(percentile(r['service_cpu_s'][FIRST:], 50))}"
                f" / {fmt_ms(percentile(r['service_cpu_s'][FIRST:], 99))}"
            )
            if r["unmatched"] or r["refused"]:
                print(f"     !! unmatched replies {r['unmatched']}, refused by the stand-in {r['refused']}")
            print(
                f"     polls {r.get('polls', 0)}, updates delivered again {r.get('repeats', 0)}"
                f" ({r.get('repeat_bytes', 0) / 1e6:.2f} MB)"
            )
            print(
                "     first 20 (ms): " + " ".join(f"{v * 1e3:.0f}" for v in r["first_s"]),
                f"(machine load {r['load_average']:.1f})",
            )
            split: dict[str, float] = r.get("thread_cpu_per_reply_s") or {}
            if split:
                kinds = sorted(split.items(), key=lambda item: -item[1])
                print("     CPU per reply by thread: " + ", ".join(f"{k} {fmt_ms(v)}" for k, v in kinds))
    gpufit, echo = runs["gpufit"], runs["echo"]
    first_max = max((v for v in gpufit["first_s"] if not math.isnan(v)), default=math.nan)
    ratio = gpufit["cpu_per_reply_s"] / echo["cpu_per_reply_s"]
    lost = sum(r["lost"] for r in runs.values())
    first_cpu = max(gpufit["service_cpu_s"][:FIRST])
    rest_cpu_p99 = percentile(gpufit["service_cpu_s"][FIRST:], 99)
    return [
        Row(
            "5 fresh start",
            f"CPU per update, first {FIRST} max / rest p99 (gpufit)",
            "first <= rest p99",
            f"{fmt_ms(first_cpu)} / {fmt_ms(rest_cpu_p99)}"
            f" (rest p50 {fmt_ms(percentile(gpufit['service_cpu_s'][FIRST:], 50))})",
            first_cpu <= rest_cpu_p99,
        ),
        Row(
            "5 fresh start",
            f"first {FIRST} answers after start, max (gpufit)",
            "<= p99 of the rest",
            f"{fmt_ms(first_max)} (rest p99 {fmt_ms(gpufit['rest_p99_s'])})",
            first_max <= gpufit["rest_p99_s"],
        ),
        Row(
            "5 fresh start",
            f"p50 / p99 at {RATE:.0f} msg/s, all {MESSAGES} (gpufit)",
            f"p99 < {TARGET_P99_S * 1e3:.0f} ms",
            f"{fmt_ms(gpufit['p50_s'])} / {fmt_ms(gpufit['p99_s'])}"
            f" (echo {fmt_ms(echo['p50_s'])} / {fmt_ms(echo['p99_s'])})",
            gpufit["p99_s"] < TARGET_P99_S,
        ),
        Row(
            "5 fresh start",
            "CPU per reply, gpufit / echo",
            "-",
            f"{fmt_ms(gpufit['cpu_per_reply_s'])} / {fmt_ms(echo['cpu_per_reply_s'])} = {ratio:.1f}x",
        ),
        Row(
            "5 fresh start",
            "CPU at start (imports, build, init), gpufit / echo",
            "-",
            f"{gpufit['start_cpu_s']:.2f} s / {echo['start_cpu_s']:.2f} s",
        ),
        Row(
            "5 fresh start",
            "polls / updates delivered again (gpufit)",
            "-",
            f"{gpufit.get('polls', 0)} / {gpufit.get('repeats', 0)}",
        ),
        Row("5 fresh start", "replies lost", "0", str(lost), lost == 0),
    ]


def run(*, verbose: bool = True) -> list[Row]:
    return rows_from({bot: run_bot_in_subprocess(bot) for bot in BOTS}, verbose=verbose)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bot", choices=BOTS, help="run this bot here and print its raw report (JSON)")
    bot = parser.parse_args().bot
    if bot:
        print(json.dumps(asyncio.run(one_bot(bot))))
    else:
        from benchmarks.common import print_table

        print_table(run())
