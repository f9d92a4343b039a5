"""Telegram HTML from templates: one jinja2 environment, number filters, console view and message splitting.

Templates hold every sentence; this module only formats numbers and moves markup around. Telegram counts
message length in UTF-16 code units, so every length here does too.
"""

from __future__ import annotations

import html as html_lib
import math
import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from functools import cache
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_context
from jinja2.runtime import Context
from markupsafe import Markup
from telegram.constants import MessageLimit

from core.paths import TEMPLATES_DIR
from core.runtimes import load_runtimes
from core.units import GB, GIB

if TYPE_CHECKING:
    pass

LANGS = ("en", "zh")
TELEGRAM_LIMIT = int(MessageLimit.MAX_TEXT_LENGTH)
ALLOWED_TAGS = frozenset(
    {
        "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre",
        "tg-spoiler", "blockquote", "span", "tg-emoji",
    }
)  # fmt: skip
BAR_WIDTH = 10
BAR_FULL = "█"
BAR_EMPTY = "░"


# -- lengths ---------------------------------------------------------------------------------------------


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: characters outside the BMP take two UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def display_width(text: str) -> int:
    """Columns in a monospace font: CJK and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


# -- filters ---------------------------------------------------------------------------------------------


def _lang(ctx: Context) -> str:
    lang = ctx.get("lang", "en")
    return lang if lang in LANGS else "en"


def _decimals(value: float) -> str:
    """Three significant figures at most, no trailing zeros past the point: 0.42, 7.5, 36.6, 141."""
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:,.1f}"
    if magnitude >= 1:
        return f"{value:.1f}"
    if magnitude == 0:
        return "0"
    return f"{value:.2f}"


def fmt_gib(n_bytes: float | None, unit: bool = True) -> str:
    """Bytes as GiB: 13_576_247_214 → '12.6 GiB'."""
    if n_bytes is None:
        return "?"
    text = _decimals(n_bytes / GIB)
    return f"{text} GiB" if unit else text


def fmt_gb(n_bytes: float | None, unit: bool = True) -> str:
    """Bytes as decimal GB (for disks and sales copy; memory answers use GiB)."""
    if n_bytes is None:
        return "?"
    text = _decimals(n_bytes / GB)
    return f"{text} GB" if unit else text


def fmt_pct(fraction: float | None, signed: bool = False) -> str:
    if fraction is None:
        return "?"
    value = fraction * 100
    text = f"{value:+.0f}%" if signed else f"{value:.0f}%"
    return text.replace("-", "−")


def fmt_bar(fraction: float | None, width: int = BAR_WIDTH) -> str:
    """A fixed-width text bar; any non-zero share shows at least one block, overflow fills it."""
    if fraction is None or math.isnan(fraction):
        return BAR_EMPTY * width
    fraction = max(0.0, fraction)
    filled = min(width, round(fraction * width))
    if filled == 0 and fraction > 0.005:
        filled = 1
    return BAR_FULL * filled + BAR_EMPTY * (width - filled)


def fmt_num(value: float | None, decimals: int | None = None) -> str:
    """Thousands separators; `decimals` None picks a sensible precision."""
    if value is None:
        return "?"
    if decimals is not None:
        return f"{value:,.{decimals}f}"
    if float(value).is_integer():
        return f"{int(value):,}"
    return _decimals(value)


@pass_context
def fmt_count(ctx: Context, value: float | None) -> str:
    """Large counts people read: en 8.0B / 340M / 12K; zh 80 亿 / 0.63 亿 / 1.2 万 (from ten million up in
    亿, so a count never reads as a four-digit 万)."""
    if value is None:
        return "?"
    if _lang(ctx) == "zh":
        for size, floor, word in ((1e12, 1e12, "万亿"), (1e8, 1e7, "亿"), (1e4, 1e4, "万")):
            if abs(value) >= floor:
                return f"{_trim(value / size)} {word}"
        return fmt_num(value)
    for size, word in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= size:
            return f"{_trim(value / size)}{word}"
    return fmt_num(value)


def _trim(value: float) -> str:
    text = _decimals(value)
    return text[:-2] if text.endswith(".0") else text


def fmt_params(params: float | None) -> str:
    """A parameter count the way model names say it: 8.03e9 → '8.0B', 4.2e7 → '42M'."""
    if params is None:
        return "?"
    if params >= 1e9:
        return f"{_decimals(params / 1e9)}B"
    return f"{_trim(params / 1e6)}M"


def fmt_tokens(seq: int | None) -> str:
    """Context lengths the way people write them: 2048 → '2,048', 32768 → '32k'."""
    if seq is None:
        return "?"
    if seq >= 4096 and seq % 1024 == 0:
        return f"{seq // 1024}k"
    return f"{seq:,}"


_SYMBOLS = {"USD": "$", "CNY": "¥"}


def fmt_money(amount: float | None, currency: str = "USD") -> str:
    if amount is None:
        return "?"
    symbol = _SYMBOLS.get(str(currency), f"{currency} ")
    if abs(amount) >= 100:
        return f"{symbol}{amount:,.0f}"
    return f"{symbol}{amount:,.2f}"


@pass_context
def fmt_duration(ctx: Context, hours: float | None) -> str:
    """Hours as the unit a person would use: minutes, hours or days."""
    if hours is None:
        return "?"
    zh = _lang(ctx) == "zh"
    if hours < 1:
        minutes = max(1, round(hours * 60))
        return f"{minutes} 分钟" if zh else f"{minutes} min"
    if hours < 48:
        return f"{_trim(hours)} 小时" if zh else f"{_trim(hours)} h"
    days = hours / 24
    return f"{_trim(days)} 天" if zh else f"{_trim(days)} days"


def fmt_pad(text: object, width: int) -> str:
    """Left-align to `width` monospace columns (CJK counts double) for rows inside <pre>."""
    value = str(text).strip()
    padded = value + " " * max(0, width - display_width(html_lib.unescape(value)))
    return Markup(padded) if isinstance(text, Markup) else padded


def fmt_rpad(text: object, width: int) -> str:
    value = str(text).strip()
    padded = " " * max(0, width - display_width(html_lib.unescape(value))) + value
    return Markup(padded) if isinstance(text, Markup) else padded


_VENDOR_WORDS = re.compile(r"^(?:NVIDIA|AMD|Huawei)\s+|\b(?:GeForce|Tesla|Radeon)\s+")


def fmt_card_name(name: str) -> str:
    """A catalog name without vendor and brand words: 'NVIDIA GeForce RTX 4090 24GB' → 'RTX 4090 24GB'."""
    return _VENDOR_WORDS.sub("", str(name)).strip()


def fmt_join(items: Iterable[object], sep: str = ", ") -> Markup:
    """Join already-escaped pieces (macro output) or plain values (escaped here)."""
    return Markup(sep).join(Markup.escape(item) if not isinstance(item, Markup) else item for item in items)


# -- environment -----------------------------------------------------------------------------------------


@cache
def environment() -> Environment:
    """The one environment; templates are HTML for Telegram, so every .j2 is autoescaped."""
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=True,
        extensions=["jinja2.ext.do"],
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,
    )
    env.filters.update(
        gib=fmt_gib,
        gb=fmt_gb,
        pct=fmt_pct,
        bar=fmt_bar,
        num=fmt_num,
        count=fmt_count,
        params=fmt_params,
        tokens=fmt_tokens,
        money=fmt_money,
        duration=fmt_duration,
        pad=fmt_pad,
        rpad=fmt_rpad,
        joined=fmt_join,
        card_name=fmt_card_name,
        runtime_name=fmt_runtime_name,
    )
    env.globals.update(BAR_WIDTH=BAR_WIDTH)
    return env


_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")


def fmt_runtime_name(runtime_id: object) -> str:
    """A runtime as answers name it (data/runtimes.toml `name`: proper nouns, the same in both languages)."""
    profile = load_runtimes().by_id.get(str(runtime_id))
    return profile.name if profile is not None else str(runtime_id)


def tidy(text: str) -> str:
    """Templates stay readable; the message gets no trailing spaces and at most one blank line in a row."""
    text = _TRAILING_SPACE.sub("\n", text)
    text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip()


def render(name: str, lang: str, /, **data: Any) -> str:
    """templates/<lang>/<name>.j2 with `data`; unknown languages fall back to English."""
    lang = lang if lang in LANGS else "en"
    template = environment().get_template(f"{lang}/{name}.j2")
    return tidy(template.render(lang=lang, **data))


# -- the CLI views ---------------------------------------------------------------------------------------


def render_plan(
    plans: Sequence[Any], lang: str = "en", currency: str | None = None, sort: str = "cost"
) -> str:
    """`gpufit plan`: the plans that fit, in the advisor's order (cheapest or fastest first)."""
    cur = currency or (str(plans[0].currency) if plans else ("CNY" if lang == "zh" else "USD"))
    data = {"plans": list(plans), "currency": cur, "estimate": None, "query": None, "model_name": None}
    data["sort"] = sort
    return render("plan", lang, compact=False, short=False, full=True, **data)


