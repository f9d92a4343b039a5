"""Telegram HTML from templates: one jinja2 environment per language, number filters, console view and
message splitting.

Templates hold the layout and the English sentences (English is the messages' source language: its sentences
are the msgids); the sentences of each other language live in a gettext catalog
(templates/locale/<lang>/LC_MESSAGES/gpufit.po). This module only formats numbers, moves markup
around and installs the catalogs. Telegram counts message length in UTF-16 code units, so every length here
does too.
"""

from __future__ import annotations

import gettext
import hashlib
import html as html_lib
import io
import math
import os
import re
import sys
import tempfile
import unicodedata
from collections.abc import Iterable
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import BytecodeCache, Environment, FileSystemLoader, StrictUndefined, nodes, pass_context
from jinja2.bccache import Bucket
from jinja2.ext import InternationalizationExtension
from jinja2.runtime import Context, Macro
from markupsafe import Markup
from markupsafe import escape as markup_escape

from core.paths import TEMPLATES_DIR
from core.runtimes import load_runtimes
from core.units import GB, GIB

LANGS = ("en", "zh")
SOURCE_LANG = "en"  # the templates' own language: a message's English is its msgid, so English has no catalog
# telegram.constants.MessageLimit.MAX_TEXT_LENGTH (tests/test_render.py holds them equal): written out, as
# importing python-telegram-bot for one number took a fifth of `gpufit ask`'s start, which needs no Telegram.
TELEGRAM_LIMIT = 4096
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
    """Columns in a monospace font: CJK and full-width characters take two (no ASCII character does)."""
    if text.isascii():
        return len(text)
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


@pass_context
def fmt_param_count(ctx: Context, params: float | None) -> str:
    """A number of parameters in running text: en as model names say it ('8.0B', fmt_params), zh in 亿 / 万
    as Chinese counts (fmt_count: '80 亿')."""
    return fmt_count(ctx, params) if _lang(ctx) == "zh" else fmt_params(params)


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


LOCALE_DIR = TEMPLATES_DIR / "locale"
DOMAIN = "gpufit"
# The lexer settings the templates are written for; the catalogs' extraction (babel.cfg, tests) uses them too.
TEMPLATE_OPTIONS: dict[str, Any] = {
    "trim_blocks": True,
    "lstrip_blocks": True,
    "keep_trailing_newline": False,
}


def catalog_path(lang: str) -> Any:
    """templates/locale/<lang>/LC_MESSAGES/gpufit.po: the sentences of one translated language."""
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(lang: str) -> gettext.NullTranslations:
    """One language's catalog as gettext translations; English, the source language, prints the msgids
    themselves (gettext's fallback, plurals by n != 1), so a new English sentence is written once, in its
    template.

    The .po file is the source (what people edit and review); `make run` / `make test` compile it to the
    .mo beside it (`pybabel compile`, the Makefile's `catalogs` step), which loads with the standard library
    alone in about a millisecond. When the .mo is missing or older than the .po (a checkout used without
    make, a catalog just edited), the .po itself is read with Babel's reader and compiled in memory: slower
    to start (Babel's import, ~0.1 s) but never stale, and nothing is written.
    """
    if lang == SOURCE_LANG:
        return gettext.NullTranslations()
    po = catalog_path(lang)
    mo = po.with_suffix(".mo")
    if mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
        with mo.open("rb") as compiled:
            return gettext.GNUTranslations(compiled)
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as source:
        catalog = read_po(source, locale=lang, domain=DOMAIN)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


