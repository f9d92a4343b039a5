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

`gated` goes further for the parser's ~300 keyword patterns: the strings one of which every match contains
are read off the same parse tree ('epoch' for the one of '3 epochs', {'token', '词元'} for `tokens?|词元`),
and where a text holds none of them the pattern is not run at all (no match, nothing found, the text
unchanged). tests/test_regex_screen.py checks on random patterns and texts, and on every corpus question
for each of the parser's patterns, that a gate never hides a match.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
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


# -- long alternations of names, by first character -----------------------------------------------------
#
# The engine tries an alternation's branches one after another at each position; with ~800 card aliases that
# is ~800 first-character checks wherever a name could start. Branches that begin with a plain character,
# grouped by it in their order ('a(?:pple…|100…)|h(?:100…|20…)'), match exactly as before: at a position
# only the group of its character can match, and within it the branches are tried in their order, as they
# were; the engine now checks one character per group.


def by_first_char(branches: Sequence[str]) -> str:
    """`"|".join(branches)`, with the branches grouped by the plain character each begins with (in order of
    first appearance, each group's branches in their order): the same matches, tried in the same order. As
    written when a branch does not begin with a plain character (a class, a group, a repeated one…) or
    captures a group."""
    groups: dict[str, list[str]] = {}
    for branch in branches:
        first = branch[:1]
        if not first or not (first.isalnum() or ord(first) > 127) or first != re.escape(first):
            return "|".join(branches)
        parsed = sre_parse.parse(branch)
        rest = branch[1:]
        if not parsed.data or parsed.data[0] != (sre.LITERAL, ord(first)):
            return "|".join(branches)  # the first character is repeated, or the branch is an alternation
        if parsed.state.groups > 1:
            return "|".join(branches)  # a group: moved, the branches would number their groups otherwise
        if _tree(sre_parse.parse(rest).data) != _tree(parsed.data[1:]):
            return "|".join(branches)  # the rest is not the branch less its first character
        groups.setdefault(first, []).append(rest)
    return "|".join(
        f"{first}(?:{'|'.join(rests)})" if len(rests) > 1 else f"{first}{rests[0]}" if _atomic(rests[0])
        else f"{first}(?:{rests[0]})"
        for first, rests in groups.items()
    )  # fmt: skip


def _tree(node: Any) -> Any:
    """A parse tree as nested tuples, to compare two (the parser's subpatterns compare by identity)."""
    if isinstance(node, sre_parse.SubPattern):
        return ("sub", _tree(node.data))
    if isinstance(node, (list, tuple)):
        return tuple(_tree(item) for item in node)
    return node


def _atomic(source: str) -> bool:
    """Whether `source` can follow a character as it is (no alternation at its top level)."""
    return not any(op is sre.BRANCH for op, _ in sre_parse.parse(source).data) and "|" not in source


# -- the literals every match contains ------------------------------------------------------------------
#
# Most of the parser's patterns find nothing in most messages ('epochs', '每条…字', 'infiniband'), yet a
# failed search still runs the pattern at every position of the text (~1–2 µs a message each, ~130 of them).
# Every match of most patterns contains one of a few strings ('epoch', '轮', '遍'), read off the pattern's
# parse tree; when none of them is in the text, no search can find anything, and a substring test (or one
# alternation of plain strings, which the engine scans for in C) says so in a fraction of the time.

MAX_LITERALS = 48  # alternatives kept while strings are combined, and the most a gate tests
MAX_LITERAL_LEN = 24


class _Node:
    """What a part of a pattern matches, as far as it can be listed: `exact`, every string it can match when
    they are few (None otherwise), and `needs`, strings one of which every match of it contains (None: none
    known)."""

    __slots__ = ("exact", "needs")

    def __init__(self, exact: frozenset[str] | None, needs: frozenset[str] | None) -> None:
        self.exact = exact
        self.needs = needs


_NOTHING_KNOWN = _Node(None, None)
_EMPTY = _Node(frozenset({""}), None)


def _minimal(strings: frozenset[str]) -> frozenset[str]:
    """The strings without those that contain another one (a text holding 'tokens' holds 'token')."""
    ordered = sorted(strings, key=len)
    kept: list[str] = []
    for string in ordered:
        if not any(shorter in string for shorter in kept):
            kept.append(string)
    return frozenset(kept)


