"""One alias-to-regex builder for card and model names, so both accept the same ways of typing a name.

A name is cut into digits, letters and other signs; between pieces any separator may be typed or left out
('rtx4090', 'RTX 4090', 'rtx-4090', 'qwen2.5:7b'), except that two numbers keep one ('3 1' is not '31'); a
size unit follows its number with at most spaces ('7b', '7 b'); a memory suffix accepts g / gb / gib.
"""

from __future__ import annotations

import re

SEPARATOR = r"[\s\-_/:]"
_PIECES = re.compile(r"\d+(?:\.\d+)?|[a-z]+|[^\sa-z\d\-_/:.]+")
_SIZE_UNITS = ("b", "m")


def alias_pattern(key: str) -> str:
    """The regex (without anchors) that matches `key`, a normalized alias, as people type it."""
    pieces = _PIECES.findall(key)
    out: list[str] = []
    for i, piece in enumerate(pieces):
        after_number = i > 0 and pieces[i - 1][0].isdigit()
        if i:
            if after_number and piece[0].isdigit():
                out.append(f"{SEPARATOR}+")
            elif after_number and piece in _SIZE_UNITS:
                out.append(r"\s*")
            else:
                out.append(f"{SEPARATOR}*")
        out.append(r"(?:gib|gb|g)" if after_number and piece == "g" else re.escape(piece))
    return "".join(out)
