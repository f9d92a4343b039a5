"""Large alternations of names compiled so that a search skips, in one step, every position no name can start
at.

Python's regular-expression engine tries a pattern at every position of the text, and an alternation of many
names (every runtime's words, every card alias) tries each name there: a 30-character question cost ~35 µs
per search of the runtimes' pattern, ~0.1 ms of each answer's parse. Prefixed by a lookahead for the
characters a match can begin with, the pattern fails at almost every position on one character test.

The lookahead changes no match: it is worked out from the pattern itself (its parse tree), as every character
the first character consumed by any match can be (zero-width assertions before it skipped, optional parts
followed through), and it is only added when that set is known, finite and the pattern cannot match the
empty string; otherwise the pattern is compiled as it is. Under IGNORECASE the lookahead's class is matched
case-insensitively, like the literals it comes from.
"""

from __future__ import annotations

import re
from re import _constants as sre  # type: ignore[attr-defined]  # the standard library's own regex parser
from re import _parser as sre_parse  # type: ignore[attr-defined]  # (what re.compile runs; typeshed omits it)
from typing import Any

# A character class wider than this (a long range) is not worth a lookahead: the pattern stays as it is.
MAX_FIRST_CHARS = 512

_ZERO_WIDTH = (sre.ASSERT, sre.ASSERT_NOT, sre.AT)
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


class _UnknownFirstCharsError(Exception):
    """The first characters cannot be listed (any character, a category, a back reference…)."""


def _class_chars(items: list[tuple[Any, Any]]) -> set[str]:
    chars: set[str] = set()
    for op, av in items:
        if op is sre.LITERAL:
            chars.add(chr(av))
        elif op is sre.RANGE and av[1] - av[0] < MAX_FIRST_CHARS:
            chars.update(chr(code) for code in range(av[0], av[1] + 1))
        else:  # NEGATE, CATEGORY (\s, \d…), a long range
            raise _UnknownFirstCharsError
    return chars


def _first(sequence: Any) -> tuple[set[str], bool]:
    """(the characters a match of `sequence` can begin with, whether it can match the empty string)."""
    chars: set[str] = set()
    for op, av in sequence:
        if op in _ZERO_WIDTH:
            continue  # consumes nothing: the first character comes after it
        if op is sre.LITERAL:
            return chars | {chr(av)}, False
        if op is sre.IN:
            return chars | _class_chars(av), False
        if op is sre.SUBPATTERN:
            _group, add_flags, del_flags, inner = av
            if add_flags or del_flags:
                # flags switched inside: the class would be matched under other flags
                raise _UnknownFirstCharsError
            found, empty = _first(inner)
        elif op is sre.ATOMIC_GROUP:
            found, empty = _first(av)
        elif op is sre.BRANCH:
            found, empty = set(), False
            for branch in av[1]:
                branch_chars, branch_empty = _first(branch)
                found |= branch_chars
                empty = empty or branch_empty
        elif op in _REPEATS:
            low, _high, inner = av
            found, empty = _first(inner)
            empty = empty or low == 0
        else:  # ANY, NOT_LITERAL, GROUPREF, GROUPREF_EXISTS…
            raise _UnknownFirstCharsError
        chars |= found
        if not empty:
            return chars, False
    return chars, True


def first_chars(source: str, flags: int = 0) -> frozenset[str] | None:
    """Every character a match of `source` can begin with, or None when that cannot be told (or a match can
    be empty, which begins with no character)."""
    try:
        chars, empty = _first(sre_parse.parse(source, flags))
    except _UnknownFirstCharsError:
        return None
    if empty or not chars or len(chars) > MAX_FIRST_CHARS:
        return None
    return frozenset(chars)


def screened(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, with the lookahead for its first characters when they are known: the same
    matches, spans and groups, found without trying the whole pattern at the positions none can start at."""
    chars = first_chars(source, flags)
    if chars is None:
        return re.compile(source, flags)
    allowed = "".join(re.escape(char) for char in sorted(chars))
    return re.compile(f"(?=[{allowed}])(?:{source})", flags)


__all__ = ["MAX_FIRST_CHARS", "first_chars", "screened"]
