"""Which language to answer in: the message's own script decides, not the user's profile."""

from __future__ import annotations

import re

from core.parser.result import Lang

# Han ideographs, kana, CJK punctuation and the full-width punctuation a Chinese IME types.
_CJK = re.compile(
    r"[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01\uff0c\uff1a\uff1b\uff1f]"
)


def detect_lang(text: str) -> Lang:
    """'zh' when the message has any CJK character, else 'en'."""
    return Lang.ZH if _CJK.search(text) else Lang.EN
