"""Benchmark 2 (and 4's memory figure): the real Application end to end against the loopback Bot API stand-in.

The bots run in this process; the stand-in and the 200 simulated users run in another (benchmarks/standin.py),
so the bot's figures are not charged for Telegram's side. Beside gpufit, a plain python-telegram-bot echo bot
runs in the same process against a fresh stand-in with the same polling settings (the tests' loopback
getUpdates transport, poll timeout 10 s), so the ratio says what gpufit's handlers cost over PTB itself.

gpufit as shipped has PTB's AIORateLimiter (30 messages/s overall, Telegram's broadcast limit), so at 100
messages/s it queues by design; it is measured that way once, on a shorter run, and the main comparison runs
the same Application with only the rate limiter taken out.

Run as `python -m benchmarks.e2e --json` (benchmarks/__main__.py does): this process then holds only the bots,
and its VmRSS / VmHWM after the runs is the memory figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from botapi_server import loopback_lean_updates_request, loopback_request, loopback_updates_request
from telegram import Update
from telegram.ext import Application, ApplicationBuilder, ContextTypes, MessageHandler, filters
from telegram.request import HTTPXRequest

from benchmarks.common import Row, env_for_children, fmt_ms, proc_status, start_standin
from bot.app import build_application, running
from bot.settings import Settings

POLL_TIMEOUT = 10.0
MESSAGES = 2000
USERS = 200
PACED_RATE = 100.0
SHIPPED_MESSAGES = 400  # the rate-limited run: 30 replies/s at most, so a shorter run shows it
TARGET_RATIO = 0.8
TARGET_P99_S = 0.050
TARGET_RSS = 120 * 2**20


async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Say the text back."""
    message = update.effective_message
    if message is not None and message.text:
        await message.reply_text(message.text)


def echo_bot(hello: dict[str, Any]) -> Application[Any, Any, Any, Any, Any, Any]:
    app = (
        ApplicationBuilder()
        .token(hello["token"])
        .base_url(hello["base_url"])
        .request(HTTPXRequest(connection_pool_size=32, httpx_kwargs={"trust_env": False}))
        .get_updates_request(loopback_updates_request())
        .build()
    )
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, echo))
    return app


def gpufit_bot(
    hello: dict[str, Any], db_dir: Path, *, rate_limited: bool
) -> Application[Any, Any, Any, Any, Any, Any]:
    settings = Settings(
        token=hello["token"],
        api_url=hello["base_url"],
        db_path=db_dir / "gpufit.sqlite3",
        log_level="WARNING",
        # The scripted users send ~10 questions each as fast as the run goes; the per-user flood throttle
        # (its own tests in tests/test_hardening_input.py) would turn the unpaced burst into notices.
        throttle_burst=8 if rate_limited else 1_000_000,
    )
    app = build_application(
        settings, request=loopback_request(), get_updates_request=loopback_lean_updates_request()
    )
    if not rate_limited:
        app.bot._rate_limiter = None  # the only change: no 30 messages/s cap
    return app


async def one_run(bot: str, *, messages: int, rate: float, db_dir: Path) -> dict[str, Any]:
    child = await start_standin(messages=messages, users=USERS, rate=rate)
    assert child.stdout is not None and child.stdin is not None
    try:
        hello = json.loads(await asyncio.wait_for(child.stdout.readline(), 60))
        if bot == "echo":
            app = echo_bot(hello)
        else:
            app = gpufit_bot(hello, db_dir, rate_limited=bot == "gpufit (shipped)")
        async with running(app, poll_timeout=POLL_TIMEOUT):
            line = await asyncio.wait_for(child.stdout.readline(), 300)
        result: dict[str, Any] = json.loads(line)
    finally:
        child.stdin.close()
        try:
            await asyncio.wait_for(child.wait(), 20)
        except TimeoutError:
            child.kill()
    return {"bot": bot, "rate": rate} | result


async def all_runs() -> dict[str, Any]:
    import bot.answer as answer_module

    runs = []
    with tempfile.TemporaryDirectory(prefix="gpufit-bench-") as tmp:
        for index, (bot, messages, rate) in enumerate(
            (
                ("echo", MESSAGES, 0.0),
                ("gpufit", MESSAGES, 0.0),
                ("echo", MESSAGES, PACED_RATE),
                ("gpufit", MESSAGES, PACED_RATE),
                ("gpufit (shipped)", SHIPPED_MESSAGES, PACED_RATE),
            )
        ):
            db_dir = Path(tmp) / str(index)
            db_dir.mkdir()
            runs.append(await one_run(bot, messages=messages, rate=rate, db_dir=db_dir))
    cache = getattr(answer_module, "_answer", None)
    info = cache.cache_info() if cache is not None and hasattr(cache, "cache_info") else None
    return {
        "runs": runs,
        "memory": proc_status(),
        "answer_cache": {"hits": info.hits, "misses": info.misses} if info else None,
    }


