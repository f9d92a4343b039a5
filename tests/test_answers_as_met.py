"""Issue 14's seams in answers, plans and the command line, each as a new user met it."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from bot.answer import answer
from bot.cli import main
from core.advisor import plans
from core.cost import price_book_in_force
from core.query import Currency, Method, Query, Task


def test_estimate_text_shows_speed_and_cost_when_the_json_has_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["estimate", "--model", "llama-3.1-8b", "--task", "lora", "--card", "4090", "--tokens", "100M"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "tokens/s training" in text
    assert re.search(r"100M tokens take ≈[\d.]+ h", text)
    assert re.search(r"\$[\d.]+/h; the run ≈\$[\d.]+", text)


def test_every_plan_row_keeps_the_same_checkpointing_and_says_it() -> None:
    found = plans(Query(task=Task.FINETUNE, model="qwen2.5-7b", tokens=1e8), limit=8, currency=Currency.USD)
    assert {p.query.grad_checkpointing for p in found} == {True}
    # with the same assumptions, a method that needs less memory never shows more on the same card
    by_card: dict[str, dict[Method | None, int]] = {}
    for plan in found:
        by_card.setdefault(plan.card, {})[plan.method] = plan.need_bytes
    for needs in by_card.values():
        if Method.LORA in needs and Method.QLORA in needs:
            assert needs[Method.QLORA] < needs[Method.LORA]
    html = answer("微调qwen2.5 7b 最便宜的方案").html
    assert "梯度检查点开" in html


def test_multi_card_plans_show_card_hour_and_instance_hour_prices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "serve llama 3.1 70b"]) == 0
    text = capsys.readouterr().out
    multi = [line for line in text.splitlines() if re.match(r"\d+\. [2-9]× ", line)]
    assert multi, text
    for line in multi:
        assert "/card-hour" in line and re.search(r"/hour for all \d+", line)


def test_a_price_over_a_year_older_than_the_book_is_replaced_or_flagged() -> None:
    book = price_book_in_force()
    assert book is not None
    for card_id, rows in book.by_card.items():
        price = book.price_for(card_id, Currency.USD)
        assert price is not None
        fresh = [r for r in rows if (book.meta.date - r.date).days <= 365]
        if fresh:
            assert not price.stale, card_id  # a fresher row exists: the old one is not shown
        assert price.stale == ((book.meta.date - price.date) > dt.timedelta(days=365))


def test_no_nvlink_once_per_answer_and_no_nested_parentheses() -> None:
    for question in (
        "两张3090能做LoRA微调130亿参数的模型吗",
        "serve llama 3.1 70b on 4x 4090",
        "fine-tune llama 3.1 8b on 2 rtx 4090",
        "4张4090部署qwen2.5 32b",
    ):
        html = answer(question).html
        assert html.count("no NVLink") + html.count("无 NVLink") <= 1, question
        assert not re.search(r"\([^()]*\(", html), question
        assert not re.search(r"（[^（）]*（", html), question


def test_cards_table_columns_line_up(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cards"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line and not line.startswith("GB here")]
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"\S+(?: TF)?", header)]
    for line in lines[1:]:
        # every column's text starts (left-aligned) or ends (right-aligned) under its header
        assert len(line) <= len(header) + 40
        assert line[starts[1] - 1] == " " and line[starts[2] - 1] == " ", line


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_precision_buttons_read_as_people_write_them(lang: str) -> None:
    from bot.answer.buttons import button_label

    assert button_label(lang, "precision=nf4") == "4-bit NF4"  # type: ignore[arg-type]
    assert button_label(lang, "precision=q4_k_m") == "GGUF Q4_K_M"  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["9", "?", "asdf qwer"])
def test_unreadable_messages_get_i_did_not_understand_not_which_model(text: str) -> None:
    """A button number that no longer exists arrives as a bare number: it is not a question about 9 cards."""
    reply = answer(text, previous=Query(model="qwen2.5-7b", card="rtx-4090"))
    assert reply.kind == "clarify"
    assert "didn't understand" in reply.html
    assert "Which model" not in reply.html
