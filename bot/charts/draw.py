"""Specs to PNG with matplotlib's Agg canvas: no pyplot, no display, no global figure state.

Imported only when a chart is drawn (bot.charts.render_png imports it), so neither `gpufit ask` nor the
bot's start pays for matplotlib. Pictures are for phones: 1200 px wide, type of 26 px and more, few words,
values written on the marks rather than left to a legend. Drawing is serialised by one lock (matplotlib's
font cache is shared and not thread-safe); callers run it in a worker thread, off the event loop.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator
from PIL import Image

from bot.charts import fonts
from bot.charts.spec import (
    CardsNeededChart,
    ChartSpec,
    LargestModelChart,
    MemoryBar,
    MemoryChart,
    OptionPoint,
    OptionsChart,
)
from bot.charts.words import word
from bot.render import fmt_card_name, fmt_money, fmt_num
from core.units import GIB

WIDTH_IN, HEIGHT_IN, DPI = 10.0, 7.0, 120  # 1200 × 840 px
BASE_PT = 15.5  # ≈ 26 px at 120 dpi
TITLE_PT = 19.0
SMALL_PT = 13.0
LOG_SPREAD = 8.0  # an axis goes logarithmic when its largest value is this many times its smallest
MIN_SLOTS = 4  # horizontal bar charts are drawn with room for at least this many bars

COMPONENT_COLOURS = {
    "weights": "#4C72B0",
    "network": "#4C72B0",
    "denoiser": "#4C72B0",
    "text_encoders": "#64B5CD",
    "vae": "#CCB974",
    "kv_cache": "#DD8452",
    "activations": "#55A868",
    "logits": "#8DC26F",
    "gradients": "#8172B3",
    "optimizer": "#C44E52",
    "adapters": "#DA8BC3",
    "overhead": "#9E9E9E",
    "total": "#7F8FA6",
}
VERDICT_COLOURS = {"fits": "#2E7D32", "tight": "#E69F00", "no": "#C62828", None: "#37474F"}
INK = "#212121"
GRID = "#DDDDDD"
CHEAPEST = "#2E7D32"
FASTEST = "#1565C0"

_LOCK = threading.Lock()


def _FEW_TICKS() -> MaxNLocator:  # noqa: N802 (a locator factory, read like a constant)
    """Five or six round ticks: enough to read a value on a phone, and each tick is ~2 ms to draw."""
    return MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10])


_FONTS_READY: list[bool] = []


def _setup_fonts() -> None:
    """Register the shipped font once; every text of a chart uses it, DejaVu Sans behind it for Latin."""
    if _FONTS_READY:
        return
    for path in (fonts.REGULAR, fonts.BOLD):
        font_manager.fontManager.addfont(str(path))
    matplotlib.rcParams.update(
        {
            "font.family": [fonts.FAMILY, fonts.FALLBACK],
            "font.size": BASE_PT,
            "axes.titlesize": TITLE_PT,
            "axes.labelsize": BASE_PT,
            "xtick.labelsize": BASE_PT,
            "ytick.labelsize": BASE_PT,
            "legend.fontsize": SMALL_PT,
            "axes.edgecolor": "#9E9E9E",
            "axes.labelcolor": INK,
            "text.color": INK,
            "xtick.color": INK,
            "ytick.color": INK,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.unicode_minus": True,
            "svg.fonttype": "none",
        }
    )
    _FONTS_READY.append(True)


def draw_png(spec: ChartSpec, lang: str) -> bytes:
    """One chart as PNG bytes, every word in `lang`."""
    with _LOCK:
        _setup_fonts()
        fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, facecolor="white")
        canvas = FigureCanvasAgg(fig)
        if isinstance(spec, MemoryChart):
            _memory(fig, spec, lang)
        elif isinstance(spec, OptionsChart):
            _options(fig, spec, lang)
        elif isinstance(spec, LargestModelChart):
            _largest(fig, spec, lang)
        else:
            _needed(fig, spec, lang)
        fig.text(0.012, 0.012, word(lang, "footer"), fontsize=SMALL_PT - 1, color="#757575")
        canvas.draw()  # type: ignore[no-untyped-call]
        return _png(canvas)


def _png(canvas: FigureCanvasAgg) -> bytes:
    """The canvas as a 256-colour PNG: a chart has a dozen flat colours and their anti-aliased edges, so the
    palette looks the same as RGBA at a third of the bytes (~35 KB), and encodes faster than savefig."""
    width, height = canvas.get_width_height()
    pixels = canvas.buffer_rgba()  # type: ignore[no-untyped-call]
    image = Image.frombuffer("RGBA", (width, height), pixels, "raw", "RGBA", 0, 1)
    palette = image.convert("RGB").quantize(256, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    palette.save(out, format="PNG", compress_level=6)
    return out.getvalue()


def _title(fig: Figure, text: str) -> None:
    fig.suptitle(_wrap(text, 48), x=0.02, y=0.975, ha="left", va="top", fontsize=TITLE_PT, fontweight="bold")


def _wrap(text: str, width: int) -> str:
    """Break a long title at a space (or anywhere, for Chinese) so it stays inside a phone's view."""
    if _display_width(text) <= width:
        return text
    cut = 0
    for i in range(len(text)):
        if _display_width(text[: i + 1]) > width:
            break
        cut = i + 1
    space = text.rfind(" ", 0, cut)
    cut = space if space > width // 3 else cut
    return text[:cut].rstrip() + "\n" + text[cut:].lstrip()