class CompiledTranslations(InternationalizationExtension):
    """jinja2's i18n extension (`{% trans %}`, `_()`), with `{% trans %}` blocks translated when a template
    is compiled rather than on every render.

    Each language has its own environment with its catalog fixed, so a block's sentence is a constant of
    the compiled template, exactly as when each language had its own copy of the template: rendering costs
    what it did. Plural blocks (`{% pluralize %}`) and `_()` calls are looked up at render time as usual.
    Extraction (Babel's jinja2 extractor) sees the standard extension's calls, so catalogs are built and
    checked by the ecosystem's tools.
    """

    def _make_node(  # noqa: PLR0917 (jinja2's signature)
        self,
        singular: str,
        plural: str | None,
        context: str | None,
        variables: dict[str, nodes.Expr],
        plural_expr: nodes.Expr | None,
        vars_referenced: bool,
        num_called_num: bool,
    ) -> nodes.Output:
        if plural is not None:
            return super()._make_node(
                singular, plural, context, variables, plural_expr, vars_referenced, num_called_num
            )
        catalog: gettext.NullTranslations = self.environment.gpufit_translations  # type: ignore[attr-defined]
        if not vars_referenced:
            singular = singular.replace("%%", "%")
        text = catalog.pgettext(context, singular) if context else catalog.gettext(singular)
        if not variables:
            return nodes.Output([nodes.TemplateData(text)])
        pieces = _interpolated(text, variables)
        if pieces is not None:
            return nodes.Output(pieces)
        pairs = [nodes.Pair(nodes.Const(key), value) for key, value in variables.items()]
        return nodes.Output([nodes.Mod(nodes.MarkSafeIfAutoescape(nodes.Const(text)), nodes.Dict(pairs))])


# A translated sentence's placeholders as gettext's old style writes them: `%(name)s`, and `%%` for a percent.
_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%%|%")


def _interpolated(text: str, variables: dict[str, nodes.Expr]) -> list[nodes.Node] | None:
    """A `{% trans %}` sentence with variables as the pieces of its output: its text between placeholders
    and each variable in its place, escaped as any output is (autoescape), which is exactly what
    `Markup(text) % {name: value}` gives (each value escaped, `%%` a percent sign) without formatting
    through markupsafe's escape helpers on every render (~8% of a fit answer's rendering). None when the
    sentence does not use every variable exactly once, or holds another `%` form: it is formatted as
    before."""
    pieces: list[nodes.Node] = []
    used: set[str] = set()
    literal: list[str] = []
    position = 0
    for match in _PLACEHOLDER.finditer(text):
        literal.append(text[position : match.start()])
        position = match.end()
        token, name = match.group(0), match.group(1)
        if token == "%%":
            literal.append("%")
            continue
        if name is None or name not in variables or name in used:
            return None
        used.add(name)
        if "".join(literal):
            pieces.append(nodes.TemplateData("".join(literal)))
        literal = []
        pieces.append(variables[name])
    literal.append(text[position:])
    if "".join(literal):
        pieces.append(nodes.TemplateData("".join(literal)))
    return pieces if used == set(variables) else None


def environment(lang: str = "en") -> Environment:
    """One environment per language, its catalog installed; templates are HTML for Telegram, so every .j2
    is autoescaped. Shared templates (templates/*.j2) compile once per language; templates that stay per
    language (templates/<lang>/*.j2) are loaded only by their own language's environment. Unknown
    languages get English's. Templates `make bytecode` compiled (precompile) are loaded from there."""
    return _environment(lang if lang in LANGS else "en")


@cache
def _environment(lang: str) -> Environment:
    return _build_environment(lang, PrecompiledTemplates(lang, COMPILED_DIR))


# Where `make bytecode` leaves the compiled templates (git-ignored, like Python's own __pycache__).
COMPILED_DIR = TEMPLATES_DIR / "__pycache__"


