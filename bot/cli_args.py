"""Command-line values checked where they are read: a bad number is one line and exit code 2, never a
pydantic traceback from deep inside the estimator.

The limits are not restated here: each type reads them from the field of the model the value goes into
(`Query`, `VisionJob`), so the command line refuses exactly what the estimator would.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TypeVar

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel

_N = TypeVar("_N", int, float)
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class OneLineParser(argparse.ArgumentParser):
    """argparse, but an error is one line naming the flag and how to get help (exit code 2)."""

    _seen: tuple[str, ...] = ()

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._seen = tuple(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def _unknown_options(self) -> list[str]:
        """The flags in what this parser was given that none of its options (or their abbreviations) name."""
        unknown = []
        for arg in self._seen:
            if arg == "--":
                break
            if not arg.startswith("-") or arg == "-" or _NEGATIVE_NUMBER.match(arg):
                continue
            flag = arg.split("=", 1)[0]
            known = self._option_string_actions
            if flag in known or (
                self.allow_abbrev and flag.startswith("--") and any(k.startswith(flag) for k in known)
            ):
                continue
            unknown.append(arg)
        return unknown

    def error(self, message: str) -> NoReturn:
        # argparse checks required arguments before it looks at unknown flags, so `gpufit ask --bogus`
        # would say "question required": the typo is the cause, name it.
        unknown = self._unknown_options()
        if unknown and "required" in message:
            message = f"unrecognized arguments: {' '.join(unknown)}"
        print(f"{self.prog}: {message} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(2)


def _limits(model: type[BaseModel], field: str) -> tuple[float | None, float | None, bool]:
    """(low, high, low is exclusive) of a pydantic field's constraints."""
    low: float | None = None
    high: float | None = None
    exclusive = False
    for rule in model.model_fields[field].metadata:
        if isinstance(rule, Ge):
            low = float(rule.ge)  # type: ignore[arg-type]
        elif isinstance(rule, Gt):
            low, exclusive = float(rule.gt), True  # type: ignore[arg-type]
        elif isinstance(rule, Le):
            high = float(rule.le)  # type: ignore[arg-type]
        elif isinstance(rule, Lt):
            high = float(rule.lt)  # type: ignore[arg-type]
    return low, high, exclusive


def _n(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,g}"


def _range_words(low: float | None, high: float | None, exclusive: bool) -> str:
    if low is not None and high is not None and not exclusive:
        return f"from {_n(low)} to {_n(high)}"
    if low is not None:
        return f"above {_n(low)}" if exclusive else f"{_n(low)} or more"
    return f"at most {_n(high)}" if high is not None else "a number"


def _checked(value: float, text: str, what: str, bounds: tuple[float | None, float | None, bool]) -> None:
    low, high, exclusive = bounds
    too_low = low is not None and (value <= low if exclusive else value < low)
    if too_low or (high is not None and value > high):
        got = repr(text) if text.strip() == _n(value) else f"{text!r} = {_n(value)}"
        raise argparse.ArgumentTypeError(f"{what} must be {_range_words(*bounds)} (got {got})")


def _reader(
    model: type[BaseModel], field: str, what: str, expected: str, parse: Callable[[str], _N | None]
) -> Callable[[str], _N]:
    """An argparse type: `parse` reads the text (None: it is not one), then `model.field`'s limits apply;
    either failure is one line naming the flag ('batch must be a whole number (got 'x')')."""
    bounds = _limits(model, field)

    def read(text: str) -> _N:
        value = parse(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"{what} must be {expected} (got {text!r})")
        _checked(value, text, what, bounds)
        return value

    read.__name__ = field
    return read


def _number(kind: Callable[[str], _N]) -> Callable[[str], _N | None]:
    def parse(text: str) -> _N | None:
        try:
            return kind(text)
        except ValueError:
            return None

    return parse


def int_of(model: type[BaseModel], field: str, what: str) -> Callable[[str], int]:
    """A whole number within `model.field`'s limits ('--batch -4' → 'batch must be from 1 to 1,000,000')."""
    whole = _number(lambda text: int(text.strip().replace("_", "").replace(",", "")))
    return _reader(model, field, what, "a whole number", whole)


def float_of(model: type[BaseModel], field: str, what: str) -> Callable[[str], float]:
    return _reader(model, field, what, "a number", _number(float))


_QUANTITY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmbgt]?)\s*$", re.IGNORECASE)
_TOKENS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([km]?)\s*$", re.IGNORECASE)
_DECIMAL = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_BINARY = {"": 1, "k": 1024, "m": 1024**2}


def quantity_of(
    model: type[BaseModel], field: str, what: str, *, scale: float = 1.0, example: str
) -> Callable[[str], float]:
    """'13B', '2T', '500M' (decimal units), divided by `scale` ('13B' with scale 1e9 → 13)."""

    def parse(text: str) -> float | None:
        match = _QUANTITY.match(text)
        if not match:
            return None
        value = float(match.group(1)) * _DECIMAL[match.group(2).lower()]
        return value / scale if scale != 1.0 and value >= 1e6 else value  # a plain '13' means billions

    return _reader(model, field, what, f"a number like {example}", parse)


def tokens_of(model: type[BaseModel], field: str, what: str) -> Callable[[str], int]:
    """A context length: '4096', '32k' (32,768), '1m' (1,048,576), within the field's limits."""

    def parse(text: str) -> int | None:
        match = _TOKENS.match(text)
        return int(float(match.group(1)) * _BINARY[match.group(2).lower()]) if match else None

    return _reader(model, field, what, "a token count like 4096, 32k or 1m", parse)
