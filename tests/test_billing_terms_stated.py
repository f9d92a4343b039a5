"""A weekly or daily price the question states ('包周 800，按量 6 一小时', '$150 a week or $2/h'): it stands
for its kind beside the hourly one, and the break-even per day is of that term (price ÷ (days × hourly)) when
no monthly price is in play, said as that term's, in both languages."""

from __future__ import annotations

from typing import Any

import pytest

from bot.answer import answer
from core.parser import parse


def _answer(text: str) -> dict[str, Any]:
    data: Any = answer(text).to_json()
    facts: dict[str, Any] = data["answer"]
    return facts


def test_a_weekly_and_a_daily_price_are_read() -> None:
    weekly = parse("a100 80g 包周 800 块，按量 6 块一小时，我这周每天跑 10 小时，哪个划算").query
    assert weekly is not None
    said = (weekly.stated_weekly_price, weekly.stated_hourly_price, weekly.hours_per_day)
    assert said == (800.0, 6.0, 10.0)
    daily = parse("4090 包天 40 块 按量 2 块一小时 每天跑 22 小时").query
    assert daily is not None and (daily.stated_daily_price, daily.stated_hourly_price) == (40.0, 2.0)
    english = parse("A100 80GB: $150 a week or $2/h on demand, we use it 14 hours a day — which?").query
    assert english is not None and (english.stated_weekly_price, english.stated_hourly_price) == (150.0, 2.0)


@pytest.mark.parametrize(
    ("text", "kind", "break_even", "sentence"),
    [
        ("a100 80g 包周 800，按量 6 块一小时，每天跑 10 小时", "on-demand", 19.0, "包周才划算"),
        ("A100 80GB: $150 a week or $2/h on demand, 14 hours a day?", "weekly", 10.7, "Weekly pays off"),
    ],
)
def test_the_break_even_is_the_stated_terms(text: str, kind: str, break_even: float, sentence: str) -> None:
    facts = _answer(text)
    billing = facts["billing"]
    assert billing["kind"] == kind
    assert billing["break_even_kind"] == "weekly"
    assert billing["break_even_hours_per_day"] == break_even  # 800 ÷ (7 × 6) = 19.0; 150 ÷ (7 × 2) = 10.7
    assert sentence in facts["text"]


def test_a_monthly_price_keeps_the_monthly_break_even() -> None:
    billing = _answer("包月 h20 一个月 1.2万，按量 25块一小时，我们每天跑 14 小时，选哪个")["billing"]
    assert (billing["break_even_kind"], billing["break_even_hours_per_day"]) == ("monthly", 16.0)