def _display_width(text: str) -> int:
    return sum(2 if ord(c) >= 0x2E80 else 1 for c in text)


def _gib(n_bytes: float) -> float:
    return n_bytes / GIB


# -- memory ------------------------------------------------------------------------------------------------


def _memory(fig: Figure, spec: MemoryChart, lang: str) -> None:
    """Horizontal bars, the job as asked on top: long card names read at the left, values at the ends."""
    title = (
        word(lang, "title_vision", spec.model_name)
        if spec.family == "vision"
        else word(lang, "title_memory", spec.model_name, spec.job)
    )
    _title(fig, title)
    ax = fig.add_axes((0.25, 0.14, 0.43, 0.72))
    legend_ax = fig.add_axes((0.71, 0.14, 0.28, 0.72))
    legend_ax.axis("off")
    height = 0.62
    positions = list(range(len(spec.bars)))[::-1]
    first_capacity = next((b.capacity_bytes for b in spec.bars if b.capacity_bytes), None)
    right = 0.0
    ends: list[tuple[int, float, str]] = []
    for y, bar in zip(positions, spec.bars, strict=True):
        left = 0.0
        for segment in bar.segments:
            size = _gib(segment.bytes)
            colour = COMPONENT_COLOURS.get(segment.name, "#7F8FA6")
            if segment.name == "total":
                colour = _lighter(VERDICT_COLOURS[bar.verdict])
            ax.barh(y, size, height, left=left, color=colour, edgecolor="white", linewidth=1.2)
            left += size
        need = _gib(bar.need_bytes)
        stacked = bar.role != "fix"
        if stacked:
            _band(ax, need, y, need * spec.band, horizontal=True, cap=9)
        end = need * (1 + spec.band) if stacked else need
        label = word(lang, "need", bar.need_bytes, spec.band if stacked else None)
        if bar.capacity_bytes:
            capacity = _gib(bar.capacity_bytes)
            ax.vlines(capacity, y - height * 0.75, y + height * 0.75, color=INK, linewidth=3.5)
            end = max(end, capacity)
            if bar.capacity_bytes != first_capacity:
                label = f"{fmt_num(need)} / {fmt_num(capacity)} GiB"
        ends.append((y, end, label))
        right = max(right, end)
    for line in spec.lines:
        capacity = _gib(line.capacity_bytes)
        ax.axvline(capacity, color="#616161", linestyle=(0, (6, 4)), linewidth=1.6)
        right = max(right, capacity)
    for y, end, label in ends:
        ax.text(end + right * 0.02, y, label, va="center", fontsize=SMALL_PT, fontweight="bold")
    if spec.lines:
        names = [word(lang, "usable", ln.card_name, ln.count, ln.capacity_bytes) for ln in spec.lines]
        for n, (line, name) in enumerate(zip(spec.lines, names, strict=True)):
            ax.annotate(name, (_gib(line.capacity_bytes), -0.5), xytext=(4, 6 + 24 * n),
                        textcoords="offset points", fontsize=SMALL_PT - 1, color="#424242",
                        rotation=0, ha="left", va="bottom", annotation_clip=False)  # fmt: skip
    ax.set_yticks(positions, [_bar_label(b, lang) for b in spec.bars])
    for tick, bar in zip(ax.get_yticklabels(), spec.bars, strict=True):
        tick.set_color(VERDICT_COLOURS[bar.verdict])
        tick.set_fontweight("bold")
    ax.set_ylim(-0.6, len(spec.bars) - 0.4)
    ax.set_xlim(0, (right or 1) * 1.45)
    ax.set_xlabel(word(lang, "axis_memory"))
    ax.xaxis.set_major_locator(_FEW_TICKS())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_num(v)))
    ax.grid(axis="x", color=GRID)
    ax.set_axisbelow(True)
    _memory_legend(legend_ax, spec, lang)


