"""Rental platforms (data/platforms.toml): the names people type for them and the price book's providers each
stands for, so that "Best GPU on AutoDL" prices cards from AutoDL's own rows only."""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.paths import DATA_DIR


class Platform(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    providers: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    market: Literal["cn", "global"]

    def sells(self, provider: str) -> bool:
        return provider in self.providers


@cache
def load_platforms() -> dict[str, Platform]:
    """Every platform by id, in the file's order."""
    with open(DATA_DIR / "platforms.toml", "rb") as handle:
        raw = tomllib.load(handle)
    platforms = [Platform.model_validate(entry) for entry in raw["platform"]]
    return {platform.id: platform for platform in platforms}


def platform(platform_id: str | None) -> Platform | None:
    """The platform of that id, or None (no platform named, or one this build does not know)."""
    return load_platforms().get(platform_id) if platform_id else None
