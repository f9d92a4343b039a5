"""A rental's length (issue 19's billing advice): "连续跑两周" is 24 hours a day for 14 days, and over 14
days a monthly term costs its whole month while hourly billing costs only the hours — so a two-week job is
not advised a month, whatever the break-even per day says. A use per day alone still compares a 30-day
month."""

from __future__ import annotations

from typing import Any

from bot.answer import answer
from core.parser import parse


def _billing(text: str) -> dict[str, Any]:
    data: Any = answer(text).to_json()
    facts: dict[str, Any] = data["answer"]["billing"]
    return facts


def test_the_length_of_a_rental_is_read() -> None:
    query = parse("4090 按量和包周哪个划算 我要连续跑两周训练").query
    assert query is not None
    assert (query.hours_per_day, query.rental_days) == (24.0, 14.0)
    english = parse("autodl 4090 monthly or hourly? I need it 24/7 for two weeks").query
    assert english is not None and english.rental_days == 14.0
    # a day's use is no rental length
    daily = parse("autodl 4090 包月多少钱 我一天大概用10个小时 划算吗").query
    assert daily is not None and (daily.hours_per_day, daily.rental_days) == (10.0, None)


def test_two_weeks_around_the_clock_rent_by_the_hour() -> None:
    facts = _billing("4090 按量和包周哪个划算 我要连续跑两周训练")
    assert facts["days"] == 14.0
    assert facts["kind"] != "monthly"


def test_a_month_around_the_clock_still_takes_the_month() -> None:
    assert _billing("autodl 4090 包月还是按量 每天24小时跑 连续跑一个月")["kind"] == "monthly"
