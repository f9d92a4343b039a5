"""Which of the cards compared leads on each spec (memory, bandwidth, compute, price per hour): the compare
answer's "most memory: …" lines, decided here so that a tie is never worded as a win."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from core.advisor.compare import tied_leader
from core.catalog import Card


@dataclass(frozen=True, slots=True)
class SpecLeaders:
    """The card that leads on each spec; None where the best two are equal (a tie is not a win). `*_top`:
    the cards that share the lead when the others have less."""

    memory: Card | None
    memory_top: list[Card]
    bandwidth: Card | None
    bandwidth_top: list[Card]
    compute: Card | None
    compute_top: list[Card]
    cheapest: Card | None  # per hour, among the cards with a price (None unless two have one)


def tied_top(cards: Sequence[Card], value: Callable[[Card], float]) -> list[Card]:
    """The cards that share the lead on a spec when the others have less ('A100 80GB and H100 80GB' lead a
    4090 on memory): [] when one card leads alone or when every card has the same."""
    top = [c for c in cards if tied_leader([c, max(cards, key=value)], value) is None]
    return top if 1 < len(top) < len(cards) else []


def spec_leaders(cards: Sequence[Card], per_hour: Mapping[str, float]) -> SpecLeaders:
    """The leaders of `cards` on each spec; `per_hour` is the price of the cards that have one, by id."""
    priced = [c for c in cards if c.id in per_hour]
    return SpecLeaders(
        memory=tied_leader(cards, lambda c: c.memory_bytes),
        memory_top=tied_top(cards, lambda c: c.memory_bytes),
        bandwidth=tied_leader(cards, lambda c: c.bandwidth_gb_s),
        bandwidth_top=tied_top(cards, lambda c: c.bandwidth_gb_s),
        compute=tied_leader(cards, lambda c: c.tensor_tflops),
        compute_top=tied_top(cards, lambda c: c.tensor_tflops),
        cheapest=tied_leader(priced, lambda c: per_hour[c.id], "min") if len(priced) > 1 else None,
    )


__all__ = ["SpecLeaders", "spec_leaders", "tied_top"]
