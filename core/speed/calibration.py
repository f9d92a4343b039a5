"""Where a speed figure was calibrated and how sure it is: the published figures (data/measured/speed.csv) of
the same runtime on the same card family, and the ± band that goes with having them or not."""

from __future__ import annotations

from functools import cache

from core.catalog import Card, load_catalog
from core.speed.constants import SpeedConstants, load_speed_constants
from core.speed.published import PublishedFigure, load_published, source_of


def _family_key(c: SpeedConstants, card: Card) -> str:
    family = c.family(card)
    return family.match if family else f"default:{card.architecture or card.segment.value}"


@cache
def coverage() -> dict[tuple[str, str], tuple[str, ...]]:
    """(runtime, 'training' or 'training:<framework>', card family) -> the sources of the fitted figures that
    cover it."""
    c = load_speed_constants()
    catalog = load_catalog()
    found: dict[tuple[str, str], set[str]] = {}
    for figure in load_published():
        if figure.status != "fit":
            continue
        card = figure.card_spec(catalog)
        family = _family_key(c, card)
        if figure.is_training:
            framework = source_of(figure.source).framework or c.training.default_framework
            found.setdefault((f"training:{framework}", family), set()).add(figure.source)
            found.setdefault(("training", family), set()).add(figure.source)
        else:
            found.setdefault((figure.runtime, family), set()).add(figure.source)
    return {key: tuple(sorted(sources)) for key, sources in found.items()}


_CALIBRATED: dict[tuple[str, str, bool, str | None], tuple[str, ...]] = {}


def calibrated_on(runtime: str, card: Card, *, training: bool, framework: str | None = None) -> list[str]:
    """The published sources this runtime on this card family was fitted to (empty: none). Training: the
    runs of the job's framework on the card's family, or, where that framework was never measured there, the
    family's runs under the other frameworks."""
    memo = (runtime, card.id, training, framework)
    if memo not in _CALIBRATED:
        c = load_speed_constants()
        family = _family_key(c, card)
        if training:
            found = coverage().get((f"training:{framework}", family), ()) if framework else ()
            _CALIBRATED[memo] = found or coverage().get(("training", family), ())
        else:
            _CALIBRATED[memo] = coverage().get((runtime, family), ())
    return list(_CALIBRATED[memo])


def band_for(c: SpeedConstants, runtime: str, card: Card, *, training: bool) -> float:
    """The relative ± band of a speed figure: the fit's residual band where the runtime and the card family
    were calibrated, a wider one where either was not; for training, the held-out training figures' spread
    where the card family has fitted training runs, wider where it has none (data/speed.toml [band])."""
    if training:
        covered = calibrated_on(runtime, card, training=True)
        return c.band.training if covered else c.band.training_uncalibrated
    return c.band.calibrated if calibrated_on(runtime, card, training=False) else c.band.uncalibrated


__all__ = ["PublishedFigure", "band_for", "calibrated_on"]