def _band(ax: Axes, x: float, y: float, half: float, *, horizontal: bool, cap: float) -> None:
    """An error bar (the estimate's ± band) as one line with end caps: errorbar() builds a dozen artists."""
    xs, ys = ([x - half, x + half], [y, y]) if horizontal else ([x, x], [y - half, y + half])
    ax.plot(xs, ys, color=INK, linewidth=2, marker="|" if horizontal else "_", markersize=cap * 2,
            markeredgewidth=2)  # fmt: skip


def _bar_label(bar: MemoryBar, lang: str) -> str:
    name = _wrap(word(lang, "bar", bar), 16)
    return f"{name}\n{word(lang, 'verdict', bar.verdict)}" if bar.verdict else name


def _memory_legend(ax: Axes, spec: MemoryChart, lang: str) -> None:
    """Components of the first stacked bar, largest first, each with its GiB; then what the marks mean."""
    stacked = next((b for b in spec.bars if len(b.segments) > 1 or b.segments[0].name != "total"), None)
    rows: list[tuple[str, str, str]] = []
    if stacked is not None:
        for segment in sorted(stacked.segments, key=lambda s: -s.bytes):
            label = f"{word(lang, 'component', segment.name)}  {fmt_num(_gib(segment.bytes))}"
            rows.append(("patch", COMPONENT_COLOURS.get(segment.name, "#7F8FA6"), label))
    capacities = [b for b in spec.bars if b.capacity_bytes]
    if capacities:
        first = capacities[0]
        assert first.capacity_bytes is not None
        usable = word(lang, "usable", first.card_name or "", first.count, first.capacity_bytes)
        rows.append(("line", INK, usable))
    elif spec.lines:
        rows.append(("dash", "#616161", word(lang, "no_card")))
    rows.append(("band", INK, word(lang, "band_legend")))
    step = 1.0 / max(len(rows) + 1, 9)
    for n, (kind, colour, label) in enumerate(rows):
        y = 1.0 - (n + 0.5) * step
        if kind == "patch":
            ax.add_patch(matplotlib.patches.Rectangle((0.0, y - step * 0.3), 0.09, step * 0.6, color=colour))
        elif kind == "band":
            _band(ax, 0.045, y, step * 0.3, horizontal=False, cap=6)
        else:
            style = "-" if kind == "line" else (0, (4, 3))
            thick = 3.5 if kind == "line" else 1.6
            ax.plot([0.0, 0.09], [y, y], color=colour, linewidth=thick, linestyle=style)
        ax.text(0.13, y, _wrap(label, 24), va="center", fontsize=SMALL_PT)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)


def _lighter(colour: str) -> str:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{int(c + (255 - c) * 0.45):02X}" for c in (red, green, blue))


