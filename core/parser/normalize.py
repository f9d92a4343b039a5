"""One canonical spelling of a message before any pattern runs.

Width, case, invisible characters, Chinese numerals, thousands separators and the common
nicknames / typos of model families are unified here, so the patterns elsewhere stay simple.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from core.parser.numbers import arabize
from core.regex_screen import AnyOf, TextPattern, gated

# Long messages are abuse or pasted logs; the question is in the first lines.
MAX_CHARS = 2000

_PUNCT = str.maketrans(
    {c: " " for c in "。、「」『』【】《》〈〉“”‘’…—～·•|!?,;()[]{}<>\"'`"}
    | {"×": " x ", "✕": " x ", "✖": " x ", "＊": "*", "＄": "$", "￥": "¥"}
)

# (pattern, replacement) applied in order on the lowercased text.
_REWRITES: tuple[tuple[TextPattern, str], ...] = tuple(
    (gated(pattern), replacement)  # each skipped where its words are missing (regex_screen)
    for pattern, replacement in (
        (r"通义千问|千问|通义", " qwen"),
        (r"深度求索", " deepseek "),
        (r"书生\s*浦语|书生", " internlm"),
        (r"百川", " baichuan"),
        (r"(?<![\d.零〇一二两三四五六七八九十百千])万亿", "1万亿"),
        (r"零一万物", " yi "),
        (r"智谱|清华", " "),
        (r"羊驼", " llama"),
        (r"(?<![a-z])(?:lama|llma|lamma|llamma|llam|lllama|ll?ama)(?=\s*[-_]?\s*\d|\s|$|[^a-z])", "llama"),
        (r"(?<![a-z])(?:qwne|qwem|qween|qwn|quen|qwan)(?=[^a-z]|$)", "qwen"),
        (r"(?<![a-z])(?:deepseak|deepseeek|deepseek|deep\s+seek|dpsk)(?=[^a-z]|$)", "deepseek"),
        (r"(?<![a-z])ds(?=[\s\-_]*(?:r1|v2|v3|coder)(?![a-z0-9]))", "deepseek"),
        (r"(?<![a-z])(?:mistrial|mistal|mistrel)(?=[^a-z]|$)", "mistral"),
        (r"(?<![a-z])(?:mixtrl|mixtrel|mixtal)(?=[^a-z]|$)", "mixtral"),
        (r"(?<![a-z])(?:gema|gemmma)(?=[^a-z]|$)", "gemma"),
        (r"(?<![a-z])(?:interlm|internml|internlam|intrenlm|intern\s+lm)(?=[\s\-_]*\d|[^a-z]|$)", "internlm"),
        (r"(?<![a-z])instrcut|instuct|intsruct|insturct|instrut", "instruct"),
        (r"nvidia|英伟达|geforce|tesla|n卡", " "),
        # '显卡 24g' / '显卡3090' name the card; '没有显卡 32g内存' says there is none (kept: CPU only)
        (r"(?<![a-z])(?<!没有)(?<!没)(?<!无)(?<!不用)(?<!没有独立)(?<!没独立)(?<!无独立)显卡(?=\s*\d)", " "),
        # a modded board named by its memory: '2080ti魔改22g', '4090魔改版 48g' -> '2080ti 22g', '4090 48g'
        (r"(?<=[0-9a-z])\s*(?:魔改版?|魔改卡|modded|mod)\s*(?=\d{2}\s*g)", " "),
        (r"(?<=\dg)\s*(?:魔改版?|魔改卡|modded|mod)(?![a-z])", " 魔改 "),
    )
)

# the typo rewrites find nothing in most messages: one scan for all their words first
_ANY_REWRITE = AnyOf(_REWRITES)

# '@gpufit_bot help', '/help@gpufit_bot': bot usernames end in 'bot' (people's names are kept).
_BOT_MENTION = gated(r"@[a-z0-9_]*bot(?![a-z0-9_])")
# 'https://huggingface.co/Qwen/Qwen2.5-7B' -> ' Qwen/Qwen2.5-7B': the path names the model, the host is noise.
_URL_HOST = gated(r"https?://[^/\s]+/?|www\.[^/\s]+/?")
# '1,500', '$20,000': digit groups of a number, never a name's digits ('h20,128k' is the H20 and 128k)
# and never across the full-width comma, which separates clauses ('两张 h20，128k 上下文')
_THOUSANDS = gated(r"(?<![a-z0-9.])\d{1,3}(?:,\d{3})+(?!\d)")

# 'a1OO', 'h1oo' -> a100, h100: an o typed for a zero inside a card-like token.
_O_FOR_ZERO = re.compile(
    r"(?<![a-z0-9])([ahvlpt])([0-9o]*\d[0-9o]*|o[0-9o]*\d[0-9o]*)(?=[^a-z0-9]|$|[a-z]{1,2}(?![a-z]))"
)


def _fix_o(match: re.Match[str]) -> str:
    return match.group(1) + match.group(2).replace("o", "0")


# '4o9o' -> 4090: four characters of digits and o's, at least two digits.
_O_IN_NUMBER = re.compile(r"(?<![a-z0-9])(?=[0-9o]{4}(?![a-z0-9]))(?=(?:o*\d){2})[0-9o]{4}")


def _visible(char: str) -> str:
    category = unicodedata.category(char)
    if category in ("Cf", "Co", "Cs", "Cn"):
        return ""  # zero-width joiners, bidi marks, private use: drop, so '4\u200b090' stays 4090
    if category.startswith(("C", "Z")):
        return " "  # controls, newlines, exotic spaces
    if category in {"So", "Sk"}:
        return " "  # emoji and symbols
    return char


class _Visible(dict[int, str]):
    """`_visible` of each code point seen, kept (for `str.translate`: one table lookup per character
    instead of a Python call); no longer kept past MAX_KEPT code points, whatever a message holds."""

    MAX_KEPT = 65_536

    def __missing__(self, code: int) -> str:
        shown = _visible(chr(code))
        if len(self) < self.MAX_KEPT:
            self[code] = shown
        return shown


_VISIBLE = _Visible()


def _rewritten(text: str) -> str:
    """The text with the nicknames and typos of `_REWRITES` rewritten, in order."""
    if _ANY_REWRITE.holds(text):  # else none of them matches, and each rewrite leaves the text as it is
        for pattern, replacement in _REWRITES:
            text = pattern.sub(replacement, text)
    return text


@lru_cache(maxsize=512)
def normalize(text: str) -> str:
    """The canonical form every pattern in the parser runs on."""
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS].replace("，", "、"))
    text = text.translate(_VISIBLE).lower()
    text = _URL_HOST.sub(" ", _BOT_MENTION.sub(" ", text))
    text = _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text).translate(_PUNCT)
    text = arabize(text)
    text = _rewritten(text)
    text = _O_FOR_ZERO.sub(_fix_o, text)
    text = _O_IN_NUMBER.sub(lambda m: m.group(0).replace("o", "0"), text)
    return re.sub(r"\s+", " ", text).strip()
