"""Charts (bot/charts): every kind drawn in both languages from real answers, decoded with Pillow; the
figures on the picture are the answer's JSON figures; the shipped font covers everything a chart prints;
matplotlib stays out of `gpufit ask`'s and the answers' imports."""

from __future__ import annotations

import io
import subprocess
import sys
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from fontTools.ttLib import TTFont
from PIL import Image

from bot.answer import Answer, answer
from bot.charts import caption, render_png, spec_from_json, spec_json
from bot.charts.demo import QUESTIONS
from bot.charts.fonts import BOLD, REGULAR, chart_characters, template_characters
from bot.charts.spec import CardsNeededChart, LargestModelChart, MemoryChart, OptionsChart
from core.paths import ROOT

MAX_PNG_BYTES = 150_000
MIN_WIDTH = 1000
CASES = [
    (name, lang, pair[0 if lang == "en" else 1]) for name, pair in QUESTIONS.items() for lang in ("en", "zh")
]


@cache
def _answer(question: str, lang: str) -> Answer:
    return answer(question, lang=lang)


@cache
def _cmap(path: str) -> frozenset[int]:
    return frozenset(TTFont(path).getBestCmap())


def _fallback() -> frozenset[int]:
    """matplotlib's own DejaVu Sans, behind the shipped font for the odd Latin symbol (⅓)."""
    import matplotlib

    return _cmap(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"))


def _covered(text: str) -> set[str]:
    """Characters of `text` neither the shipped font nor its fallback has (whitespace needs no glyph)."""
    return {c for c in text if not c.isspace() and ord(c) not in _cmap(str(REGULAR)) | _fallback()}


def test_importing_the_cli_and_answering_does_not_import_matplotlib() -> None:
    code = (
        "import sys, bot.cli, bot.app\n"
        "from bot.answer import answer\n"
        "a = answer('L40S or A100 for serving Qwen2.5-32B?')\n"
        "assert a.chart is not None\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'PIL', 'fontTools'))\n"
        "assert not bad and 'bot.charts.draw' not in sys.modules, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("font", [REGULAR, BOLD], ids=["regular", "bold"])
def test_the_shipped_font_covers_every_character_a_chart_template_can_print(font: Any) -> None:
    cmap = _cmap(str(font))
    needed = {c for c in chart_characters() if not c.isspace()}
    missing = sorted(c for c in needed if ord(c) not in cmap and ord(c) not in _fallback())
    assert not missing, f"run tools/subset_chart_font.py: the chart font lacks {''.join(missing)!r}"
    assert any("\u4e00" <= c <= "\u9fff" for c in template_characters())  # the Chinese templates are in
    for lang in ("en", "zh"):  # so that the font covers chart.j2 alone, whatever other templates say
        assert "{% import" not in (ROOT / "templates" / lang / "chart.j2").read_text(encoding="utf-8")
    assert font.stat().st_size < 400_000  # a subset, not the 20 MB font


@pytest.mark.parametrize(("name", "lang", "question"), CASES, ids=[f"{n}-{lang}" for n, lang, _ in CASES])
def test_every_chart_kind_draws_a_phone_readable_png_in_both_languages(
    name: str, lang: str, question: str
) -> None:
    reply = _answer(question, lang)
    assert reply.chart is not None, (name, reply.kind)
    assert any(b.action == "chart" for row in reply.buttons for b in row)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = render_png(reply.chart, lang)
    assert not [w for w in caught if "missing" in str(w.message).lower()], [str(w.message) for w in caught]
    assert len(png) < MAX_PNG_BYTES
    image = Image.open(io.BytesIO(png))
    image.load()
    assert image.format == "PNG"
    assert image.width >= MIN_WIDTH and image.height >= 700
    from bot.charts.draw import figure_texts

    texts = figure_texts(reply.chart, lang)
    assert texts, name
    assert not set().union(*(_covered(t) for t in texts)), texts
    if lang == "zh":  # the words are the answer's language
        assert any("\u4e00" <= c <= "\u9fff" for t in texts for c in t)
    else:
        assert not any("\u4e00" <= c <= "\u9fff" for t in texts for c in t), texts
    line = caption(reply.chart, lang)
    assert line.startswith("📊 ") and "\n" not in line and len(line) < 200


def test_a_spec_survives_the_store_round_trip() -> None:
    for name, lang, question in CASES:
        spec = _answer(question, lang).chart
        assert spec is not None
        assert spec_from_json(spec_json(spec)) == spec, name


def _facts(question: str, lang: str = "en") -> tuple[Any, dict[str, Any]]:
    reply = _answer(question, lang)
    return reply.chart, reply.to_json()["answer"]


def test_the_memory_chart_plots_the_answers_breakdown_verdict_and_fixes() -> None:
    chart, facts = _facts(QUESTIONS["fit_no"][0])
    assert isinstance(chart, MemoryChart)
    asked = chart.bars[0]
    assert {s.name: s.bytes for s in asked.segments} == {k: v for k, v in facts["breakdown"].items() if v > 0}
    assert sum(s.bytes for s in asked.segments) == facts["total_bytes"]
    main = next(v for v in facts["verdicts"] if v["count"] == asked.count)
    assert (asked.need_bytes, asked.capacity_bytes, asked.verdict) == (
        main["need_bytes"],
        main["capacity_bytes"],
        facts["verdict"],
    )
    assert chart.band == facts["uncertainty"]
    fixes = chart.bars[1:]
    assert fixes, "a job that does not fit shows what would"
    for bar, fix in zip(fixes, facts["fixes"], strict=False):
        assert (bar.fix, bar.need_bytes, bar.capacity_bytes, bar.verdict, bar.count) == (
            fix["kind"],
            fix["need_bytes"],
            fix["capacity_bytes"],
            fix["verdict"],
            fix["count"],
        )


def test_the_methods_chart_plots_each_methods_total() -> None:
    chart, facts = _facts(QUESTIONS["methods"][0])
    assert isinstance(chart, MemoryChart)
    assert {b.fix: sum(s.bytes for s in b.segments) for b in chart.bars} == {
        m: row["total_bytes"] for m, row in facts["methods"].items()
    }


def test_the_compare_chart_plots_the_answers_rows_and_winners() -> None:
    chart, facts = _facts(QUESTIONS["compare"][0])
    assert isinstance(chart, OptionsChart)
    rows = facts["compare"]["rows"]
    assert len(chart.points) == len(rows)
    winner = facts["compare"]["winner"]
    for point, row in zip(chart.points, rows, strict=True):
        assert point.count == row["count"] and point.fits == row["fits"]
        if point.apart is None:
            assert point.x == row["cost"]
            assert point.y == (row["hours"] if chart.y_metric == "hours" else row["tokens_per_s"])
        assert point.cheapest == (point.apart is None and row["card"] == winner["cost"])
        assert point.fastest == (point.apart is None and row["card"] == winner["speed"])
    assert sum(p.cheapest for p in chart.points) <= 1 and sum(p.fastest for p in chart.points) <= 1


def test_a_compare_chart_sets_apart_the_cards_that_do_not_fit() -> None:
    chart, facts = _facts("RTX 3060 vs A100 80GB for LoRA Qwen2.5 14B on one card")
    assert isinstance(chart, OptionsChart)
    for point, row in zip(chart.points, facts["compare"]["rows"], strict=True):
        assert (point.apart == "no_fit") == (not row["fits"])
        assert point.apart is None or (point.x is None and point.y is None)
    assert any(p.apart == "no_fit" for p in chart.points)
    assert any(p.apart is None for p in chart.points)
    render_png(chart, "en")
    nothing_fits = _answer("1x RTX 4090 vs 1x H100 for serving Llama 3.1 70B", "zh").chart
    assert isinstance(nothing_fits, OptionsChart)
    assert all(p.apart == "no_fit" for p in nothing_fits.points)
    Image.open(io.BytesIO(render_png(nothing_fits, "zh"))).load()


@pytest.mark.parametrize("name", ["plan", "plan_run"])
def test_the_plan_chart_plots_the_plans_figures(name: str) -> None:
    chart, facts = _facts(QUESTIONS[name][0])
    assert isinstance(chart, OptionsChart)
    plans = facts["plans"]
    assert [(p.card_name, p.count, p.precision) for p in chart.points] == [
        (p["card_name"], p["count"], p["precision"]) for p in plans[: len(chart.points)]
    ]
    for point, plan in zip(chart.points, plans, strict=False):
        if chart.x_metric == "cost_total":
            assert (point.x, point.y) == (plan["total_cost"], plan["training_hours"])
        else:
            speed = plan["training_tokens_per_s"] or plan["decode_tokens_per_s"]
            assert (point.x, point.y) == (plan["cost_per_hour"], speed)
    plotted = [p for p in chart.points if p.apart is None]
    assert [p for p in plotted if p.cheapest] == [min(plotted, key=lambda p: p.x or 0.0)]
    if name == "plan_run":
        assert chart.x_metric == "cost_total" and chart.y_metric == "hours"


def test_the_largest_model_chart_plots_the_answers_sizes() -> None:
    chart, facts = _facts(QUESTIONS["largest_one"][0])
    assert isinstance(chart, LargestModelChart)
    assert [(r.task, r.method, r.precision, r.params_b) for r in chart.rows] == [
        (r["task"], r["method"], r["precision"], r["params_b"]) for r in facts["largest_model"]
    ]
    assert chart.gpus == facts["gpus"]


def test_the_cards_needed_chart_plots_the_answers_counts() -> None:
    chart, facts = _facts(QUESTIONS["cards_usual"][0])
    assert isinstance(chart, CardsNeededChart)
    assert [r.count for r in chart.rows] == [o["count"] for o in facts["options"]]
    assert len(chart.rows) > 1


def test_the_vision_charts_plot_the_answers_memory_and_plans() -> None:
    chart, facts = _facts(QUESTIONS["vision"][0])
    assert isinstance(chart, MemoryChart) and chart.family == "vision"
    assert sum(s.bytes for s in chart.bars[0].segments) == facts["total_bytes"]
    assert {s.name for s in chart.bars[0].segments} >= {"denoiser", "text_encoders", "vae"}
    chart, facts = _facts(QUESTIONS["vision_plan"][0])
    assert isinstance(chart, OptionsChart) and chart.source == "vision_plan"
    assert [(p.x, p.y) for p in chart.points] == [
        (p["cost_per_thousand_items"], p["seconds_per_item"]) for p in facts["plans"]
    ]
    assert chart.x_metric == "cost_per_thousand" and chart.y_metric == "seconds_per_item"


def test_only_kinds_the_kinds_table_marks_as_charted_carry_a_chart() -> None:
    from bot.answer.kinds_table import spec_of

    for name, lang, question in CASES:
        reply = _answer(question, lang)
        assert spec_of(reply.kind).chart, (name, reply.kind)
    for question in ("what is VRAM?", "H100 specs", "hello", "Is an H20 good for training?"):
        reply = answer(question)
        assert not spec_of(reply.kind).chart and reply.chart is None, (question, reply.kind)


def test_answers_without_figures_to_draw_have_no_chart_button() -> None:
    for question in ("what is VRAM?", "hello", "what's the weather"):
        reply = answer(question)
        assert reply.chart is None
        assert not any(b.action == "chart" for row in reply.buttons for b in row)