# -- options (compare, plans) ----------------------------------------------------------------------


def _options(fig: Figure, spec: OptionsChart, lang: str) -> None:
    _title(fig, word(lang, "title_options", spec.source, spec.model_name, spec.job))
    plotted = [p for p in spec.points if p.apart is None and p.x is not None and p.y is not None]
    apart = [p for p in spec.points if p.apart is not None]
    bottom = 0.22 if apart else 0.14
    ax = fig.add_axes((0.13, bottom, 0.8, 0.87 - bottom))
    xs = [p.x for p in plotted if p.x is not None]
    ys = [p.y for p in plotted if p.y is not None]
    log_x = _needs_log(xs)
    log_y = _needs_log(ys)
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    for point in plotted:
        assert point.x is not None and point.y is not None
        marker, colour, size = "o", "#546E7A", 190
        if point.cheapest:
            marker, colour, size = "*", CHEAPEST, 620
        if point.fastest:
            marker, colour, size = ("*", CHEAPEST, 620) if point.cheapest else ("D", FASTEST, 230)
        ax.plot([point.x], [point.y], marker=marker, markersize=size**0.5, color=colour, zorder=3,
                markeredgecolor="white", linestyle="none")  # fmt: skip
    _pad_limits(ax, xs, ys, log_x, log_y)
    _number_axes(ax, spec, log_x, log_y)
    _label_points(ax, plotted, lang, spec)
    better = word(lang, "better", spec.y_metric)
    ax.set_xlabel(word(lang, "axis", spec.x_metric, spec.currency, spec.unit))
    ax.set_ylabel(f"{word(lang, 'axis', spec.y_metric, spec.currency, spec.unit)}  {better}")
    ax.grid(color=GRID, which="major")
    ax.set_axisbelow(True)
    if apart:
        groups: dict[str, list[str]] = {}
        for point in apart:
            groups.setdefault(point.apart or "", []).append(word(lang, "cards", point.count, point.card_name))
        text = "   ".join(f"{word(lang, 'apart', why)}: {', '.join(names)}" for why, names in groups.items())
        fig.text(0.13, 0.07, _wrap(text, 70), fontsize=SMALL_PT + 1, color=VERDICT_COLOURS["no"], va="bottom")


def _number_axes(ax: Axes, spec: OptionsChart, log_x: bool, log_y: bool) -> None:
    """Money on x, plain numbers on y; log axes tick at 1, 2, 5 × 10ⁿ and never in scientific notation."""
    for axis, log, money in ((ax.xaxis, log_x, True), (ax.yaxis, log_y, False)):
        if log:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axis.set_minor_locator(NullLocator())  # a log axis's minor ticks cost ~0.1 s to draw
        else:
            axis.set_major_locator(_FEW_TICKS())
        if money:
            axis.set_major_formatter(FuncFormatter(lambda v, _: fmt_money(v, spec.currency)))
        else:
            axis.set_major_formatter(FuncFormatter(lambda v, _: fmt_num(v)))


