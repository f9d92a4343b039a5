"""bot.render: number filters, the console view, and splitting Telegram HTML at safe places."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.answer.views import ErrorView, UnknownNameView
from bot.render import (
    BAR_WIDTH,
    fmt_bar,
    fmt_card_name,
    fmt_gib,
    fmt_money,
    fmt_pct,
    fmt_tokens,
    html_to_terminal,
    render,
    split_message,
    telegram_html_problems,
    utf16_len,
)
from core.units import GIB


def test_gib_says_gib_and_keeps_three_figures() -> None:
    assert fmt_gib(12.34 * GIB) == "12.3 GiB"
    assert fmt_gib(141 * GIB) == "141 GiB"
    assert fmt_gib(0.42 * GIB) == "0.42 GiB"
    assert fmt_gib(7.5 * GIB, unit=False) == "7.5"


@pytest.mark.parametrize("fraction", [0.0, 0.001, 0.02, 0.5, 0.99, 1.0, 1.7, -0.3])
def test_bar_has_fixed_width(fraction: float) -> None:
    bar = fmt_bar(fraction)
    assert len(bar) == BAR_WIDTH
    assert set(bar) <= {"█", "░"}


def test_bar_shows_any_real_share_and_fills_on_overflow() -> None:
    assert fmt_bar(0.02).startswith("█")
    assert fmt_bar(0.0) == "░" * BAR_WIDTH
    assert fmt_bar(2.0) == "█" * BAR_WIDTH


def test_small_formatters() -> None:
    assert fmt_pct(0.273) == "27%"
    assert fmt_tokens(2048) == "2,048"
    assert fmt_tokens(32768) == "32k"
    assert fmt_money(0.68, "USD") == "$0.68"
    assert fmt_money(1234.5, "CNY") == "¥1,234"
    assert fmt_card_name("NVIDIA GeForce RTX 4090 24GB") == "RTX 4090 24GB"


def test_counts_read_naturally_in_each_language() -> None:
    env_count = "{{ n | count }}"
    from bot.render import environment

    template = environment().from_string(env_count)
    assert template.render(n=41_943_040, lang="en") == "41.9M"
    # issue 14: '6259万 个参数' read badly; from ten million up a count is in 亿, with a space before the unit
    assert template.render(n=41_943_040, lang="zh") == "0.42 亿"
    assert template.render(n=12_000, lang="zh") == "1.2 万"
    assert template.render(n=2e12, lang="zh") == "2 万亿"


def test_html_to_terminal() -> None:
    html = '<b>Fits</b> &amp; <a href="https://x.example">docs</a> <code>a &lt; b</code>'
    assert html_to_terminal(html, ansi=False) == "Fits & docs (https://x.example) a < b"
    assert html_to_terminal(html, ansi=True).startswith("\033[1mFits\033[22m")
    assert (
        html_to_terminal('<a href="https://x.example">https://x.example</a>', ansi=False)
        == "https://x.example"
    )


def test_render_escapes_data_and_never_evaluates_it() -> None:
    view = UnknownNameView(name="<script>{{ 7*7 }}</script>", suggestions=[], what="model")
    html = render("unknown_model", "en", v=view, compact=False)
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "{{ 7*7 }}" in html and "49" not in html
    assert telegram_html_problems(html) == []


def test_unknown_language_falls_back_to_english() -> None:
    view = ErrorView(code="x")
    assert render("error", "fr", v=view, compact=True) == render("error", "en", v=view, compact=True)


def test_problems_are_found() -> None:
    assert telegram_html_problems("<b>ok</b> &amp; <i>fine</i>") == []
    assert telegram_html_problems("<p>no</p>")
    assert telegram_html_problems("<b><i>crossed</b></i>")
    assert telegram_html_problems("<b>open")
    assert telegram_html_problems("a & b")
    assert telegram_html_problems("&nbsp;")


# -- split_message --------------------------------------------------------------------------------------

_TAGS = ("b", "i", "u", "s", "code", "tg-spoiler")
_text = st.lists(
    st.sampled_from([*"abc xyz 012\n\n显存够不够", "😀", "&amp;", "&lt;", "&gt;", "&#34;"]), max_size=60
).map("".join)


@st.composite
def telegram_html(draw: st.DrawFn, depth: int = 0) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        if depth < 3 and draw(st.booleans()):
            tag = draw(st.sampled_from(_TAGS))
            if draw(st.booleans()) and depth == 0:
                parts.append(
                    f'<a href="https://example.com/?a=1&amp;b=2">{draw(telegram_html(depth + 1))}</a>'
                )
            else:
                parts.append(f"<{tag}>{draw(telegram_html(depth + 1))}</{tag}>")
        else:
            parts.append(draw(_text))
    if depth == 0 and draw(st.booleans()):
        parts.append("<pre>" + draw(_text) + "\n" + draw(_text) + "</pre>")
    return "".join(parts)


def _visible(html: str) -> str:
    """The characters a reader sees, whitespace aside (cuts drop the line break or space they fall on)."""
    return re.sub(r"\s", "", unescape(re.sub(r"<[^<>]*>", "", html)))


@settings(max_examples=150, deadline=None)
@given(html=telegram_html(), limit=st.integers(min_value=120, max_value=400))
def test_split_message_chunks_are_valid_and_lose_nothing(html: str, limit: int) -> None:
    chunks = split_message(html, limit)
    for chunk in chunks:
        assert utf16_len(chunk) <= limit
        assert telegram_html_problems(chunk) == [], chunk
        assert chunk.strip()
    assert "".join(_visible(c) for c in chunks) == _visible(html)


def test_split_message_prefers_line_breaks_and_reopens_tags() -> None:
    lines = [f"line {i} " + "x" * 30 for i in range(40)]
    html = "<b>" + "\n".join(lines) + "</b>"
    chunks = split_message(html, 200)
    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.startswith("<b>") and chunk.endswith("</b>")
        body = chunk[3:-4]
        assert all(line.startswith("line ") for line in body.split("\n"))


def test_split_message_counts_utf16_units() -> None:
    html = "😀" * 100  # 200 UTF-16 units
    chunks = split_message(html, 50)
    assert all(utf16_len(c) <= 50 for c in chunks)
    assert "".join(chunks) == html


def test_short_and_empty_messages() -> None:
    assert split_message("<b>hi</b>") == ["<b>hi</b>"]
    assert split_message("   ") == []


def test_telegram_limits_written_out_are_telegrams() -> None:
    """bot/render.py and bot/settings.py write two of python-telegram-bot's constants out (so `gpufit ask`
    does not import it); they must stay the library's."""
    from telegram.constants import MessageLimit, WebhookLimit

    from bot import settings
    from bot.render import TELEGRAM_LIMIT

    assert int(MessageLimit.MAX_TEXT_LENGTH) == TELEGRAM_LIMIT
    assert int(WebhookLimit.MAX_SECRET_TOKEN_LENGTH) == settings._MAX_SECRET


