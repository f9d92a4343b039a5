"""Amounts an answer carries that a question seldom does: bare numbers and requests per period (samples,
epochs and text sizes are read by entities.py, for questions and answers alike). They use the parser's
numeral table (core/parser/numbers.py) on normalized text, so '2万', '20k', '两万' and '20,000' read the
same everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.parser.numbers import MAGNITUDE_RE, context_tokens, magnitude

_MARKS = "\ue000-\ue00f"  # the parser's masks of names and quantities already read


@dataclass(frozen=True)
class Amount:
    """A number as typed: its digits, its magnitude word (k, 万, m, b …) and where it stands."""

    number: str
    unit: str
    start: int
    end: int

    @property
    def value(self) -> float:
        return magnitude(self.number, self.unit)

    @property
    def tokens(self) -> int:
        """As a context length: '32k' is 32,768 tokens, '3.2万' is 32,000."""
        return context_tokens(self.number, self.unit)


_AMOUNT = re.compile(
    rf"(?<![a-z0-9.{_MARKS}])(?P<num>\d+(?:,\d{{3}})*(?:\.\d+)?)\s*(?P<unit>{MAGNITUDE_RE})?(?![a-z0-9])"
)


def amounts(text: str) -> list[Amount]:
    """Every number in normalized text, in order ('1,000' is one number)."""
    return [
        Amount(m.group("num").replace(",", ""), (m.group("unit") or "").lower(), m.start(), m.end())
        for m in _AMOUNT.finditer(text)
    ]


# Requests per period, to requests per day.
_PER_DAY: tuple[tuple[re.Pattern[str], float], ...] = (
    (re.compile(r"qps|per\s*s(?:ec(?:ond)?)?(?![a-z])|/\s*s(?![a-z])|a\s+second|每秒"), 86_400.0),
    (re.compile(r"per\s*min(?:ute)?(?![a-z])|/\s*min|a\s+minute|每分钟|每分"), 1_440.0),
    (
        re.compile(r"per\s*h(?:our)?(?![a-z])|/\s*h(?:our)?(?![a-z])|an\s+hour|hourly|每小时|每个小时|/小时"),
        24.0,
    ),
    (re.compile(r"per\s*week|a\s+week|weekly|每周|每星期"), 1 / 7),
    (re.compile(r"per\s*month|a\s+month|monthly|每月|每个月"), 1 / 30),
)


def requests_per_day(text: str) -> float | None:
    """'20k a day' → 20,000; '5 per second' → 432,000; '每小时 300 次' → 7,200. None without a number."""
    found = [a for a in amounts(text) if a.value > 0]
    if not found:
        return None
    factor = next((f for pattern, f in _PER_DAY if pattern.search(text)), 1.0)
    return found[0].value * factor