# -- Telegram HTML → terminal ----------------------------------------------------------------------------

_BOLD_ON, _BOLD_OFF = "\033[1m", "\033[22m"
_ITALIC_ON, _ITALIC_OFF = "\033[3m", "\033[23m"


class _TerminalText(HTMLParser):
    def __init__(self, ansi: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.ansi = ansi
        self.out: list[str] = []
        self.links: list[str] = []
        self.link_start: list[int] = []
        self.quote_start: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("b", "strong") and self.ansi:
            self.out.append(_BOLD_ON)
        elif tag in ("i", "em") and self.ansi:
            self.out.append(_ITALIC_ON)
        elif tag == "a":
            self.links.append(dict(attrs).get("href") or "")
            self.link_start.append(len(self.out))
        elif tag == "blockquote":
            self.quote_start.append(len(self.out))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("b", "strong") and self.ansi:
            self.out.append(_BOLD_OFF)
        elif tag in ("i", "em") and self.ansi:
            self.out.append(_ITALIC_OFF)
        elif tag == "a" and self.links:
            href = self.links.pop()
            text = "".join(self.out[self.link_start.pop() :])
            if href and href != text:
                self.out.append(f" ({href})")
        elif tag == "blockquote" and self.quote_start:
            start = self.quote_start.pop()
            quoted = "".join(self.out[start:])
            del self.out[start:]
            self.out.append("\n".join(f"│ {line}" for line in quoted.split("\n")))

    def handle_data(self, data: str) -> None:
        self.out.append(data)


def html_to_terminal(html: str, ansi: bool | None = None) -> str:
    """What a Telegram client shows for `html`, for a console: ANSI bold on a TTY, links as 'text (url)'."""
    if ansi is None:
        ansi = sys.stdout.isatty()
    parser = _TerminalText(ansi)
    parser.feed(html)
    parser.close()
    return "".join(parser.out)


def plain_text(html: str) -> str:
    """The visible text of Telegram HTML, without any terminal styling."""
    return html_to_terminal(html, ansi=False)


# -- splitting -------------------------------------------------------------------------------------------

_ATOM = re.compile(r"<[^<>]*>|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z]+);|.", re.DOTALL)
_TAG = re.compile(r"<\s*(/?)\s*([a-zA-Z][a-zA-Z0-9-]*)")

Stack = tuple[tuple[str, str], ...]  # (tag name, opening tag text), outermost first


def _push_pop(stack: Stack, atom: str) -> Stack:
    if not atom.startswith("<"):
        return stack
    match = _TAG.match(atom)
    if not match:
        return stack
    closing, name = match.group(1) == "/", match.group(2).lower()
    if not closing:
        return (*stack, (name, atom))
    for depth in range(len(stack) - 1, -1, -1):
        if stack[depth][0] == name:
            return stack[:depth] + stack[depth + 1 :]
    return stack


def _opens(stack: Stack) -> str:
    return "".join(opening for _, opening in stack)


def _closes(stack: Stack) -> str:
    return "".join(f"</{name}>" for name, _ in reversed(stack))


def split_message(html: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """Cut Telegram HTML into messages of at most `limit` UTF-16 units, each well formed on its own.

    Cuts fall at the last line break that fits (else the last space, else anywhere between characters);
    tags open at a cut are closed at the end of one chunk and re-opened at the start of the next. The limit
    applies to the markup itself, which is never shorter than the text Telegram counts, so it is safe.
    """
    if utf16_len(html) <= limit:
        return [html] if html.strip() else []
    chunks: list[str] = []
    start_stack: Stack = ()
    atoms: list[str] = []  # the current chunk's atoms
    stacks: list[Stack] = []  # tag stack after each atom
    body = 0  # UTF-16 length of the atoms

    def emit(cut: int, skip: int) -> None:
        nonlocal start_stack, atoms, stacks, body
        end_stack = stacks[cut - 1] if cut else start_stack
        text = _opens(start_stack) + "".join(atoms[:cut]) + _closes(end_stack)
        if plain_text(text).strip():
            chunks.append(text)
        start_stack = stacks[cut + skip - 1] if cut + skip else start_stack
        atoms, stacks = atoms[cut + skip :], stacks[cut + skip :]
        body = sum(utf16_len(a) for a in atoms)

    for atom in _ATOM.findall(html):
        stack_after = _push_pop(stacks[-1] if stacks else start_stack, atom)
        while atoms and (
            utf16_len(_opens(start_stack)) + body + utf16_len(atom) + utf16_len(_closes(stack_after)) > limit
        ):
            cut, skip = _cut_point(atoms)
            emit(cut, skip)
            stack_after = _push_pop(stacks[-1] if stacks else start_stack, atom)
        atoms.append(atom)
        stacks.append(stack_after)
        body += utf16_len(atom)
    if atoms:
        emit(len(atoms), 0)
    return chunks


def _cut_point(atoms: list[str]) -> tuple[int, int]:
    """(atoms kept in this chunk, atoms dropped at the cut): after the last newline, else space, else all."""
    for separator in ("\n", " "):
        for index in range(len(atoms) - 1, 0, -1):
            if atoms[index] == separator:
                return index, 1
    return len(atoms), 0


def escape(text: str) -> str:
    """Plain text made safe for Telegram HTML (for the rare string built outside a template)."""
    return html_lib.escape(text, quote=False)


_NAMED_ENTITIES = frozenset({"&lt;", "&gt;", "&amp;", "&quot;"})


def telegram_html_problems(html: str) -> list[str]:
    """Why Telegram would refuse `html` (empty when it would parse): unknown tags, unbalanced or crossed
    tags, bare '<', '>' or '&', named entities Telegram does not know. For tests and fake servers."""
    problems: list[str] = []
    stack: list[str] = []
    for atom in _ATOM.findall(html):
        if atom.startswith("<") and len(atom) > 1:
            match = _TAG.match(atom)
            if not match:
                problems.append(f"bad tag {atom!r}")
                continue
            closing, name = match.group(1) == "/", match.group(2).lower()
            if name not in ALLOWED_TAGS:
                problems.append(f"tag not allowed: {name}")
            elif closing:
                if not stack or stack[-1] != name:
                    problems.append(f"unbalanced </{name}>")
                else:
                    stack.pop()
            else:
                stack.append(name)
        elif atom.startswith("&") and len(atom) > 1:
            if not atom.startswith("&#") and atom not in _NAMED_ENTITIES:
                problems.append(f"unknown entity {atom}")
        elif atom in ("<", ">", "&"):
            problems.append(f"bare {atom!r}")
    problems.extend(f"unclosed <{name}>" for name in stack)
    return problems