class PrecompiledTemplates(BytecodeCache):
    """Templates compiled ahead of time (`make bytecode` runs `python -m bot.render --precompile`): jinja2's
    bytecode cache, read-only unless precompiling, so a process never writes into the checkout.

    Compiling a template (lexing, parsing, generating Python, compiling that) is most of what loading one
    costs: about half a second of CPU for the few templates one `gpufit ask` needs, two to three seconds
    for all of them at the bot's start; loading its code object takes a few milliseconds. An entry is used
    only when it was compiled from the same template source (jinja2 checks the source's checksum) and under
    the same fingerprint: the language, its catalog (each `{% trans %}` sentence is a constant of the code,
    CompiledTranslations), this module (the lexer options and that extension), jinja2's and Python's
    versions. Anything else (a clean clone, a template or catalog just edited) compiles as before.
    """

    def __init__(self, lang: str, directory: Path, *, write: bool = False) -> None:
        self.directory = directory
        self.write = write
        self.prefix = f"{lang}-{_fingerprint(lang)}"

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        # by name, not by absolute path: a checkout moved or installed elsewhere still finds its entries
        return f"{self.prefix}-{hashlib.sha1(name.encode()).hexdigest()[:20]}"

    def _path(self, bucket: Bucket) -> Path:
        return self.directory / f"{bucket.key}.cache"

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            with self._path(bucket).open("rb") as compiled:
                bucket.load_bytecode(compiled)
        except FileNotFoundError:
            return
        except Exception:  # a damaged entry is compiled afresh, never an error
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        if not self.write:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                bucket.write_bytecode(out)
            os.replace(temporary, self._path(bucket))
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _fingerprint(lang: str) -> str:
    """What a compiled template depends on besides its own source (see PrecompiledTemplates)."""
    digest = hashlib.sha256(f"{jinja2.__version__}|{sys.version_info[:3]}|{lang}".encode())
    digest.update(Path(__file__).read_bytes())
    if lang != SOURCE_LANG:
        digest.update(catalog_path(lang).read_bytes())
    return digest.hexdigest()[:16]


class FlatGlobalsEnvironment(Environment):
    """An environment whose templates see its globals as one plain dict, not jinja2's ChainMap over them.

    jinja2 gives each template `ChainMap(template globals, environment globals)` so that a global added after
    a template loaded is still seen; a render then pays for the ChainMap at every step: the context's globals
    copied out of it, and at each `{% import %}` a set difference against its keys, one ChainMap lookup per
    global (about a tenth of a fit answer's rendering). Here every global is set in _build_environment,
    before any template loads, and none changes after, so a snapshot holds exactly what the ChainMap would
    show."""

    def make_globals(self, d: Any = None) -> dict[str, Any]:
        return {**self.globals, **(d or {})}


class PlainMacro(Macro):
    """jinja2's Macro, marked when a call can skip its argument handling: a macro with no `caller`, no
    `**kwargs` and no `*varargs` (every one gpufit's templates define), called with exactly its
    parameters by position (DirectCallContext)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plain = not (
            self.caller or self.catch_kwargs or self.catch_varargs or self._environment.is_async
        )


class DirectCallContext(Context):
    """A context whose calls of a PlainMacro given all its parameters by position go straight to the macro's
    function, with what jinja2 does around it kept (the result is Markup when the template autoescapes, a
    StopIteration reads as undefined). jinja2's own path (Context.call, then Macro.__call__ and _invoke)
    looks up how the callable takes its context, copies the arguments into a new list, and checks caller,
    keyword and extra arguments at each of the ~45 macro calls of an answer: about a fifth of rendering.
    Any other call, or a macro called another way, takes jinja2's path unchanged."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (jinja2's own signature)
        if (
            type(__obj) is PlainMacro
            and __obj.plain
            and len(args) == __obj._argument_count
            and (not kwargs or kwargs.keys() <= _SCOPE_KWARGS)
        ):
            try:
                rv = __obj._func(*args)
            except StopIteration:
                return __self.environment.undefined(
                    "value was undefined because a callable raised a StopIteration exception"
                )
            return Markup(rv) if __self.eval_ctx.autoescape else rv
        return super().call(__obj, *args, **kwargs)


# what the generated code passes a call beside its arguments (loop and block scopes); Context.call drops them
# for anything that does not take the context, as a macro does not
_SCOPE_KWARGS = frozenset({"_loop_vars", "_block_vars"})


def escape_unless_markup(value: Any) -> Markup:
    """markupsafe.escape, with what is Markup already (a macro's or a filter's output: ~37 of an answer's
    ~85 escapes) returned as it is: escape would call its __html__ and copy it into an equal new Markup."""
    return value if type(value) is Markup else markup_escape(value)