def _selectivity(strings: frozenset[str]) -> tuple[int, int]:
    """How rarely a text holds one of `strings`, roughly: longer strings and fewer of them are rarer (a
    Chinese character counts as two letters)."""
    shortest = min(sum(1 if ord(char) < 128 else 2 for char in string) for string in strings)
    return shortest, -len(strings)


def _better(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if _selectivity(a) >= _selectivity(b) else b


def _as_needs(node: _Node) -> frozenset[str] | None:
    """The strings one of which every match of `node` contains."""
    exact = node.exact
    if exact is not None and "" not in exact and len(exact) <= MAX_LITERALS:
        return _better(_minimal(exact), node.needs)
    return node.needs


def _class_node(items: list[tuple[Any, Any]]) -> _Node:
    try:
        chars = _class_chars(items)
    except _UnknownFirstCharsError:
        return _NOTHING_KNOWN
    if not chars or len(chars) > MAX_LITERALS:
        return _NOTHING_KNOWN
    return _Node(frozenset(chars), None)


def _sequence_node(sequence: Any) -> _Node:
    """A concatenation: runs of parts with exact strings are combined ('epoch' + 's?' -> epoch, epochs); the
    sequence needs the rarest of its runs' strings and its parts' needs."""
    run: frozenset[str] | None = frozenset({""})
    whole: frozenset[str] | None = frozenset({""})  # the exact strings of the whole sequence, while known
    needs: frozenset[str] | None = None
    for op, av in sequence:
        node = _item_node(op, av)
        needs = _better(needs, node.needs)
        if node.exact is not None and run is not None:
            combined = frozenset(a + b for a in run for b in node.exact)
            if len(combined) <= MAX_LITERALS and all(len(s) <= MAX_LITERAL_LEN for s in combined):
                run = combined
                whole = combined if whole is not None else None
                continue
        if run is not None and "" not in run:
            needs = _better(needs, _minimal(run))
        whole = None
        run = node.exact if node.exact is not None else frozenset({""})
    if run is not None and "" not in run:
        needs = _better(needs, _minimal(run))
    return _Node(whole, needs)


def _item_node(op: Any, av: Any) -> _Node:
    if op in _ZERO_WIDTH:
        return _EMPTY  # consumes nothing (what a lookaround needs is not counted)
    if op is sre.LITERAL:
        return _Node(frozenset({chr(av)}), None)
    if op is sre.IN:
        return _class_node(av)
    if op is sre.SUBPATTERN:
        _group, add_flags, del_flags, inner = av
        if add_flags or del_flags:
            return _NOTHING_KNOWN  # matched under other flags than the gate's
        return _sequence_node(inner)
    if op is sre.ATOMIC_GROUP:
        return _sequence_node(av)
    if op is sre.BRANCH:
        exact: frozenset[str] | None = frozenset()
        needs: frozenset[str] | None = frozenset()
        for branch in av[1]:
            node = _sequence_node(branch)
            exact = exact | node.exact if exact is not None and node.exact is not None else None
            branch_needs = _as_needs(node)
            needs = needs | branch_needs if needs is not None and branch_needs is not None else None
        if exact is not None and len(exact) > MAX_LITERALS:
            exact = None
        if needs is not None and len(needs) > MAX_LITERALS:
            needs = None
        return _Node(exact, _minimal(needs) if needs is not None else None)
    if op in _REPEATS:
        low, high, inner = av
        node = _sequence_node(inner)
        if low == 0:
            if high == 1 and node.exact is not None:
                return _Node(node.exact | {""}, None)
            return _Node(None, None)
        if low == high == 1:
            return node
        return _Node(None, _as_needs(node))
    return _NOTHING_KNOWN  # ANY, NOT_LITERAL, GROUPREF, GROUPREF_EXISTS…


def needed_literals(source: str, flags: int = 0) -> tuple[frozenset[str], int] | None:
    """(strings one of which every match of `source` contains, the flags they are matched under), or None
    when no such strings are known (a pattern of digits and classes, one that can match nothing…)."""
    parsed = sre_parse.parse(source, flags)
    needs = _as_needs(_sequence_node(parsed))
    if not needs or "" in needs:
        return None
    return needs, parsed.state.flags & (re.IGNORECASE | re.ASCII | re.UNICODE)


_MAX = sys.maxsize


class Gated:
    """A compiled pattern behind a test for the strings every match of it contains: when the text holds
    none, every method answers as the pattern would on a text without a match (no match, nothing found,
    the text unchanged), without running it. Offers the methods of `re.Pattern` the parser uses."""

    __slots__ = ("_gate", "_literal", "compiled", "flags", "groupindex", "groups", "literals", "pattern")

    def __init__(self, compiled: re.Pattern[str], literals: frozenset[str], flags: int) -> None:
        self.compiled = compiled
        self.pattern = compiled.pattern
        self.flags = compiled.flags
        self.groups = compiled.groups
        self.groupindex = compiled.groupindex
        self.literals = literals
        only = next(iter(literals)) if len(literals) == 1 and not flags & re.IGNORECASE else None
        self._literal = only  # one plain string: a substring test
        # several (or matched ignoring case): one alternation of them, which the engine scans for in C (on
        # the parser's own calls, a third less time than a substring test of each string)
        alternation = "|".join(re.escape(literal) for literal in sorted(literals))
        self._gate: Callable[[str], re.Match[str] | None] = re.compile(alternation, flags).search

    def holds(self, string: str) -> bool:
        """Whether `string` holds one of the strings every match contains (a match is possible)."""
        literal = self._literal
        if literal is not None:
            return literal in string
        return self._gate(string) is not None

    def search(self, string: str, pos: int = 0, endpos: int = _MAX) -> re.Match[str] | None:
        literal = self._literal  # holds(), written out: the commonest call (~120 a message)
        if (literal not in string) if literal is not None else (self._gate(string) is None):
            return None
        return self.compiled.search(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = _MAX) -> Iterator[re.Match[str]]:
        literal = self._literal  # holds(), written out: the next commonest (~60 a message)
        if (literal not in string) if literal is not None else (self._gate(string) is None):
            return iter(())
        return self.compiled.finditer(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = _MAX) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos) if self.holds(string) else None

    def fullmatch(self, string: str, pos: int = 0, endpos: int = _MAX) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos) if self.holds(string) else None

    def findall(self, string: str, pos: int = 0, endpos: int = _MAX) -> list[Any]:
        return self.compiled.findall(string, pos, endpos) if self.holds(string) else []

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count) if self.holds(string) else string

    def __repr__(self) -> str:
        return f"Gated({self.compiled!r}, needs one of {sorted(self.literals)!r})"


