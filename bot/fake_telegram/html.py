"""Telegram HTML as Telegram checks it: the tag set, balance, entity offsets in UTF-16, reply markup."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from bot.fake_telegram.wire import (
    JSON,
    MAX_CALLBACK_DATA_BYTES,
    MAX_TEXT_UTF16,
    MIN_CALLBACK_DATA_BYTES,
    bad_request,
    utf16_len,
)

_TAG_ATTRS: dict[str, frozenset[str]] = {
    "b": frozenset(),
    "strong": frozenset(),
    "i": frozenset(),
    "em": frozenset(),
    "u": frozenset(),
    "ins": frozenset(),
    "s": frozenset(),
    "strike": frozenset(),
    "del": frozenset(),
    "tg-spoiler": frozenset(),
    "span": frozenset({"class"}),
    "a": frozenset({"href"}),
    "code": frozenset({"class"}),
    "pre": frozenset(),
    "blockquote": frozenset({"expandable"}),
    "tg-emoji": frozenset({"emoji-id"}),
    "tg-time": frozenset({"unix", "format"}),
}
_ENTITY_TYPE = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
    "tg-time": "date_time",
}
_START_TAG = re.compile(
    r"<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z][a-zA-Z0-9-]*(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'>]+))?)*)\s*>"
)
_ATTR = re.compile(r"([a-zA-Z][a-zA-Z0-9-]*)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+)))?")
_END_TAG = re.compile(r"</([a-zA-Z][a-zA-Z0-9-]*)\s*>")
_CHAR_REF = re.compile(r"&(?:(lt|gt|amp|quot)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


@dataclass
class ParsedText:
    """What a client shows: the plain text and the entities (offsets in UTF-16 units)."""

    text: str
    entities: list[JSON]


def parse_html(source: str) -> ParsedText:
    """Parse Telegram HTML the way the Bot API does; raise ApiError(400) with Telegram's wording otherwise."""
    out: list[str] = []
    out_len = 0  # in UTF-16 units
    stack: list[tuple[str, int, JSON]] = []
    entities: list[JSON] = []
    pos = 0

    def byte_offset(index: int) -> int:
        return len(source[:index].encode("utf-8"))

    def emit(chunk: str) -> None:
        nonlocal out_len
        out.append(chunk)
        out_len += utf16_len(chunk)

    while pos < len(source):
        char = source[pos]
        if char == "<":
            end = _END_TAG.match(source, pos)
            if end:
                name = end.group(1).lower()
                if not stack or stack[-1][0] != name:
                    expected = f'"</{stack[-1][0]}>"' if stack else "no end tag"
                    raise bad_request(
                        f"can't parse entities: Unmatched end tag at byte offset {byte_offset(pos)}, "
                        f'expected {expected}, found "</{name}>"'
                    )
                _, start, extra = stack.pop()
                if out_len > start:
                    entities.append(
                        {"type": _ENTITY_TYPE[name], "offset": start, "length": out_len - start} | extra
                    )
                pos = end.end()
                continue
            start_tag = _START_TAG.match(source, pos)
            if not start_tag:
                raise bad_request(
                    f'can\'t parse entities: Unexpected character "<" at byte offset {byte_offset(pos)}'
                )
            name = start_tag.group(1).lower()
            if name not in _TAG_ATTRS:
                raise bad_request(
                    f'can\'t parse entities: Unsupported start tag "{name}" at byte offset {byte_offset(pos)}'
                )
            attrs = {
                m.group(1).lower(): next((g for g in m.groups()[1:] if g is not None), "")
                for m in _ATTR.finditer(start_tag.group(2))
            }
            for attr in attrs:
                if attr not in _TAG_ATTRS[name]:
                    raise bad_request(
                        f'can\'t parse entities: Unsupported attribute "{attr}" of tag "{name}" '
                        f"at byte offset {byte_offset(pos)}"
                    )
            inside = [tag for tag, _, _ in stack]
            if any(tag in ("code", "pre") for tag in inside) and not (
                name == "code" and inside[-1:] == ["pre"]
            ):
                raise bad_request(
                    f"can't parse entities: Can't use tag \"{name}\" inside a code block "
                    f"at byte offset {byte_offset(pos)}"
                )
            if name == "blockquote" and "blockquote" in inside:
                raise bad_request(
                    f"can't parse entities: Nested blockquotes at byte offset {byte_offset(pos)}"
                )
            if name == "span" and attrs.get("class") != "tg-spoiler":
                raise bad_request(
                    f'can\'t parse entities: Tag "span" must have class "tg-spoiler" at byte offset {pos}'
                )
            link: JSON = {}
            if name == "a":
                href = html.unescape(attrs.get("href", ""))
                if not re.match(r"^(https?|tg)://", href):
                    raise bad_request(
                        f'can\'t parse entities: Wrong URL in tag "a" at byte offset {byte_offset(pos)}'
                    )
                link = {"url": href}
            stack.append((name, out_len, link))
            pos = start_tag.end()
        elif char == "&":
            ref = _CHAR_REF.match(source, pos)
            if not ref:
                raise bad_request(
                    "can't parse entities: Can't find end of the entity starting at byte offset "
                    f"{byte_offset(pos)}"
                )
            if ref.group(1):
                emit(_NAMED[ref.group(1)])
            else:
                code = int(ref.group(2)) if ref.group(2) else int(ref.group(3), 16)
                if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                    raise bad_request(
                        f"can't parse entities: Wrong character reference at byte offset {byte_offset(pos)}"
                    )
                emit(chr(code))
            pos = ref.end()
        else:
            nxt = min(
                (i for i in (source.find("<", pos), source.find("&", pos)) if i != -1), default=len(source)
            )
            emit(source[pos:nxt])
            pos = nxt
    if stack:
        raise bad_request(
            f"can't parse entities: Can't find end tag corresponding to start tag \"{stack[-1][0]}\""
        )
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return ParsedText("".join(out), entities)


