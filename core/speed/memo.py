"""Remembering a speed answer per job: the same (model, card, constants, job fields) always gives the same
speed, and one answer asks for it several times (the fit, the advisor's alternatives, compare rows).

Keys hold the ids of the objects the result was computed from, and each entry keeps those objects alive and
checks them by identity, so an id is never mistaken for another object's (a Hub model looked up later, a
card or a set of constants built by a test or a fit). Bounded: the memo starts over past MAX_ENTRIES.
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")
MAX_ENTRIES = 4096


class IdentityMemo(Generic[T]):
    def __init__(self) -> None:
        self._entries: dict[tuple[object, ...], tuple[tuple[object, ...], T]] = {}

    def get(self, anchors: tuple[object, ...], fields: tuple[object, ...]) -> T | None:
        entry = self._entries.get((*map(id, anchors), *fields))
        if entry is None or any(a is not b for a, b in zip(entry[0], anchors, strict=True)):
            return None
        return entry[1]

    def put(self, anchors: tuple[object, ...], fields: tuple[object, ...], value: T) -> T:
        if len(self._entries) >= MAX_ENTRIES:
            self._entries.clear()
        self._entries[(*map(id, anchors), *fields)] = (anchors, value)
        return value

    def clear(self) -> None:
        self._entries.clear()
