"""Numbers as people type them: Chinese numerals (七十亿, 两张, 千亿), magnitudes (130亿, 5w, 2T), k-contexts.

Chinese numerals are rewritten to Arabic digits before any other pattern runs, so every later
pattern only has to understand one way of writing a number.
"""

from __future__ import annotations

import re

from core.regex_screen import gated

ZH_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "俩": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
ZH_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_SMALL = "零〇一二两俩三四五六七八九十百千"

# What may follow a Chinese numeral for it to be a quantity (and not e.g. 一下 / 千问 / 十分).
_ZH_FOLLOWERS = (
    r"万|亿|张|卡|块|个|台|片|位|比特|bit|b(?![a-z])|k(?![a-z])|元|美元|刀|路|并发|人|倍|小时|token|词元|批"
)
_ZH_NUMERAL = gated(rf"(?<![{_ZH_SMALL}])([{_ZH_SMALL}]+)(?=\s*(?:{_ZH_FOLLOWERS}))")

# English number words, only where a count follows (two 4090s, four gpus).
EN_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "twelve": 12, "sixteen": 16, "thirty-two": 32, "a couple of": 2, "a pair of": 2,
}  # fmt: skip

MAGNITUDES = {
    "": 1.0,
    "k": 1e3,
    "千": 1e3,
    "w": 1e4,
    "万": 1e4,
    "m": 1e6,
    "million": 1e6,
    "百万": 1e6,
    "千万": 1e7,
    "亿": 1e8,
    "百亿": 1e10,
    "千亿": 1e11,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "t": 1e12,
    "trillion": 1e12,
    "万亿": 1e12,
}

# A number and an optional magnitude word, longest magnitude first.
MAGNITUDE_RE = r"(?:万亿|千亿|百亿|千万|百万|trillion|billion|million|bn|亿|万|千|[kwmbt])"
NUMBER_RE = r"\d+(?:\.\d+)?"


def small_zh_to_int(text: str) -> int | None:
    """'六十五' -> 65, '十二' -> 12, '两' -> 2, '一千二百' -> 1200, '千' -> 1000; None if not a numeral."""
    total = 0
    digit: int | None = None
    for char in text:
        if char in ZH_DIGITS:
            # '一二' style digit strings read positionally
            digit = ZH_DIGITS[char] if digit is None else digit * 10 + ZH_DIGITS[char]
        elif char in ZH_SMALL_UNITS:
            total += (1 if digit is None else digit) * ZH_SMALL_UNITS[char]
            digit = None
        else:
            return None
    if digit is not None:
        total += digit
    return total


def _arabic(match: re.Match[str]) -> str:
    value = small_zh_to_int(match.group(1))
    return match.group(1) if value is None else f" {value}"  # a space: '一小时' after 'h100' must not glue


def arabize(text: str) -> str:
    """Chinese numerals that count something become digits: '七十亿' -> '70亿', '两张' -> '2张'."""
    return _ZH_NUMERAL.sub(_arabic, text)


def magnitude(number: str, unit: str | None) -> float:
    """'130', '亿' -> 1.3e10; '5', 'w' -> 5e4; unknown units count as 1."""
    return float(number) * MAGNITUDES.get((unit or "").strip().lower(), 1.0)


def context_tokens(number: str, unit: str | None) -> int:
    """Context lengths are binary when written with k/m: '8k' = 8192, '1m' = 1048576 ('million' is
    decimal)."""
    value = float(number)
    unit = (unit or "").lower()
    if unit == "k":
        return int(value * 1024)
    if unit == "m":
        return int(value * 1024 * 1024)
    if unit in ("w", "万"):
        return int(value * 10_000)
    if unit == "million":  # spelled out, as written: '10 million tokens' = 10,000,000
        return int(value * 1_000_000)
    return int(value)
