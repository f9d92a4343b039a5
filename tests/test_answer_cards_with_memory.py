"""'哪些卡有48G显存', 'which GPUs have 80GB?': the cards sold with a memory size, cheapest first (the kind
added to count what a new kind touches: core/answer_kind.py, core/advisor/cards_with_memory.py,
bot/answer/kinds_table.py, templates/cards_with_memory.j2 and the Chinese catalog)."""

from __future__ import annotations

import pytest
from test_answer_kinds import LANGS, assert_well_formed

from bot.answer import answer
from bot.answer.model import Lang
from bot.render import fmt_card_name
from core.advisor.cards_with_memory import CardsWithMemory, cards_with_memory
from core.answer_kind import AnswerKind
from core.catalog import load_catalog
from core.parser import parse
from core.query import Currency, Query
from core.units import GIB


@pytest.mark.parametrize(
    "text",
    [
        "which cards have 48GB of VRAM?",
        "哪些卡有48G显存",
        "有哪些48G显存的卡",
        "48G的卡有哪些",
        "list GPUs with 48GB",
    ],
)
def test_asked_in_both_languages(text: str) -> None:
    parsed = parse(text)
    assert parsed.intent is AnswerKind.CARDS_WITH_MEMORY
    assert parsed.query is not None and parsed.query.card_memory_bytes == 48 * GIB
    assert parsed.query.kind is AnswerKind.CARDS_WITH_MEMORY


@pytest.mark.parametrize(
    ("text", "gib"),
    [
        ("what cards have 16GB VRAM", 16),  # 'vram' ends in 'ram': still the card's memory
        ("what about 80GB cards?", 80),  # 'about' after 'what': not a usage ('needs about 14GB')
        ("有哪些16G显存的卡", 16),
        ("which GPUs have 24GB of vram?", 24),
    ],
)
def test_asked_with_vram_or_as_what_about(text: str, gib: int) -> None:
    parsed = parse(text)
    assert parsed.intent is AnswerKind.CARDS_WITH_MEMORY
    assert parsed.query is not None and parsed.query.card_memory_bytes == gib * GIB


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("what about 80GB cards?", AnswerKind.FIT),  # after a job: that job on an 80 GB card
        ("那80G的卡呢", AnswerKind.FIT),
        ("那有哪些80G的卡", AnswerKind.CARDS_WITH_MEMORY),  # a listing asked for anew
        ("which cards have 80GB?", AnswerKind.CARDS_WITH_MEMORY),
    ],
)
def test_after_a_job_what_about_a_size_moves_the_job(text: str, kind: AnswerKind) -> None:
    previous = parse("can I fine-tune llama 3.1 8b on a 4090?").query
    parsed = parse(text, previous=previous)
    assert parsed.intent is kind
    assert parsed.query is not None and parsed.query.card_memory_bytes == 80 * GIB
    assert (parsed.query.model == "llama-3.1-8b") == (kind is AnswerKind.FIT)


def test_needs_about_a_size_is_still_a_usage() -> None:
    query = parse("needs about 14GB, ok on a 4090?").query
    assert query is None or query.card_memory_bytes is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("which 24GB card is best for llama 3.1 8b", AnswerKind.FIT),  # a model's job: a fit
        ("what can I run on 24GB", AnswerKind.LARGEST_MODEL),
        ("哪些卡", AnswerKind.CLARIFY),  # no size stated
        ("4090有48G的吗", AnswerKind.CARD_INFO),  # a card named: its facts
    ],
)
def test_other_questions_keep_their_kind(text: str, kind: AnswerKind) -> None:
    assert parse(text).intent is kind


def test_cards_of_the_size_cheapest_first() -> None:
    result = cards_with_memory(Query(card_memory_bytes=48 * GIB, currency=Currency.USD))
    assert result.exact and result.sold_gib == 48
    assert {"l40s", "rtx-a6000", "l20"} <= {row.card for row in result.cards}
    assert all(row.memory_gib == 48 for row in result.cards)
    priced = [row.price.per_hour for row in result.cards if row.price is not None]
    assert priced == sorted(priced) and priced
    unpriced_after = [row.price is None for row in result.cards]
    assert unpriced_after == sorted(unpriced_after)  # unpriced cards last
    l40s = next(row for row in result.cards if row.card == "l40s")
    assert l40s.memory_bytes == load_catalog().get("l40s").memory_bytes < 48 * GIB  # usable, not sold


def test_no_card_of_the_size_gives_the_next_size_up() -> None:
    result = cards_with_memory(Query(card_memory_bytes=36 * GIB))
    assert not result.exact and result.sold_gib == 40
    assert all(row.memory_gib == 40 for row in result.cards)
    assert cards_with_memory(Query(card_memory_bytes=2000 * GIB)).cards == []


@pytest.mark.parametrize("lang", LANGS)
def test_answer_in_each_language(lang: Lang) -> None:
    reply = answer("哪些卡有48G显存" if lang == "zh" else "which cards have 48GB?", lang=lang)
    assert reply.kind is AnswerKind.CARDS_WITH_MEMORY and reply.lang == lang
    assert_well_formed(reply)
    listed = CardsWithMemory.model_validate(reply.facts["cards_with_memory"])
    assert fmt_card_name(listed.cards[0].name) in reply.html
    heading = "标称 48 GB 显存的卡" if lang == "zh" else "cards sold with 48 GB"
    assert heading in reply.html
    assert ("¥" in reply.html) == (lang == "zh")  # the language's currency when none was said
    understood = reply.to_json()["query"]
    assert understood is not None and understood["currency"] is None  # ...not written into the question
    nothing = answer("哪些卡有2000G显存" if lang == "zh" else "which cards have 2000GB?", lang=lang)
    assert ("没有" if lang == "zh" else "No card") in nothing.html
    next_up = answer("有哪些36G显存的卡" if lang == "zh" else "which cards have 36GB?", lang=lang)
    assert ("往上最近的是 40 GB" if lang == "zh" else "the next size up is 40 GB") in next_up.html


def test_follow_up_changes_the_size_and_a_stored_query_rebuilds_it() -> None:
    first = answer("哪些卡有48G显存")
    again = answer("那80G的呢", previous=first.query)
    assert again.kind is AnswerKind.CARDS_WITH_MEMORY
    assert CardsWithMemory.model_validate(again.facts["cards_with_memory"]).sold_gib == 80
    assert parse("那80G的呢", previous=first.query).follow_up