# What the parser's patterns are: compiled as written, or behind their gate.
TextPattern = re.Pattern[str] | Gated


class AnyOf:
    """Patterns a reader runs on one text, each finding nothing unless its own gate holds: one test of all
    their strings at once says whether any of them can match. A reader that finds nothing in most messages
    (a table of twenty flags, the typo rewrites) is then skipped whole on one scan instead of twenty.
    A member with no gate (no strings known) makes the test always hold."""

    __slots__ = ("_gate", "literals", "patterns")

    def __init__(self, *members: object) -> None:
        patterns = tuple(_patterns_in(members))
        self.patterns = patterns
        literals: set[str] = set()
        flags = re.UNICODE
        self._gate: Callable[[str], re.Match[str] | None] | None = None
        self.literals: frozenset[str] | None = None
        if not patterns or not all(isinstance(pattern, Gated) for pattern in patterns):
            return
        for pattern in patterns:
            assert isinstance(pattern, Gated)
            literals |= pattern.literals
            flags |= pattern.flags & re.IGNORECASE  # case-blind for all: still needed by every match
        self.literals = _minimal(frozenset(literals))
        alternation = "|".join(re.escape(literal) for literal in sorted(self.literals))
        self._gate = re.compile(alternation, flags).search

    def holds(self, string: str) -> bool:
        """Whether some member can match in `string` (False: none of them finds anything there)."""
        gate = self._gate
        return gate is None or gate(string) is not None


def _patterns_in(members: Iterable[object]) -> Iterator[TextPattern]:
    """The patterns in `members`, tables of them (tuples, with their other columns) looked into."""
    for member in members:
        if isinstance(member, (re.Pattern, Gated)):
            yield member
        elif isinstance(member, tuple):
            yield from _patterns_in(member)


def gated(source: str, flags: int = 0) -> TextPattern:
    """`screened(source, flags)`, behind a test for the strings every match contains when they are known:
    the same matches, spans and groups, and no search at all in a text that holds none of them."""
    compiled = screened(source, flags)
    needs = needed_literals(source, flags)
    if needs is None:
        return compiled
    return Gated(compiled, *needs)


__all__ = [
    "MAX_FIRST_CHARS",
    "MAX_LITERALS",
    "AnyOf",
    "Gated",
    "TextPattern",
    "by_first_char",
    "first_chars",
    "gated",
    "needed_literals",
    "screened",
]
