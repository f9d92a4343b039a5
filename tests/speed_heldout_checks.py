"""What every held-out speed table's test checks, written once (tests/test_speed_heldout*.py): the table is
sourced and shares no source or figure with the tables before it, and it is predicted at the level its test
records, a floor that may only rise while the issue's bar (TARGET_WITHIN_25) is not met."""

from __future__ import annotations

import math
from collections.abc import Iterable

from core.speed.fitting import load_raw, ratios, summary
from core.speed.published import PublishedFigure, load_published, load_sources, prepared_figures

TARGET_WITHIN_25 = 0.8  # issue 22's bar: at least 80% within ±25%, all within 2x


def sourced_and_unseen(table: str, older: Iterable[str], *, at_least: int) -> tuple[PublishedFigure, ...]:
    """The table's figures, once each is held out, has a source with its setup, and no older table has it."""
    figures = load_published(table)
    sources = load_sources(table)
    assert len(figures) >= at_least
    for figure in figures:
        assert figure.status == "held_out", figure.id
        assert figure.source in sources, figure.id
        assert figure.published > 0
    for source in sources.values():
        assert source.url.startswith("http") and source.date and source.setup
    ids = {f.id for f in figures}
    for other in older:
        assert not set(load_sources(other)) & set(sources), f"a source of {table} is also in {other}"
        assert not {f.id for f in load_published(other)} & ids, f"a figure of {table} is also in {other}"
    return figures


def predicted_at_level(table: str, *, floor: float, outside_2x_at_most: int, median_within: float) -> None:
    """gpufit's predictions for the table: at least `floor` within ±25%, the median within that factor."""
    pairs = ratios(load_raw(), prepared_figures(table))
    s = summary(pairs)
    outside_2x = [(f.figure.id, round(r, 2)) for f, r in pairs if not 0.5 <= r <= 2.0]
    assert s["within_25"] / s["n"] >= floor - 1e-9, (s, TARGET_WITHIN_25)
    assert len(outside_2x) <= outside_2x_at_most, outside_2x
    assert abs(math.log(s["median"])) < math.log(median_within)