def parse_message_text(text: str, parse_mode: str | None, *, limit: int = MAX_TEXT_UTF16) -> ParsedText:
    """Text as Telegram stores it: parsed, trimmed, non-empty and within `limit` UTF-16 units."""
    if parse_mode is not None and parse_mode.upper() != "HTML":
        if parse_mode not in ("Markdown", "MarkdownV2"):
            raise bad_request(f"unsupported parse_mode {parse_mode!r}")
        parsed = ParsedText(text, [])  # Markdown is not used by this bot; accepted as plain text
    elif parse_mode is None:
        parsed = ParsedText(text, [])
    else:
        parsed = parse_html(text)
    stripped = parsed.text.strip()
    if not stripped:
        raise bad_request("message text is empty")
    if utf16_len(stripped) > limit:
        raise bad_request("message is too long" if limit == MAX_TEXT_UTF16 else "message caption is too long")
    lead = utf16_len(parsed.text) - utf16_len(parsed.text.lstrip())
    entities = [e | {"offset": e["offset"] - lead} for e in parsed.entities if e["offset"] >= lead]
    return ParsedText(stripped, entities)


def validate_reply_markup(markup: Any) -> JSON | None:
    """Inline keyboards as Telegram checks them; callback data is 1-64 bytes of UTF-8."""
    if markup is None:
        return None
    if not isinstance(markup, dict):
        raise bad_request("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" not in markup:
        return markup  # reply keyboards, ForceReply, ReplyKeyboardRemove: accepted as they are
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise bad_request('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays')
    for row in rows:
        for button in row:
            if not isinstance(button, dict) or not str(button.get("text", "")).strip():
                raise bad_request("BUTTON_TEXT_EMPTY")
            kinds = [
                k
                for k in (
                    "callback_data",
                    "url",
                    "switch_inline_query",
                    "switch_inline_query_current_chat",
                    "copy_text",
                    "login_url",
                    "web_app",
                    "pay",
                    "callback_game",
                    "switch_inline_query_chosen_chat",
                )
                if k in button
            ]
            if len(kinds) != 1:
                raise bad_request("BUTTON_TYPE_INVALID")
            if "callback_data" in button:
                size = len(str(button["callback_data"]).encode("utf-8"))
                if not MIN_CALLBACK_DATA_BYTES <= size <= MAX_CALLBACK_DATA_BYTES:
                    raise bad_request("BUTTON_DATA_INVALID")
            if "url" in button and not re.match(r"^(https?|tg)://\S+$", str(button["url"])):
                raise bad_request("BUTTON_URL_INVALID")
    return markup
