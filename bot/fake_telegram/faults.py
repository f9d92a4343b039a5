"""Faults a test schedules or draws from a seed: 429, 5xx, slow answers, dropped or refused connections."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

FaultKind = Literal["429", "500", "502", "slow", "drop", "drop_after", "hang", "refuse"]


@dataclass
class Fault:
    """The next `times` calls of `method` (any method if None) fail this way.

    429: Telegram's flood answer with `retry_after`; 500/502: a server or gateway error page (not handled);
    slow: handled at once, answered after `delay` seconds (a client that gives up earlier cannot know the call
    went through); drop: the connection closes after the request arrived, before handling (the client cannot
    tell this from drop_after); drop_after: handled (the message IS sent), then the connection closes without
    an answer; hang: never handled, never answered (held until the client gives up or the fake is released);
    refuse: handled normally, then the next connection attempt is refused (`refusals`), the one failure a
    client can prove happened before its request left.
    """

    kind: FaultKind
    method: str | None = None
    times: int = 1
    retry_after: int = 1
    delay: float = 0.0

    def matches(self, method: str) -> bool:
        return self.times > 0 and (self.method is None or self.method.lower() == method.lower())


@dataclass
class RandomFaults:
    """Faults at random but reproducibly: each call of `methods` (all if empty) fails with `chance`, the
    kind drawn from `kinds` (a kind with a `method` applies to that method only), until `budget` faults
    were injected. Methods are given in lower case."""

    seed: int
    chance: float
    kinds: tuple[Fault, ...]
    methods: frozenset[str] = frozenset()
    budget: int = 1_000_000
    injected: list[tuple[str, str]] = field(default_factory=list)  # (method, kind), for test messages

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def draw(self, method: str) -> Fault | None:
        if self.budget <= 0 or (self.methods and method.lower() not in self.methods):
            return None
        if self._rng.random() >= self.chance:
            return None
        template = self._rng.choice(self.kinds)
        if template.method is not None and template.method.lower() != method.lower():
            return None  # this kind is only for one method (a drop only where a repeat is harmless)
        self.budget -= 1
        self.injected.append((method, template.kind))
        return Fault(template.kind, method, 1, template.retry_after, template.delay)
