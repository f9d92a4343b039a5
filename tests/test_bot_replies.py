"""bot.replies.messages: the messages an answer is sent as, each with text a client shows. Its quick check of
"shows any text" must say what the full HTML parse (bot.render.plain_text) says."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_render import telegram_html

from bot.render import plain_text, split_message
from bot.replies import messages


def _as_parsed(html: str, limit: int | None = None) -> list[str]:
    chunks = split_message(html) if limit is None else split_message(html, limit)
    return [chunk for chunk in chunks if plain_text(chunk).strip()]


@pytest.mark.parametrize(
    "html",
    [
        "<b>hi</b>",
        "<b></b>",
        "<b> \n </b>",
        "<blockquote></blockquote>",  # the console view draws a bar: shown
        "&#32;",
        "&nbsp;<i> </i>",
        "&amp;",
        "a &lt; b",
        '<a href="https://example.com"></a>',
        "1 < 2",
        "   ",
        "",
    ],
)
def test_edge_cases_read_as_the_full_parse_reads_them(html: str) -> None:
    assert messages(html) == _as_parsed(html)


@settings(max_examples=200, deadline=None)
@given(html=telegram_html())
def test_messages_are_the_chunks_the_full_parse_shows(html: str) -> None:
    assert messages(html) == _as_parsed(html)


@given(st.text(alphabet="<>&;#ab /x\n\t\u00a0", max_size=40))
def test_stray_markup_reads_as_the_full_parse_reads_it(html: str) -> None:
    assert messages(html) == _as_parsed(html)