def _needs_log(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return len(positive) > 1 and max(positive) / min(positive) > LOG_SPREAD


def _pad_limits(ax: Axes, xs: Sequence[float], ys: Sequence[float], log_x: bool, log_y: bool) -> None:
    """Room around the points for their labels; a linear axis starts at zero when that costs little."""
    for values, log, setter in ((xs, log_x, ax.set_xlim), (ys, log_y, ax.set_ylim)):
        if not values:
            continue
        low, high = min(values), max(values)
        if log:
            setter(low / 1.6, high * 1.6)
        else:
            span = high - low or high or 1.0
            start = 0.0 if low - span * 0.3 <= high * 0.35 else low - span * 0.3
            setter(start, high + span * 0.35)


def _label_points(ax: Axes, points: Sequence[OptionPoint], lang: str, spec: OptionsChart) -> None:
    """Each point's card × count, its figures, and "cheapest" / "fastest" in their colour; each label goes
    where it overlaps no other label, no point and stays inside the plot (right of the point if it can)."""
    scale = DPI / 72.0
    box = ax.get_window_extent()
    markers = [ax.transData.transform((p.x, p.y)) for p in points if p.x is not None and p.y is not None]
    placed: list[tuple[float, float, float, float]] = []
    groups: dict[tuple[float, float], list[OptionPoint]] = {}
    for point in points:
        assert point.x is not None and point.y is not None
        groups.setdefault((round(point.x, 6), round(point.y, 6)), []).append(point)
    ordered = sorted(groups.values(), key=lambda g: (-any(p.cheapest or p.fastest for p in g), g[0].x or 0.0))
    for group in ordered:
        point = group[0]
        assert point.x is not None and point.y is not None
        lines = []
        for same in group:  # options with the very same figures share one label
            name = word(lang, "cards", same.count, same.card_name)
            if same.precision:
                name += " · " + word(lang, "variant", same.method, same.precision)
            lines.append(name)
        lines.append(f"{fmt_money(point.x, spec.currency)} · {_y_text(point.y, spec)}")
        cheapest = any(p.cheapest for p in group)
        fastest = any(p.fastest for p in group)
        colour = INK
        if cheapest and fastest:
            lines.append(word(lang, "cheapest_fastest"))
            colour = CHEAPEST
        elif cheapest:
            lines.append(word(lang, "cheapest"))
            colour = CHEAPEST
        elif fastest:
            lines.append(word(lang, "fastest"))
            colour = FASTEST
        width = max(_display_width(line) for line in lines) * SMALL_PT * 0.6 * scale
        height = len(lines) * SMALL_PT * 1.3 * scale
        px, py = (float(v) for v in ax.transData.transform((point.x, point.y)))
        gap = 14 * scale
        candidates = [
            (gap, gap * 0.4),
            (gap, -height - gap * 0.4),
            (-width - gap, gap * 0.4),
            (-width - gap, -height - gap * 0.4),
            (-width / 2, gap * 1.6),
            (-width / 2, -height - gap * 1.6),
            (gap, gap * 0.4 + height),
            (gap, -2 * height - gap * 0.4),
        ]

        def cost(offset: tuple[float, float], px: float = px, py: float = py, w: float = width,
                 h: float = height) -> float:  # fmt: skip
            x0, y0 = px + offset[0], py + offset[1]
            rect = (x0, y0, x0 + w, y0 + h)
            penalty = sum(_overlap(rect, other) for other in placed)
            penalty += sum(_overlap(rect, (mx - 20, my - 20, mx + 20, my + 20)) * 3 for mx, my in markers)
            # a label must read as its own point's: no other point nearer to it than its own
            near = _distance(rect, (px, py))
            penalty += sum(
                w * h for mx, my in markers if (mx, my) != (px, py) and _distance(rect, (mx, my)) < near
            )
            outside = max(0.0, box.x0 - rect[0]) + max(0.0, rect[2] - box.x1 - 40 * scale)
            outside += max(0.0, box.y0 - rect[1]) + max(0.0, rect[3] - box.y1)
            return float(penalty + outside * h * 4)

        best = min(candidates, key=cost)
        x0, y0 = px + best[0], py + best[1]
        placed.append((x0, y0, x0 + width, y0 + height))
        ax.annotate("\n".join(lines), (point.x, point.y), xytext=(best[0] / scale, best[1] / scale),
                    textcoords="offset points", fontsize=SMALL_PT, color=colour,
                    fontweight="bold" if colour != INK else "normal", va="bottom", ha="left",
                    annotation_clip=False, linespacing=1.15)  # fmt: skip


def _distance(rect: tuple[float, float, float, float], point: tuple[float, float]) -> float:
    """From a label's box to a point (0 inside it)."""
    dx = max(rect[0] - point[0], 0.0, point[0] - rect[2])
    dy = max(rect[1] - point[1], 0.0, point[1] - rect[3])
    return float((dx * dx + dy * dy) ** 0.5)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


def _y_text(value: float, spec: OptionsChart) -> str:
    if spec.y_metric == "hours":
        return f"{fmt_num(value)} h"
    if spec.y_metric == "seconds_per_item":
        return f"{fmt_num(value)} s"
    return f"{fmt_num(value)} tok/s"


# -- largest model and cards needed ------------------------------------------------------------


def _largest(fig: Figure, spec: LargestModelChart, lang: str) -> None:
    _title(fig, word(lang, "title_largest", spec.card_name, spec.gpus))
    ax = fig.add_axes((0.27, 0.14, 0.68, 0.7))
    labels = [word(lang, "largest_job", r.task, r.method, r.precision) for r in spec.rows]
    values = [r.params_b or 0.0 for r in spec.rows]
    colours = ["#4C72B0" if r.task == "inference" else "#55A868" for r in spec.rows]
    positions = _slots(len(spec.rows))
    ax.barh(positions, values, color=colours, height=0.62)
    high = max(values) if values and max(values) > 0 else 1.0
    for y, row in zip(positions, spec.rows, strict=True):
        if row.params_b:
            text = word(lang, "params", row.params_b)
            if row.examples:
                text += " · " + row.examples[0]
        else:
            text = word(lang, "none_fits")
        ax.text((row.params_b or 0.0) + high * 0.015, y, text, va="center", fontsize=SMALL_PT)
    ax.set_yticks(positions, labels)
    ax.set_ylim(-0.6, max(len(spec.rows), MIN_SLOTS) - 0.4)
    ax.set_xlim(0, high * 1.55)
    ax.set_xlabel(word(lang, "axis_params"))
    ax.xaxis.set_major_locator(_FEW_TICKS())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_num(v)))
    ax.grid(axis="x", color=GRID)
    ax.set_axisbelow(True)


