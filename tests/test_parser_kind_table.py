"""What decides a message's kind is one table (core/answer_kind.py `DECIDED_BY`): the kinds asked for by their
words and the readings of what a message names (FAQ, budget, vision, compare, a model's job …), in order. The
parser walks it with no branch per kind, and a row alone decides, follows up and orders a kind."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core.answer_kind import ASKED_BY_WORDS, DECIDED_BY, QUERY_KINDS, AnswerKind, AskedBy, NamedBy, Reading
from core.parser import parse, pipeline, readings

PIPELINE = Path(pipeline.__file__)


def test_one_row_per_kind_asked_by_words() -> None:
    kinds = [row.kind for row in ASKED_BY_WORDS]
    assert len(kinds) == len(set(kinds))
    assert {AnswerKind.HELP, AnswerKind.LARGEST_MODEL, AnswerKind.CARD_ADVICE} <= set(kinds)
    for row in ASKED_BY_WORDS:
        assert row.words and row.cards[0] <= row.cards[1]


def test_the_pipeline_has_no_branch_for_any_kind() -> None:
    """pipeline.py names no kind and no reading: which kinds, on what and in what order are the table's."""
    tree = ast.parse(PIPELINE.read_text(encoding="utf-8"))
    named = {
        f"{node.value.id}.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        if node.value.id in ("AnswerKind", "Intent", "Reading", "words")
    }
    # the two decisions made before the table: an empty message, and values that cannot be used
    assert named <= {"Intent.CLARIFY", "words.is_empty"}, named


def test_every_reading_is_one_row_and_the_last_answers_everything() -> None:
    readings_used = [row.reading for row in DECIDED_BY if isinstance(row, NamedBy)]
    assert sorted(readings_used) == sorted(Reading) and len(readings_used) == len(set(readings_used))
    assert set(readings.READERS) == set(Reading)
    last = DECIDED_BY[-1]
    assert isinstance(last, NamedBy) and last.reading is Reading.ANYTHING


# One message for each row (and a few more).
_MESSAGES = [
    "can I LoRA llama 3.1 8b on a 4090?",
    "cheapest card to serve qwen2.5-7b",
    "跑 Qwen2.5-72B 要几张 L20",
    "为什么显存大的卡更贵",
    "预算每月5000元 能租卡跑什么模型",
    "autodl 4090 按月租划算还是按小时 我每天就用8小时",
    "autodl 包月还是按小时 每天8小时",
    "文生图用什么卡",
    "SDXL on a 4090",
    "hello",
    "Zorblax-9000 on a 4090",
    "4090 vs a100 vs h100",
    "I want to learn deep learning, which card",
    "/card 4090",
    "batch 8 on a 4090",
    "asdfgh qwerty",
    "what is the weather",
    "H20适合训练吗",
    "/help",
    "哪些卡有48G显存",
]


@pytest.mark.parametrize("text", _MESSAGES)
def test_a_row_answers_only_with_its_kinds(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each row answers with the kinds it lists, so the table says what each reading selects."""
    answered: list[tuple[AskedBy | NamedBy, AnswerKind]] = []
    real = readings.read

    def read(row: AskedBy | NamedBy, message: readings.Message) -> object:
        parsed = real(row, message)
        if parsed is not None:
            answered.append((row, parsed.intent))
        return parsed

    monkeypatch.setattr(pipeline, "read", read)
    parse(text)
    ((row, kind),) = answered
    assert kind in row.kinds, (text, row, kind)


def test_every_phrasing_and_benchmark_question_is_answered_with_its_rows_kinds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over the parser's corpus (with its previous queries), the benchmark's 200 questions and the messages
    above, every row that decides answers with a kind it lists, and every reading decides one of them."""
    from test_parser_corpus import CASES, _previous

    from benchmarks.questions import QUESTIONS

    decided: set[Reading] = set()
    real = readings.read

    def read(row: AskedBy | NamedBy, message: readings.Message) -> object:
        parsed = real(row, message)
        if parsed is not None:
            assert parsed.intent in row.kinds, (message.text, row, parsed.intent)
            if isinstance(row, NamedBy):
                decided.add(row.reading)
        return parsed

    monkeypatch.setattr(pipeline, "read", read)
    for case in CASES:
        parse(case["text"], previous=_previous(case))
    for question in QUESTIONS:
        parse(question.text, previous=question.previous)
    for text in _MESSAGES:
        parse(text)
    parse("那微调呢", previous=parse("预算每月5000元 能租卡跑什么模型").query)
    assert decided == set(Reading), set(Reading) - decided


def test_a_row_alone_adds_a_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new row, weighed before the model's job: asked by its words, kept on the query, followed up."""
    row = AskedBy(AnswerKind.BILLING, (re.compile(r"zorbl"),), cards=(1, 1))
    rows = list(DECIDED_BY)
    rows.insert(rows.index(_row_of(Reading.A_MODEL)), row)
    monkeypatch.setattr(pipeline, "DECIDED_BY", tuple(rows))
    asked = parse("zorbl on a 4090 for fine-tuning")
    assert asked.intent is AnswerKind.BILLING and asked.query is not None
    assert asked.query.kind is AnswerKind.BILLING and asked.query.card == "rtx-4090"
    assert not asked.follow_up
    again = parse("what about an L40S?", previous=asked.query)
    assert again.intent is AnswerKind.BILLING and again.follow_up
    assert again.query is not None and again.query.card == "l40s" and again.query.task is asked.query.task
    assert parse("zorbl with llama 3.1 8b on a 4090").intent is AnswerKind.FIT  # one model's job is a fit
    assert parse("zorbl on a 4090 and an H100").intent is AnswerKind.COMPARE  # more cards than the row takes


def test_a_rows_place_is_its_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    """Moving the comparison of several cards ahead of the FAQ wordings makes a FAQ naming two cards a
    comparison: the order of the table decides, not the parser."""
    text = "why is the a100 80gb more expensive than the a100 40gb"
    assert parse(text).intent is AnswerKind.FAQ
    several = _row_of(Reading.SEVERAL_CARDS)
    rows = [several, *(row for row in DECIDED_BY if row is not several)]
    monkeypatch.setattr(pipeline, "DECIDED_BY", tuple(rows))
    assert parse(text).intent is AnswerKind.COMPARE


def _row_of(reading: Reading) -> NamedBy:
    return next(row for row in DECIDED_BY if isinstance(row, NamedBy) and row.reading is reading)


@pytest.mark.parametrize(
    ("turns", "kind", "card"),
    [
        (["H20适合训练吗", "那推理呢"], AnswerKind.CARD_ADVICE, "h20"),
        (["is a T4 OK for fine-tuning?", "what about an L4?"], AnswerKind.CARD_ADVICE, "l4"),
        (["两张3090最大能LoRA多大的模型", "那QLoRA呢"], AnswerKind.LARGEST_MODEL, "rtx-3090"),
    ],
)
def test_table_kinds_follow_up(turns: list[str], kind: AnswerKind, card: str) -> None:
    first = parse(turns[0])
    assert first.intent is kind and kind in QUERY_KINDS
    second = parse(turns[1], previous=first.query)
    assert second.intent is kind and second.follow_up
    assert second.query is not None and second.query.card == card


def test_help_is_asked_only_with_nothing_named() -> None:
    assert parse("/help").intent is AnswerKind.HELP
    assert parse("怎么用").intent is AnswerKind.HELP
    assert parse("怎么用4090跑llama 3.1 8b").intent is not AnswerKind.HELP
