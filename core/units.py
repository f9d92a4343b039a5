"""Byte units and human-typed quantities ("13B", "2T", "32k").

Everything inside gpufit is bytes; GB (10^9) vs GiB (2^30) only appears when rendering.
"""

from __future__ import annotations

import re

KIB = 1024
MIB = 1024**2
GIB = 1024**3
GB = 10**9

_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}
_QUANTITY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmbgt]?)\s*$", re.IGNORECASE)


def parse_quantity(text: str) -> float:
    """'2T' -> 2e12, '500M' -> 5e8, '13b' -> 1.3e10, '1000' -> 1000. Raises ValueError otherwise."""
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(f"not a quantity: {text!r}")
    return float(match.group(1)) * _SUFFIX[match.group(2).lower()]


def parse_tokens_length(text: str) -> int:
    """Context lengths are binary when written with k: '32k' is 32,768 tokens, '4096' is 4,096."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(k?)\s*$", text, re.IGNORECASE)
    if not match:
        raise ValueError(f"not a token count: {text!r}")
    value = float(match.group(1))
    return int(value * 1024) if match.group(2) else int(value)


def gib(n_bytes: float) -> float:
    return n_bytes / GIB


def gb(n_bytes: float) -> float:
    return n_bytes / GB