def _fresh_environment(lang: str, directory: Any, *, write: bool = False) -> Any:
    from bot.render import PrecompiledTemplates, _build_environment

    return _build_environment(lang, PrecompiledTemplates(lang, directory, write=write))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_precompiled_templates_render_what_compiling_renders(lang: str, tmp_path: Path) -> None:
    """`make bytecode` compiles every template per language (bot.render.precompile); an environment that
    loads them renders byte for byte what one compiling from source renders, and loads no template source
    into the compiler."""
    from bot.answer.views import PlanView
    from bot.render import precompile, template_name

    written = precompile(tmp_path)
    assert written == len(list(tmp_path.glob("*.cache"))) > 50
    data = {"compact": False, "short": False, "v": PlanView([], "USD", "cost")}
    name = template_name("plan", lang)
    compiled = _fresh_environment(lang, tmp_path)
    compiled.compile = None  # any compile would fail
    from_source = _fresh_environment(lang, tmp_path / "empty")
    for env in (compiled, from_source):
        env.globals["lang"] = lang
    assert compiled.get_template(name).render(lang=lang, **data) == from_source.get_template(name).render(
        lang=lang, **data
    )
    assert not (tmp_path / "empty").exists()  # reading never writes


def test_precompiled_entry_stale_or_damaged_is_compiled_afresh(tmp_path: Path) -> None:
    """An entry compiled from another source, another catalog or damaged on disk is never used: the template
    compiles from its source, and nothing is written back."""
    from bot.render import PrecompiledTemplates, precompile

    precompile(tmp_path)
    entries = sorted(tmp_path.glob("*.cache"))
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:40])  # damaged
    before = {entry: entry.read_bytes() for entry in entries}
    env = _fresh_environment("zh", tmp_path)
    assert "GiB" in env.from_string("{{ (2 ** 31) | gib }}").render()
    assert env.get_template("help.j2").name == "help.j2"
    assert {entry: entry.read_bytes() for entry in entries} == before
    other = PrecompiledTemplates("zh", tmp_path)
    other.prefix = "zh-another-catalog"
    assert other.get_cache_key("help.j2") != PrecompiledTemplates("zh", tmp_path).get_cache_key("help.j2")
