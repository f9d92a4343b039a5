"""Find card names in a message, using every alias of the catalog as people type it.

One regex is built from the catalog once: each alias becomes a pattern with optional separators
('rtx4090', 'RTX 4090', 'rtx-4090' all match), a memory suffix accepts g / gb / gib, and a plural s
is allowed ('two 4090s'). A second, looser pass catches '4090ti'-style typos of known numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from core.catalog import CardMatch, load_catalog, normalize_name
from core.parser.aliases import alias_pattern
from core.regex_screen import by_first_char, gated, screened

CARD_MARK = "\ue000"  # stands in for a found card, so counts like '2x<card>' can be read around it


@dataclass(frozen=True)
class CardMention:
    card_id: str
    typed: str
    ambiguous: bool
    start: int
    end: int


def _canon(text: str) -> str:
    return re.sub(r"[\s\-_/]+", "", normalize_name(text))


@dataclass(frozen=True)
class _CardTable:
    pattern: re.Pattern[str]
    alias_by_canon: dict[str, str]
    numbers: frozenset[str]
    written: str  # the pattern before its names were grouped by first character (tests compare the two)


@cache
def _table() -> _CardTable:
    catalog = load_catalog()
    alias_by_canon: dict[str, str] = {}
    keys: set[str] = set()
    for card in catalog.named:  # most rented first, so a shared canon keeps the popular spelling
        for alias in (card.id, card.name, *card.aliases):
            key = normalize_name(alias)
            if not key:
                continue
            keys.add(key)
            alias_by_canon.setdefault(_canon(alias), alias)
    ordered = sorted(keys, key=lambda k: (-len(_canon(k)), k))
    branches = [alias_pattern(k) for k in ordered]
    around = r"(?:(?<![a-z0-9.])|(?<=\dx))(?:{})(?:s)?(?:(?![a-z0-9])|(?=x\d))"
    written = around.format("|".join(branches))
    pattern = screened(around.format(by_first_char(branches)))  # the same matches (regex_screen)
    numbers = frozenset(m for k in keys for m in re.findall(r"(?<![a-z0-9])\d{4}(?![0-9])", k))
    return _CardTable(pattern, alias_by_canon, numbers, written)


# '4090ti', 'rtx 4090 super', '3090 TI' where that exact variant is not sold: fall back to the number.
_LOOSE = re.compile(r"(?<![a-z0-9.])(?:rtx\s*)?(\d{4})\s*(?:ti|super|s|d|ti\s*super)?s?(?![a-z0-9])")


@lru_cache(maxsize=2048)
def _resolve(typed: str) -> CardMatch | None:
    """The catalog's card for a name as typed; remembered, as the same few names are typed again and again
    (the catalog's resolve unifies its spelling with several patterns)."""
    table = _table()
    catalog = load_catalog()
    canon = _canon(typed)
    alias = table.alias_by_canon.get(canon)
    if alias is None and canon.endswith("s"):
        alias = table.alias_by_canon.get(canon[:-1])
    return catalog.resolve(alias) if alias else None


# A name typed as a letter, a space and a number ('a 10', 'a 100') before a magnitude or a unit counted is
# an amount written after the article 'a', not a card
_A_COUNT = re.compile(r"[a-z]\s+\d")
_MAGNITUDE_AFTER = gated(r"\s*(?:million|billion|thousand|万|亿|千|tokens?(?![a-z])|k\s*tokens?|m\s*tokens?)")


def find_cards(text: str) -> list[CardMention]:
    """Every card named in normalized text, in order of appearance."""
    table = _table()
    found: list[CardMention] = []
    for match in table.pattern.finditer(text):
        if _A_COUNT.match(match.group(0)) and _MAGNITUDE_AFTER.match(text, match.end()):
            continue  # 'a 10 million token context' counts tokens, it names no A10
        resolved = _resolve(match.group(0))
        if resolved:
            found.append(_mention(resolved, match))
    taken = [(m.start, m.end) for m in found]
    for match in _LOOSE.finditer(text):
        if match.group(1) not in table.numbers or any(
            s < match.end() and match.start() < e for s, e in taken
        ):
            continue
        resolved = load_catalog().resolve(match.group(1))
        if resolved:
            found.append(_mention(resolved, match))
    found += [sibling for mention in found if (sibling := _sibling(text, mention)) is not None]
    return sorted(found, key=lambda m: m.start)


# 'A100 40G 和 80G', 'h100 pcie or sxm': another variant of the card just named, by its memory or form factor
_SIBLING = gated(
    r"\s*(?:和|与|跟|对比|比|还是|vs\.?|versus|or|and|/)\s*(?:the\s+)?"
    r"(\d{2,3}\s*(?:gb|gib|g)(?![a-z0-9])|pcie|sxm\d?|nvl)"
)
_VARIANT_WORDS = gated(r"\s*(?:\d{2,3}\s*(?:gb|gib|g)|pcie|sxm\d?|nvl)(?![a-z0-9])")


def _sibling(text: str, mention: CardMention) -> CardMention | None:
    """The other variant of `mention`'s family that the words right after it name, when the catalog has it."""
    match = _SIBLING.match(text, mention.end)
    if match is None:
        return None
    family = _VARIANT_WORDS.sub("", mention.typed).strip()
    resolved = load_catalog().resolve(f"{family} {match.group(1)}")
    if resolved is None or resolved.card.id == mention.card_id:
        return None
    return CardMention(
        card_id=resolved.card.id,
        typed=f"{family} {match.group(1)}",
        ambiguous=False,
        start=match.start(1),
        end=match.end(1),
    )


def _mention(resolved: CardMatch, match: re.Match[str]) -> CardMention:
    typed = match.group(0).strip()
    if typed.endswith("s") and _resolve(typed[:-1]) is not None:
        typed = typed[:-1]  # 'a100s' was typed as a plural of 'a100'
    return CardMention(
        card_id=resolved.card.id,
        typed=typed,
        ambiguous=bool(resolved.ambiguous),
        start=match.start(),
        end=match.end(),
    )


def mask(text: str, spans: list[tuple[int, int]], mark: str) -> str:
    """Replace each span by ` mark ` so later patterns neither re-read nor straddle it."""
    out: list[str] = []
    last = 0
    for start, end in sorted(spans):
        if start < last:
            continue
        out.append(text[last:start])
        out.append(f" {mark} ")
        last = end
    out.append(text[last:])
    return "".join(out)
