"""Every kind of answer renders in both languages as valid, escaped Telegram HTML within the length limit."""

from __future__ import annotations

import pytest

from bot import answer as answer_module
from bot.answer import (
    FAQ_IDS,
    SCENARIO_IDS,
    Answer,
    Lang,
    answer,
    answer_query,
    card_answer,
    clarify_answer,
    compare_answer,
    error_answer,
    faq_answer,
    help_answer,
    unknown_card_answer,
    unknown_model_answer,
)
from bot.answer import cards as answer_cards
from bot.answer import common as answer_common
from bot.answer import fit as answer_fit
from bot.answer import info as answer_info
from bot.render import TELEGRAM_LIMIT, plain_text, render, telegram_html_problems, utf16_len
from core.advisor import fit_advice
from core.query import Method, Precision, Query, Task

LANGS: tuple[Lang, ...] = ("en", "zh")


def assert_well_formed(reply: Answer) -> None:
    for html in (reply.html, reply.compact_html):
        assert html.strip()
        assert telegram_html_problems(html) == [], html
        assert utf16_len(html) <= TELEGRAM_LIMIT
    # Title and summary are the compact form's plain text (the user's own words may hold '<', tags never do).
    lines = [line.strip() for line in plain_text(reply.compact_html).splitlines() if line.strip()]
    assert reply.title and reply.summary
    assert reply.title == lines[0][:256]
    assert utf16_len(reply.compact_html) <= utf16_len(reply.html)
    for row in reply.buttons:
        for button in row:
            assert button.label and "<" not in button.label and "&amp;" not in button.label


FIT_QUERIES = [
    Query(model="llama-3.1-8b", card="rtx-4090"),
    Query(model="qwen2.5-7b", card="rtx-4090", gpus=2),
    Query(model="llama-3.1-70b", card="a100-80gb-sxm", precision=Precision.INT4),
    Query(task=Task.FINETUNE, method=Method.LORA, model="llama-3.1-8b", card="rtx-4090"),
    Query(task=Task.FINETUNE, method=Method.QLORA, model="qwen2.5-14b", card="a100-40gb-pcie"),
    Query(task=Task.FINETUNE, model="qwen2.5-7b", card="a100-80gb-sxm"),  # no method: side by side
    Query(task=Task.PRETRAIN, model="llama-3.1-8b", card="h100-sxm", gpus=8, tokens=1e11),
    Query(params_b=13, card_memory_bytes=24 * 2**30),
    Query(model="llama-3.1-70b"),  # no card: plans
]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(
    "query", FIT_QUERIES, ids=lambda q: f"{q.task.value}-{q.model or q.params_b}-{q.card}"
)
def test_fit_answers(query: Query, lang: str) -> None:
    reply = answer_query(query, lang=lang)
    assert reply.kind == "fit", reply.html
    assert reply.lang == lang
    assert_well_formed(reply)
    assert "GiB" in reply.html
    assert reply.html.lstrip()[0] in "✅⚠❌📐<"


@pytest.mark.parametrize("lang", LANGS)
def test_verdict_comes_first(lang: str) -> None:
    fits = answer_query(Query(model="llama-3.1-8b", card="h100-sxm"), lang=lang)
    no = answer_query(Query(model="llama-3.1-70b", card="rtx-4090"), lang=lang)
    assert fits.html.startswith("✅")
    assert no.html.startswith("❌")
    assert no.title.startswith("❌")


@pytest.mark.parametrize("lang", LANGS)
def test_methods_side_by_side(lang: str) -> None:
    reply = answer_query(Query(task=Task.FINETUNE, model="qwen2.5-7b", card="rtx-4090"), lang=lang)
    head = reply.html.split("\n\n")[0]
    assert len(head.splitlines()) == 4  # title + full, LoRA, QLoRA
    assert reply.to_json()["answer"]["recommended_method"] in ("full", "lora", "qlora")
    actions = {b.action for row in reply.buttons for b in row}
    assert {"method=full", "method=lora", "method=qlora"} <= actions


