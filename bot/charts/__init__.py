"""Charts of an answer's figures (memory, cost and speed), sent as pictures.

`bot.charts.spec` says what a chart shows (plain data, no words), `bot.charts.adapter` builds it from the
typed result an answer's text comes from, and `render_png` draws it. matplotlib is imported only inside
`render_png`: importing this package (as every answer does) costs nothing of it.
"""

from __future__ import annotations

from bot.charts.spec import ChartSpec, spec_from_json, spec_json
from bot.charts.words import word

__all__ = ["ChartSpec", "caption", "chart_title", "render_png", "spec_from_json", "spec_json"]


def render_png(spec: ChartSpec, lang: str) -> bytes:
    """The chart as PNG bytes; CPU-bound (~0.1 s), so the bot calls it in a worker thread."""
    from bot.charts.draw import draw_png

    return draw_png(spec, lang)


def chart_title(spec: ChartSpec, lang: str) -> str:
    """The chart's title as drawn on it."""
    if spec.kind == "memory":
        if spec.family == "vision":
            return word(lang, "title_vision", spec.model_name)
        return word(lang, "title_memory", spec.model_name, spec.job)
    if spec.kind == "options":
        return word(lang, "title_options", spec.source, spec.model_name, spec.job)
    if spec.kind == "largest_model":
        return word(lang, "title_largest", spec.card_name, spec.gpus)
    return word(lang, "title_needed", spec.model_name, spec.job)


def caption(spec: ChartSpec, lang: str) -> str:
    """The one-line caption under the photo (templates/<lang>/chart_caption.j2), plain text."""
    from bot.render import plain_text, render

    return " ".join(plain_text(render("chart_caption", lang, title=chart_title(spec, lang))).split())
