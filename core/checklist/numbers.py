"""Numbers as people type them in an answer: '70亿', 'about 32k', '两张', '5,000'."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from core.parser.numbers import ZH_DIGITS, ZH_SMALL_UNITS


class Number(BaseModel):
    """A number found in free text, with the multiplier its suffix gave (k, 万, 亿, B ...)."""

    model_config = ConfigDict(frozen=True)

    value: float
    multiplier: float = 1.0
    suffix: str = ""
    start: int
    end: int

    @property
    def total(self) -> float:
        return self.value * self.multiplier

    def tokens(self) -> int:
        """Context lengths: '32k' is 32,768 tokens (binary k), '3.2万' is 32,000."""
        if self.suffix.lower() == "k" and float(self.value).is_integer():
            return int(self.value) * 1024
        return int(self.total)


_SUFFIXES: dict[str, float] = {
    "万亿": 1e12,
    "千万": 1e7,
    "百万": 1e6,
    "亿": 1e8,
    "万": 1e4,
    "千": 1e3,
    "k": 1e3,
    "w": 1e4,
    "m": 1e6,
    "mn": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "g": 1e9,
    "t": 1e12,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
    "thousand": 1e3,
}
_NUMBER = re.compile(
    r"(?P<cn>[零〇一二两三四五六七八九十百千万亿]+)"
    r"|(?P<num>\d+(?:,\d{3})*(?:\.\d+)?)\s*"
    r"(?P<suffix>万亿|千万|百万|亿|万|千|million|billion|trillion|thousand|mn|bn|[kwmbgt](?![a-z]))?",
    re.IGNORECASE,
)
_CN_BIG_UNITS = {"万": 10_000, "亿": 100_000_000}


def chinese_number(text: str) -> float | None:
    """'七十' → 70, '两' → 2, '一百二十八' → 128, '七十亿' → 7e9; None if it is not one."""
    total = 0.0
    section = 0.0
    digit: float | None = None
    for char in text:
        if char in ZH_DIGITS:
            digit = ZH_DIGITS[char]
        elif char in ZH_SMALL_UNITS:
            section += (digit if digit is not None else 1) * ZH_SMALL_UNITS[char]
            digit = None
        elif char in _CN_BIG_UNITS:
            section += digit or 0
            total = (
                (total + section) * _CN_BIG_UNITS[char]
                if char == "亿"
                else total + section * _CN_BIG_UNITS[char]
            )
            section = 0
            digit = None
        else:
            return None
    result = total + section + (digit or 0)
    return result if result > 0 else None


def find_numbers(text: str) -> list[Number]:
    """Every number in an answer, in order: '70亿' → 7e9, 'about 32k' → 32 × k, '两张' → 2, '5,000' → 5000."""
    found: list[Number] = []
    for match in _NUMBER.finditer(text):
        if match.group("cn"):
            value = chinese_number(match.group("cn"))
            if value is not None:
                found.append(Number(value=value, start=match.start(), end=match.end()))
            continue
        value = float(match.group("num").replace(",", ""))
        suffix = match.group("suffix") or ""
        multiplier = _SUFFIXES.get(suffix.lower(), 1.0)
        found.append(
            Number(value=value, multiplier=multiplier, suffix=suffix, start=match.start(), end=match.end())
        )
    return found


_SIZE_WORDS = re.compile(
    r"params?|parameters?|billion|million|model|size|about|around|roughly|approx\w*|dense"
    r"|参数量?|的|模型|大概|左右|大约|约|规模",
    re.IGNORECASE,
)


def params_b_from_text(text: str) -> float | None:
    """A model size: '7B', '70亿', '7', '500M', '1.5b parameters' → billions; None if no number."""
    numbers = find_numbers(text)
    if len(numbers) != 1:
        return None
    number = numbers[0]
    rest = _SIZE_WORDS.sub(" ", text[: number.start] + " " + text[number.end :])
    if re.search(r"[A-Za-z\u4e00-\u9fff]{2,}", rest):
        return None  # a name around the number ("llama-9000-ultra") is not a bare size
    if number.multiplier == 1.0:
        return number.value if number.value < 1e5 else number.value / 1e9  # a bare "7" means 7B
    if number.suffix.lower() in ("k", "千", "w", "万") and number.total < 1e6:
        return None  # "32k" is a context, not a model
    return number.total / 1e9