class PlainMacroTemplate(jinja2.Template):
    """A template whose macros are PlainMacro and whose `{{ … }}` escape with escape_unless_markup: its
    module's `Macro` and `escape` are rebound once it is built (the root function, the blocks and the
    macros defined in it all read that module's globals)."""

    @classmethod
    def from_code(cls, environment: Environment, code: Any, globals: Any, uptodate: Any = None) -> Any:
        template = super().from_code(environment, code, globals, uptodate)
        module = template.root_render_func.__globals__
        module["Macro"] = PlainMacro
        module["escape"] = escape_unless_markup
        return template


def _build_environment(lang: str, bytecode: BytecodeCache | None) -> Environment:
    env = FlatGlobalsEnvironment(
        loader=FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=True,
        extensions=["jinja2.ext.do", CompiledTranslations],
        undefined=StrictUndefined,
        auto_reload=False,
        bytecode_cache=bytecode,
        **TEMPLATE_OPTIONS,
    )
    env.template_class = PlainMacroTemplate
    env.context_class = DirectCallContext
    catalog = translations(lang)
    env.extend(gpufit_translations=catalog)
    env.install_gettext_translations(catalog, newstyle=False)  # type: ignore[attr-defined]
    env.filters.update(
        gib=fmt_gib,
        gb=fmt_gb,
        pct=fmt_pct,
        bar=fmt_bar,
        num=fmt_num,
        count=fmt_count,
        params=fmt_params,
        param_count=fmt_param_count,
        tokens=fmt_tokens,
        money=fmt_money,
        duration=fmt_duration,
        pad=fmt_pad,
        rpad=fmt_rpad,
        joined=fmt_join,
        card_name=fmt_card_name,
        runtime_name=fmt_runtime_name,
    )
    env.globals.update(BAR_WIDTH=BAR_WIDTH, lang=lang)
    return env


@cache
def _shared_names() -> frozenset[str]:
    return frozenset(path.stem for path in TEMPLATES_DIR.glob("*.j2"))


def template_name(name: str, lang: str) -> str:
    """Where template `name` lives: templates/<name>.j2 when both languages share it, else
    templates/<lang>/<name>.j2 (the few whose two languages differ in structure)."""
    return f"{name}.j2" if name in _shared_names() else f"{lang}/{name}.j2"


def _templates_of(env: Environment, lang: str) -> list[str]:
    return [
        name
        for name in env.list_templates(extensions=["j2"])
        if "/" not in name or name.startswith(f"{lang}/")
    ]


def compile_all() -> None:
    """Every template each language uses, compiled (the bot's warm start)."""
    for lang in LANGS:
        env = environment(lang)
        for name in _templates_of(env, lang):
            env.get_template(name)


def precompile(directory: Path = COMPILED_DIR) -> int:
    """Compile every template of every language into `directory` for PrecompiledTemplates (`make
    bytecode`); entries of earlier fingerprints are removed. Returns how many were written."""
    written = 0
    directory.mkdir(parents=True, exist_ok=True)
    current = {PrecompiledTemplates(lang, directory).prefix for lang in LANGS}
    for old in directory.glob("*.cache"):
        if old.name.rsplit("-", 1)[0] not in current:
            old.unlink(missing_ok=True)
    for lang in LANGS:
        env = _build_environment(lang, PrecompiledTemplates(lang, directory, write=True))
        for name in _templates_of(env, lang):
            env.get_template(name)
            written += 1
    return written


_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
# '10 万 次': a count's 万 / 亿 (fmt_count) binds to the Chinese word after it, '10 万次'
_ZH_UNIT_SPACE = re.compile(r"(\d (?:万亿|亿|万)) (?=[\u4e00-\u9fff])")


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
    """Template `name` in `lang` (see template_name) with `data`; unknown languages fall back to English."""
    lang = lang if lang in LANGS else "en"
    template = environment(lang).get_template(template_name(name, lang))
    text = tidy(template.render(lang=lang, **data))
    return _ZH_UNIT_SPACE.sub(r"\1", text) if lang == "zh" else text


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


if __name__ == "__main__":
    if sys.argv[1:] != ["--precompile"]:
        sys.exit("usage: python -m bot.render --precompile  (compiles the templates for `make bytecode`)")
    print(f"{precompile()} templates compiled into {COMPILED_DIR}")