def rows_from(report: dict[str, Any], *, verbose: bool = True) -> list[Row]:
    runs = {(r["bot"], r["rate"]): r for r in report["runs"]}
    if verbose:
        print(
            f"== 2. end to end: {MESSAGES} questions from {USERS} users over 127.0.0.1"
            " (stand-in in its own process)"
        )
        print(
            "   bot               mode         sent  replies lost  replies/s"
            "   p50       p90       p99       max"
        )
        for r in report["runs"]:
            mode = "burst" if r["rate"] == 0 else f"{r['rate']:.0f} msg/s"
            print(
                f"   {r['bot']:17s} {mode:11s} {r['sent']:5d} {r['replies']:7d} {r['lost']:4d}"
                f"  {r['replies_per_s']:9.0f}   {fmt_ms(r['p50_s']):9s} {fmt_ms(r['p90_s']):9s}"
                f" {fmt_ms(r['p99_s']):9s} {fmt_ms(r['max_s'])}"
            )
            if r["unmatched"] or r["refused"]:
                print(f"     !! unmatched replies {r['unmatched']}, refused by the stand-in {r['refused']}")
        cache = report.get("answer_cache")
        if cache:
            print(f"   bot.answer cache over all gpufit runs: {cache['hits']} hits, {cache['misses']} misses")
    echo_burst, gpufit_burst = runs[("echo", 0.0)], runs[("gpufit", 0.0)]
    echo_paced, gpufit_paced = runs[("echo", PACED_RATE)], runs[("gpufit", PACED_RATE)]
    shipped = runs[("gpufit (shipped)", PACED_RATE)]
    ratio = gpufit_burst["replies_per_s"] / echo_burst["replies_per_s"]
    paced_ratio = gpufit_paced["replies_per_s"] / echo_paced["replies_per_s"]
    rss = report["memory"].get("VmRSS", 0)
    hwm = report["memory"].get("VmHWM", 0)
    lost = sum(r["lost"] for r in report["runs"])
    return [
        Row(
            "2 end to end",
            "burst replies/s gpufit / echo",
            f">= {TARGET_RATIO}x",
            f"{gpufit_burst['replies_per_s']:.0f} / {echo_burst['replies_per_s']:.0f} = {ratio:.2f}x",
            ratio >= TARGET_RATIO,
        ),
        Row(
            "2 end to end",
            f"p99 at {PACED_RATE:.0f} msg/s (gpufit, no limiter)",
            f"< {TARGET_P99_S * 1e3:.0f} ms",
            f"{fmt_ms(gpufit_paced['p99_s'])} (p50 {fmt_ms(gpufit_paced['p50_s'])})",
            gpufit_paced["p99_s"] < TARGET_P99_S,
        ),
        Row(
            "2 end to end",
            f"p99 at {PACED_RATE:.0f} msg/s (echo)",
            "-",
            f"{fmt_ms(echo_paced['p99_s'])} (p50 {fmt_ms(echo_paced['p50_s'])})",
        ),
        Row(
            "2 end to end",
            f"paced replies/s gpufit / echo at {PACED_RATE:.0f}",
            f">= {TARGET_RATIO}x",
            f"{gpufit_paced['replies_per_s']:.0f} / {echo_paced['replies_per_s']:.0f} = {paced_ratio:.2f}x",
            paced_ratio >= TARGET_RATIO,
        ),
        Row(
            "2 end to end",
            f"shipped (AIORateLimiter) at {PACED_RATE:.0f} msg/s",
            "-",
            f"{shipped['replies_per_s']:.0f}/s, p99 {fmt_ms(shipped['p99_s'])} ({shipped['sent']} msgs)",
        ),
        Row("2 end to end", "replies lost, all runs", "0", str(lost), lost == 0),
        Row(
            "4 memory",
            "RSS after end-to-end (peak)",
            f"< {TARGET_RSS / 2**20:.0f} MB",
            f"{rss / 2**20:.0f} MB (peak {hwm / 2**20:.0f} MB)",
            0 < rss < TARGET_RSS,
        ),
    ]


def run_in_subprocess() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.e2e", "--json"],
        capture_output=True,
        text=True,
        env=env_for_children(),
        check=False,
        timeout=900,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise RuntimeError(f"benchmarks.e2e exited with {done.returncode}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def run(*, verbose: bool = True) -> list[Row]:
    return rows_from(run_in_subprocess(), verbose=verbose)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true", help="run the bots here and print the raw report")
    if parser.parse_args().json:
        print(json.dumps(asyncio.run(all_runs())))
    else:
        from benchmarks.common import print_table

        print_table(run())
