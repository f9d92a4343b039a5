"""Any text at all gives a Parsed, never an exception (with and without a previous query)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.parser import Intent, Lang, Parsed, detect_lang, parse
from core.query import Query, Task

PREVIOUS = Query(task=Task.FINETUNE, model="qwen2.5-7b", card="rtx-4090", gpus=2, defaulted=[])

# Fragments users (and attackers) type, mixed into random text so the patterns get exercised.
FRAGMENTS = [
    "4090", "a100 80g", "两张", "8卡", "4x", "*2", "7b", "130亿", "七十亿", "千亿", "8x7b", "qwen2.5",
    "llama",
    "lora", "qlora", "全参", "int4", "fp16", "量化", "8k", "32k上下文", "bs=", "batch size", "并发", "r=",
    "秩", "1B tokens", "10亿token", "预算", "¥", "$", "/h", "每小时", "元", "块", "gradient checkpointing",
    "vllm", "hf", "呢", "what about", "vs", "和", "哪个好", "显存", "带宽", "为什么", "help", "/start",
    "\u200b", "\u202e", "\u0000", "\ufeff", "<b>", "</b>", "{{ 7*7 }}", "'; DROP TABLE x; --", "😀", "👍🏽",
    "مرحبا", "שלום", "\U000e0001", "\ud7ff", "9" * 40, "0.0000001b", "1e308", "-5", "0b", "0卡", "99999卡",
    "bs=0", "r=0", "seq 0", "4097 gpus", "batch 99999999999", "ctx 999999999k", "nan", "inf",
]  # fmt: skip

texts = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=30).map(" ".join),
    st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join),
)


def _valid(parsed: Parsed) -> None:
    assert isinstance(parsed, Parsed)
    assert parsed.intent in Intent
    assert parsed.lang in Lang
    if parsed.intent in (Intent.FIT, Intent.PLAN) and parsed.vision is None:
        assert parsed.query is not None
        assert parsed.query.model or parsed.query.params_b
    if parsed.vision is not None:  # an image / video / vision / speech job ('SDXL') names its model
        assert parsed.vision.model
    if parsed.intent is Intent.CLARIFY:
        assert parsed.clarify in ("model", "nonsense", "rejected")
    assert (parsed.clarify == "rejected") == bool(parsed.rejected)  # a value not used is always said
    if parsed.query is not None:
        Query.model_validate(parsed.query.model_dump())  # every value within the schema's limits


@settings(max_examples=300, deadline=None)
@given(texts)
def test_any_text_parses(text: str) -> None:
    _valid(parse(text))


@settings(max_examples=300, deadline=None)
@given(texts)
def test_any_text_parses_as_follow_up(text: str) -> None:
    parsed = parse(text, PREVIOUS)
    _valid(parsed)
    if parsed.follow_up:
        assert parsed.query is not None


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=50))
def test_language_is_the_message_script(text: str) -> None:
    has_han = any("\u4e00" <= c <= "\u9fff" for c in text)
    if has_han:
        assert detect_lang(text) is Lang.ZH
    assert parse(text).lang is detect_lang(text)


def test_a_bare_vision_model_name_is_a_vision_job() -> None:
    parsed = parse("SDXL")
    _valid(parsed)
    assert parsed.vision is not None and parsed.query is None


def test_very_long_messages() -> None:
    for text in (
        "a" * 10_000,
        "4090 " * 2_000,
        "七" * 10_000,
        "llama " * 2_000 + "7b",
        "1" * 10_000,
        "x" * 9_999 + "😀",
    ):
        _valid(parse(text))
        _valid(parse(text, PREVIOUS))


def test_control_and_invisible_characters_do_not_split_names() -> None:
    parsed = parse("4\u200b090 跑 qwen2.5\u200d-7b")
    assert parsed.query is not None
    assert parsed.query.card == "rtx-4090"
    assert parsed.query.model == "qwen2.5-7b"


def test_markup_is_never_reflected_as_a_name() -> None:
    parsed = parse("<b>llama 9b</b> on <script>alert(1)</script>")
    assert parsed.unknown_model is not None
    assert "<" not in parsed.unknown_model and ">" not in parsed.unknown_model


def test_empty_and_blank() -> None:
    for text in ("", " ", "\n\t", "\u200b", "。。。", "!!!"):
        parsed = parse(text)
        assert parsed.intent is Intent.CLARIFY
        assert parsed.clarify == "nonsense"