def _slots(rows: int) -> list[int]:
    """Bar positions from the top; a chart of one or two rows keeps bars of a normal thickness."""
    top = max(rows, MIN_SLOTS) - 1
    return [top - i for i in range(rows)]


def _needed(fig: Figure, spec: CardsNeededChart, lang: str) -> None:
    _title(fig, word(lang, "title_needed", spec.model_name, spec.job))
    ax = fig.add_axes((0.27, 0.14, 0.68, 0.7))
    positions = _slots(len(spec.rows))
    counts = [row.count or spec.max_count for row in spec.rows]
    high = max(counts) if counts else 1
    log = high / max(min(counts), 1) > LOG_SPREAD
    colours = ["#4C72B0" if row.count else "#B0BEC5" for row in spec.rows]
    ax.barh(positions, counts, color=colours, height=0.62)
    for y, row, count in zip(positions, spec.rows, counts, strict=True):
        if row.count is None:
            text = word(lang, "beyond", spec.max_count)
        elif row.need_bytes and row.capacity_bytes:
            text = f"{row.count} · {word(lang, 'needed_note', row.need_bytes, row.capacity_bytes)}"
        else:
            text = str(row.count)
        ax.text(count * (1.06 if log else 1.0) + (0 if log else high * 0.015), y, text, va="center",
                fontsize=SMALL_PT)  # fmt: skip
    ax.set_yticks(positions, [fmt_card_name(row.card_name) for row in spec.rows])
    ax.set_ylim(-0.6, max(len(spec.rows), MIN_SLOTS) - 0.4)
    if log:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlim(0.8, high * 12)
    else:
        ax.set_xlim(0, high * 2.1)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_num(v) if v >= 1 else ""))
    ax.set_xlabel(word(lang, "axis_count"))
    ax.grid(axis="x", color=GRID)
    ax.set_axisbelow(True)


def figure_texts(spec: ChartSpec, lang: str) -> list[str]:
    """Every string a chart of `spec` draws (for tests: all of it must be in the shipped font)."""
    with _LOCK:
        _setup_fonts()
        fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
        FigureCanvasAgg(fig)
        drawers: dict[type, Any] = {
            MemoryChart: _memory,
            OptionsChart: _options,
            LargestModelChart: _largest,
            CardsNeededChart: _needed,
        }
        drawers[type(spec)](fig, spec, lang)
        fig.canvas.draw()
        return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]
