"""'Did you mean …': the closest known names to one nobody has heard of (cards and models alike)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping


def closest_ids(key: str, id_by_key: Mapping[str, str], limit: int = 3) -> list[str]:
    """Ids of the names most like `key` (already normalized), best first, each id once."""
    keys = difflib.get_close_matches(key, list(id_by_key), n=limit * 3, cutoff=0.5)
    return list(dict.fromkeys(id_by_key[k] for k in keys))[:limit]
