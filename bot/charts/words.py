"""Chart words from templates/<lang>/chart.j2: every label, title and legend, as plain text."""

from __future__ import annotations

import html
from collections.abc import Callable
from functools import lru_cache
from typing import Any, cast

from bot.render import environment, template_name

Lang = str


@lru_cache(maxsize=4)
def _module(lang: Lang) -> Any:
    """templates/<lang>/chart.j2 instantiated once per language (its macros are pure)."""
    folder = "zh" if lang == "zh" else "en"
    return environment(folder).get_template(template_name("chart", folder)).make_module({"lang": lang})


def word(lang: Lang, name: str, *args: Any) -> str:
    """One macro of chart.j2 as plain text (templates are autoescaped HTML; a chart wants the text)."""
    macro = cast(Callable[..., str], getattr(_module(lang), name))
    return " ".join(html.unescape(str(macro(*args))).split())
