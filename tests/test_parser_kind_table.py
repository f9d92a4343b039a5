"""The kinds a message asks for by its words are one table (core/answer_kind.py `ASKED_BY_WORDS`), read by
the parser: the parser has no branch per such kind, and a row alone decides, follows up and orders one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core.answer_kind import ASKED_BY_WORDS, QUERY_KINDS, AnswerKind, AskedBy, ParserStep
from core.parser import parse, pipeline

PIPELINE = Path(pipeline.__file__)


def test_one_row_per_kind_asked_by_words() -> None:
    kinds = [row.kind for row in ASKED_BY_WORDS]
    assert len(kinds) == len(set(kinds))
    assert {AnswerKind.HELP, AnswerKind.LARGEST_MODEL, AnswerKind.CARD_ADVICE} <= set(kinds)
    for row in ASKED_BY_WORDS:
        assert row.words and row.cards[0] <= row.cards[1]


def test_the_pipeline_has_no_branch_for_a_kind_of_the_table() -> None:
    """pipeline.py names none of the table's kinds: their words, conditions and order are the rows'."""
    tree = ast.parse(PIPELINE.read_text(encoding="utf-8"))
    named = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        if node.value.id in ("AnswerKind", "Intent")
    }
    table_kinds = {row.kind.name for row in ASKED_BY_WORDS}
    assert not named & table_kinds, named & table_kinds


def test_every_step_is_weighed_in_order() -> None:
    """Each fixed decision has its point in parse(), in ParserStep's order."""
    source = PIPELINE.read_text(encoding="utf-8")
    points = [match.group(1) for match in re.finditer(r"asked_before\(ParserStep\.(\w+)\)", source)]
    assert points == [step.name for step in ParserStep]


def test_a_row_alone_adds_a_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new row, weighed before the model's job: asked by its words, kept on the query, followed up."""
    row = AskedBy(AnswerKind.BILLING, (re.compile(r"zorbl"),), before=ParserStep.MODEL_JOB, cards=(1, 1))
    rows = dict(pipeline._ROWS_BEFORE)
    rows[ParserStep.MODEL_JOB] = (row,)
    monkeypatch.setattr(pipeline, "_ROWS_BEFORE", rows)
    asked = parse("zorbl on a 4090 for fine-tuning")
    assert asked.intent is AnswerKind.BILLING and asked.query is not None
    assert asked.query.kind is AnswerKind.BILLING and asked.query.card == "rtx-4090"
    assert not asked.follow_up
    again = parse("what about an L40S?", previous=asked.query)
    assert again.intent is AnswerKind.BILLING and again.follow_up
    assert again.query is not None and again.query.card == "l40s" and again.query.task is asked.query.task
    assert parse("zorbl with llama 3.1 8b on a 4090").intent is AnswerKind.FIT  # one model's job is a fit
    assert parse("zorbl on a 4090 and an H100").intent is AnswerKind.COMPARE  # more cards than the row takes


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
