"""The Telegram side of benchmarks 2 and 5, in its own process: the loopback Bot API stand-in, users typing.

Run by benchmarks/e2e.py and benchmarks/fresh.py as `python -m benchmarks.standin …`; it prints one JSON line
with its address, waits for the bot's first getUpdates, sends a warm-up round (one message per user, not
measured; none with --fresh, where every message is a text not asked before), then the measured load (paced
at --rate messages/s, or all at once with --rate 0), and prints one JSON line of results. It keeps serving
until its stdin closes, so the bot can stop polling cleanly.

Latency is taken inside the stand-in, from the moment an update is enqueued for getUpdates to the moment the
bot's sendMessage for that chat arrives (first-in, first-out per chat; one reply per question, since answers
are cut to one message).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections import defaultdict, deque
from typing import Any

from botapi_server import BotApiServer

from benchmarks.common import percentile
from benchmarks.questions import QUESTIONS, fresh_questions
from bot.fake_telegram import FakeTelegram

FIRST_USER = 10_001
STRIDE = 37  # coprime with 200: each user asks 10 different questions
FIRST = 20  # the first answers after a start, reported on their own


class TimedTelegram(FakeTelegram):
    """FakeTelegram that notes when each question was enqueued and when its reply came back."""

    def __init__(self) -> None:
        super().__init__(bot_username="GpufitBenchBot")
        self.pending: dict[int, deque[tuple[int, float]]] = defaultdict(deque)
        self.latencies: list[float] = []  # in reply order
        self.by_index: dict[int, float] = {}  # the same, by the question's place in the load
        self.asked = 0
        self.replies = 0
        self.unmatched = 0
        self.last_reply = 0.0
        self.polling = False
        # getUpdates answers, and the updates they carried again (already delivered once) with their JSON size
        self.polls = 0
        self.repeats = 0
        self.repeat_bytes = 0

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if not self.polling:
            self.polling = True  # calls are recorded when they end; a long poll ends much later
            self._changed_event().set()
        batch = await super()._get_updates(params)
        self.polls += 1
        for update in batch:
            if self.deliveries[update["update_id"]] > 1:
                self.repeats += 1
                self.repeat_bytes += len(json.dumps(update, ensure_ascii=False).encode())
        return batch

    def ask(self, chat_id: int, text: str) -> None:
        self.pending[chat_id].append((self.asked, time.perf_counter()))
        self.asked += 1
        self.send_text(chat_id, chat_id, text)

    def _send_message(self, params: dict[str, Any], files: Any) -> dict[str, Any]:
        result = super()._send_message(params, files)
        now = time.perf_counter()
        queue = self.pending.get(int(params.get("chat_id", 0)))
        if queue:
            index, asked_at = queue.popleft()
            self.latencies.append(now - asked_at)
            self.by_index[index] = now - asked_at
        else:
            self.unmatched += 1
        self.replies += 1
        self.last_reply = now
        return result


def fresh_plan(messages: int, users: int) -> list[tuple[int, str]]:
    """Message j comes from user j % users; no text is asked twice (benchmark 5: one question per user)."""
    return [(FIRST_USER + j % users, text) for j, text in enumerate(fresh_questions(messages))]


def load_plan(messages: int, users: int) -> list[tuple[int, str]]:
    """Message j comes from user j % users, asking question (user + round·37) % 200: interleaved users."""
    plan = []
    for j in range(messages):
        user, round_ = j % users, j // users
        plan.append((FIRST_USER + user, QUESTIONS[(user + round_ * STRIDE) % len(QUESTIONS)].text))
    return plan


async def drive(
    fake: TimedTelegram, plan: list[tuple[int, str]], rate: float, within: float
) -> dict[str, Any]:
    fake.latencies.clear()
    fake.by_index.clear()
    fake.asked = 0
    fake.unmatched = 0
    fake.polls = fake.repeats = fake.repeat_bytes = 0
    before = fake.replies
    start = time.perf_counter()
    for index, (chat_id, text) in enumerate(plan):
        if rate > 0:
            delay = start + index / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        fake.ask(chat_id, text)
    sent_in = time.perf_counter() - start
    with contextlib.suppress(AssertionError):
        await fake.wait_for(lambda: fake.replies - before >= len(plan), within=within, what="all replies")
    replies = fake.replies - before
    span = (fake.last_reply - start) if replies else float("nan")
    lat = fake.latencies
    return {
        "sent": len(plan),
        "replies": replies,
        "lost": len(plan) - replies,
        "unmatched": fake.unmatched,
        "send_s": sent_in,
        "span_s": span,
        "replies_per_s": replies / span if replies else 0.0,
        "p50_s": percentile(lat, 50),
        "p90_s": percentile(lat, 90),
        "p99_s": percentile(lat, 99),
        "max_s": max(lat) if lat else float("nan"),
        "refused": len(fake.refused()),
        "polls": fake.polls,
        "repeats": fake.repeats,
        "repeat_bytes": fake.repeat_bytes,
        "first_s": [fake.by_index.get(i, float("nan")) for i in range(min(FIRST, len(plan)))],
        "rest_p50_s": percentile([v for i, v in fake.by_index.items() if i >= FIRST], 50),
        "rest_p99_s": percentile([v for i, v in fake.by_index.items() if i >= FIRST], 99),
    }


async def main(args: argparse.Namespace) -> None:
    fake = TimedTelegram()
    for n in range(args.users):
        fake.add_user(FIRST_USER + n, f"user{n}", language_code="zh-hans" if n % 2 else "en")
    async with BotApiServer(fake) as server:
        print(json.dumps({"base_url": server.base_url, "token": fake.token}), flush=True)
        await fake.wait_for(lambda: fake.polling, within=60, what="the bot polling")
        warmup_replies = 0
        if not args.fresh:
            warm = await drive(fake, load_plan(args.users, args.users), 0, args.within)
            warmup_replies = warm["replies"]
        plan = (fresh_plan if args.fresh else load_plan)(args.messages, args.users)
        result = await drive(fake, plan, args.rate, args.within)
        result["warmup_replies"] = warmup_replies
        print(json.dumps(result), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--rate", type=float, default=100.0, help="messages/s; 0 = all at once")
    parser.add_argument("--within", type=float, default=120.0, help="seconds to wait for the replies")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="no warm-up round, and every message a text not asked before (the first answers after a start)",
    )
    asyncio.run(main(parser.parse_args()))
