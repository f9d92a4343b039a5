"""Where a speed figure was calibrated and how sure it is: the published figures (data/measured/speed.csv) of
the same runtime on the same card family, and the ± band that goes with having them or not."""

from __future__ import annotations

from functools import cache

from core.catalog import Card, load_catalog
from core.speed.constants import SpeedConstants, load_speed_constants
from core.speed.published import PublishedFigure, load_published


def _family_key(c: SpeedConstants, card: Card) -> str:
    family = c.family(card)
    return family.match if family else f"default:{card.architecture or card.segment.value}"


@cache
def coverage() -> dict[tuple[str, str], tuple[str, ...]]:
    """(runtime or 'training', card family) -> the sources of the fitted figures that cover it."""
    c = load_speed_constants()
    catalog = load_catalog()
    found: dict[tuple[str, str], set[str]] = {}
    for figure in load_published():
        if figure.status != "fit":
            continue
        card = figure.card_spec(catalog)
        runtime = "training" if figure.is_training else figure.runtime
        found.setdefault((runtime, _family_key(c, card)), set()).add(figure.source)
    return {key: tuple(sorted(sources)) for key, sources in found.items()}


_CALIBRATED: dict[tuple[str, str, bool], tuple[str, ...]] = {}


def calibrated_on(runtime: str, card: Card, *, training: bool) -> list[str]:
    """The published sources this runtime on this card family was fitted to (empty: none)."""
    memo = (runtime, card.id, training)
    if memo not in _CALIBRATED:
        c = load_speed_constants()
        key = ("training" if training else runtime, _family_key(c, card))
        _CALIBRATED[memo] = coverage().get(key, ())
    return list(_CALIBRATED[memo])


def band_for(c: SpeedConstants, runtime: str, card: Card, *, training: bool) -> float:
    """The relative ± band of a speed figure: the fit's residual band where the runtime and the card family
    were calibrated, a wider one where either was not (data/speed.toml [band])."""
    if training:
        return c.band.training
    return c.band.calibrated if calibrated_on(runtime, card, training=False) else c.band.uncalibrated


__all__ = ["PublishedFigure", "band_for", "calibrated_on"]