@pytest.mark.parametrize("lang", LANGS)
def test_other_kinds(lang: Lang) -> None:
    replies = [
        card_answer(lang, "rtx-4090", None),
        card_answer(lang, "h20", None),
        compare_answer(lang, ["rtx-4090", "a100-80gb-sxm", "h100-sxm"], None),
        compare_answer(lang, ["rtx-4090", "a100-80gb-sxm"], Query(model="llama-3.1-8b")),
        *[faq_answer(lang, faq, None) for faq in FAQ_IDS],
        faq_answer(lang, "folk_rule", Query(task=Task.FINETUNE, method=Method.FULL, model="qwen2.5-7b")),
        *[answer_module.scenario_answer(lang, name, None) for name in SCENARIO_IDS],
        help_answer(lang),
        clarify_answer(lang, "model", None),
        clarify_answer(lang, "card", Query(model="llama-3.1-8b")),
        clarify_answer(lang, "task", None),
        unknown_model_answer(lang, "llama-9000", ["llama-3.1-8b"], None),
        unknown_card_answer(lang, "rtx 9090", ["rtx-4090"], None),
        error_answer(lang, "internal"),
    ]
    kinds = {r.kind for r in replies}
    assert kinds == {"card", "compare", "faq", "scenario", "help", "clarify", "error"}
    for reply in replies:
        assert reply.lang == lang
        assert_well_formed(reply)


def test_learning_scenario_corrects_13b_fp16_politely() -> None:
    en = answer_module.scenario_answer("en", "learning", None)
    zh = answer_module.scenario_answer("zh", "learning", None)
    assert "13B" in en.html and "does not fit" in en.html
    assert "13B" in zh.html and "装不下" in zh.html


def test_clarify_offers_choices_as_buttons() -> None:
    reply = clarify_answer("en", "model", None)
    actions = [b.action for row in reply.buttons for b in row]
    assert "model=llama-3.1-8b" in actions and "params_b=13" in actions
    assert "Which model?" in reply.html


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script> {{ 7777*1111 }} llama 3.1 8b on 4090",
        "run <b>llama-9000</b> {% raw %} on a 4090",
        "{{ config }} {{ 7777*1111 }}",
        "&amp; &lt;b&gt; 4090",
        "",
        "🙂" * 3000,
    ],
)
def test_user_text_never_becomes_markup(text: str) -> None:
    reply = answer(text)
    assert_well_formed(reply)
    assert "<script" not in reply.html
    # 7777*1111 = 8640247: a number no answer holds unless the template evaluated the user's text
    assert "8640247" not in reply.html and "8,640,247" not in reply.html
    assert "<b>llama-9000</b>" not in reply.html


def test_unknown_names_are_escaped() -> None:
    reply = unknown_model_answer("en", "<b>x</b>{{ 7*7 }}&", [], None)
    assert "&lt;b&gt;x&lt;/b&gt;{{ 7*7 }}&amp;" in reply.html
    assert_well_formed(reply)


def test_answer_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("estimator exploded")

    for module in (answer_fit, answer_cards, answer_info, fit_advice):  # fit advice is core's now
        if hasattr(module, "estimate"):  # the card sheet's sizes come from core's largest-model search now
            monkeypatch.setattr(module, "estimate", boom)
    for lang in LANGS:
        reply = answer("can a 4090 run llama 3.1 8b", lang=lang)
        assert reply.kind == "error"
        assert "exploded" not in reply.html and "Traceback" not in reply.html
        assert_well_formed(reply)
        assert answer_query(Query(model="llama-3.1-8b", card="rtx-4090"), lang=lang).kind == "error"


def test_long_answers_are_shortened_not_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    real_render = render

    def padded(name: str, lang: str, /, **data: object) -> str:
        html = real_render(name, lang, **data)
        return html if data.get("short") else html + "\n" + "x" * TELEGRAM_LIMIT

    monkeypatch.setattr(answer_common, "render", padded)
    reply = answer_query(Query(model="llama-3.1-8b", card="rtx-4090"), lang="en")
    assert utf16_len(reply.html) <= TELEGRAM_LIMIT
    assert "xxxx" not in reply.html
