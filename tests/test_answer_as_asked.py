"""Every answer is about what was asked, or says plainly what it could not use (issue 20).

The rule, held here for the parser, the answer service, the Hub lookup and the real bot: a model the
registry lacks is never answered with another model (not the chat's previous one, not the registry model
whose name sits inside a pasted Hub id); a value that cannot be used as written (a negative batch, zero
cards, a size no model has, a card the catalogue lacks) is said, not dropped; a previous question's model,
card or count is reused only by a follow-up that names what changes. Names and wordings vary on purpose:
the rule is general, not a list of the examples the issue gave.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from botapi_server import ANN, BotHarness

from bot.answer import answer
from bot.answer.service import answer_looking_up
from bot.hub.cache import SqliteModelCache
from bot.hub.lookup import HubLookup
from bot.hub.settings import HubSettings
from bot.render import html_to_terminal
from core.parser import Intent, parse
from core.query import Query

PREVIOUS = parse("can a 4090 run llama 3.1 8b").query
assert PREVIOUS is not None and PREVIOUS.model == "llama-3.1-8b"

UNKNOWN_MODELS = [
    ("can a 4090 run Zorblax-9000?", "Zorblax-9000"),
    ("serve quux9 on two A100s", "quux9"),
    ("fine-tune Blarg-3000 on an H100", "Blarg-3000"),
    ("4090能跑frobnitz-12吗", "frobnitz-12"),
    ("微调 Snorkel-2.5 要几张卡", "Snorkel-2.5"),
    ("deploy someorg/Custom-Chat-v4 on an L40S", "someorg/Custom-Chat-v4"),
    ("can a 4090 run mistralai/Magistral-Small-2509?", "mistralai/Magistral-Small-2509"),
]


@pytest.mark.parametrize(("text", "name"), UNKNOWN_MODELS)
def test_an_unknown_model_is_never_answered_with_the_previous_one(text: str, name: str) -> None:
    for previous in (None, PREVIOUS):
        parsed = parse(text, previous=previous)
        assert parsed.intent is Intent.CLARIFY, (text, previous)
        assert parsed.unknown_model == name
        assert parsed.query is None or parsed.query.model is None
        reply = answer(text, previous=previous, lang="en")
        words = html_to_terminal(reply.html)
        assert reply.kind == "clarify" and name in words
        assert "Llama 3.1 8B inference" not in words and "📐" not in words
        assert "fits" not in words and "does not fit" not in words


def test_a_family_without_its_size_asks_which_rather_than_reusing_the_last_model() -> None:
    parsed = parse("can a 4090 run qwen3?", previous=PREVIOUS)
    assert parsed.intent is Intent.CLARIFY and parsed.query is not None and parsed.query.model is None


@pytest.mark.parametrize(
    ("text", "params_b"),
    [
        ("run a 1T model on 8 H100", 1000.0),
        ("run a 1000B model on 8 H100", 1000.0),
        ("a 1.5 trillion parameter model on 16 B200s", 1500.0),
        ("部署一个2T参数的模型要几张H200", 2000.0),
    ],
)
def test_trillions_read_like_billions(text: str, params_b: float) -> None:
    for previous in (None, PREVIOUS):
        parsed = parse(text, previous=previous)
        assert parsed.query is not None and parsed.query.params_b == params_b
        assert parsed.query.model is None


@pytest.mark.parametrize(
    ("text", "what", "typed"),
    [
        ("fine-tune a 10000000B model on a 4090", "size", "10000000B"),
        ("run a 0B model on a 3090", "size", "0B"),
        ("can a 4090 run llama 3.1 8b with batch -4", "batch", "-4"),
        ("qwen2.5 7b on an A100, batch size 0", "batch", "0"),
        ("serve qwen2.5 14b on -2 H100s", "gpus", "-2"),
        ("用0张卡跑qwen2.5 7b", "gpus", "0"),
        ("lora qwen2.5 7b with rank -8 on a 4090", "lora_rank", "-8"),
        ("llama 3.1 8b with context -100 on an L4", "seq", "-100"),
        ("can a RTX 9999 run llama 3.1 8b", "card", "RTX 9999"),
        ("GTX 1080能跑qwen2.5 7b吗", "card", "GTX 1080"),
        ("how fast is mistral 7b on a Radeon RX 7900 XTX", "card", "Radeon RX 7900 XTX"),
        ("B300能跑70b吗", "card", "B300"),
        ("serve llama 3.1 70b on 8 H300 gpus", "card", "H300"),
    ],
)
def test_a_value_that_cannot_be_used_is_said_not_dropped(text: str, what: str, typed: str) -> None:
    for previous in (None, PREVIOUS):
        parsed = parse(text, previous=previous)
        assert parsed.intent is Intent.CLARIFY and parsed.clarify == "rejected", (text, previous)
        assert [(r.what, r.typed) for r in parsed.rejected] == [(what, typed)]
    reply = answer(text, lang="zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en")
    assert reply.kind == "clarify" and typed in html_to_terminal(reply.html)
    rejected: Any = reply.facts["rejected"]
    assert rejected[0]["what"] == what
    assert "✅" not in reply.html and "❌" not in reply.html


def test_the_rejection_offers_what_would_work_for_the_same_job() -> None:
    reply = answer("can a 4090 run llama 3.1 8b with batch -4", lang="en")
    assert [b.action for row in reply.buttons for b in row] == ["batch=4"]
    assert reply.query is not None and reply.query.model == "llama-3.1-8b"
    card = answer("can a RTX 9999 run llama 3.1 8b", lang="en")
    actions = [b.action for row in card.buttons for b in row]
    assert actions and all(a.startswith("card=") for a in actions)
    assert "did you mean RTX 5090" in html_to_terminal(card.html)


@pytest.mark.parametrize("card", ["RTX 4090", "A100", "H20", "L40S", "rtx3090", "4090D", "MI300X", "T4"])
def test_cards_in_the_catalogue_are_not_rejected(card: str) -> None:
    parsed = parse(f"can a {card} run llama 3.1 8b with batch 4 on 2 gpus")
    assert not parsed.rejected and parsed.cards and parsed.query is not None
    assert parsed.query.batch == 4 and parsed.query.gpus == 2


@pytest.mark.parametrize(
    ("text", "changed"),
    [
        ("what about a 3090?", {"card": "rtx-3090"}),
        ("and with 8?", {"gpus": 8}),
        ("那L20呢", {"card": "l20"}),
        ("换成A100呢", {"card": "a100-80gb-sxm"}),
        ("what about batch 8?", {"batch": 8}),
    ],
)
def test_follow_ups_that_name_what_changes_keep_the_rest(text: str, changed: dict[str, object]) -> None:
    parsed = parse(text, previous=PREVIOUS)
    assert parsed.query is not None and parsed.query.model == "llama-3.1-8b"
    for field, value in changed.items():
        assert getattr(parsed.query, field) == value


def _unreachable(tmp_path: Path) -> HubLookup:
    settings = HubSettings(endpoint="http://127.0.0.1:9", timeout_s=2.0, hf_cache_dir=tmp_path / "hf")
    return HubLookup(settings, SqliteModelCache(tmp_path / "bot.sqlite3"))


def test_an_unreachable_hub_says_it_could_not_look_up_and_answers_no_other_model(tmp_path: Path) -> None:
    for text, name in (
        ("can a 4090 run mistralai/Magistral-Small-2509?", "mistralai/Magistral-Small-2509"),
        ("can a 4090 run Zorblax-9000?", "Zorblax-9000"),
    ):
        reply = answer_looking_up(text, lookup=_unreachable(tmp_path), previous=PREVIOUS, lang="en")
        words = html_to_terminal(reply.html)
        assert "could not look it up" in words and name in words
        assert reply.kind == "clarify" and (reply.query is None or reply.query.model is None)
        assert "Mistral Small 3.1 24B inference" not in words and "Llama 3.1 8B inference" not in words


async def test_the_bot_does_not_answer_an_unknown_model_with_the_last_one(running_bot: BotHarness) -> None:
    [first] = await running_bot.say(ANN, ANN, "can a 4090 run llama 3.1 8b?")
    assert "Llama 3.1 8B" in first.text
    [second] = await running_bot.say(ANN, ANN, "and with batch -2?")
    assert "batch -2 is not a batch size" in second.text and "✅" not in second.text
    [third] = await running_bot.say(ANN, ANN, "what about a 3090?")
    assert "Llama 3.1 8B" in third.text and "RTX 3090" in third.text
    [fourth] = await running_bot.say(ANN, ANN, "can a 4090 run Plonk-7000?")
    assert "Plonk-7000" in fourth.text and "Llama 3.1 8B inference" not in fourth.text
    [fifth] = await running_bot.say(ANN, ANN, "what about an H100?")  # still about Plonk-7000: which size?
    assert "Llama 3.1 8B inference" not in fifth.text and "✅" not in fifth.text


def test_query_schema_still_refuses_what_the_parser_rejects() -> None:
    with pytest.raises(ValueError, match="batch"):
        Query(model="llama-3.1-8b", batch=-4)


def test_a_failed_lookup_prints_no_retry_noise(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """huggingface_hub's "Retrying in 1s [Retry 1/5]" warnings stay out of the terminal: the answer words
    the failure once."""
    reply = answer_looking_up("can a 4090 run Quibble-77?", lookup=_unreachable(tmp_path), lang="en")
    assert "could not look it up" in html_to_terminal(reply.html)
    out, err = capfd.readouterr()
    assert "Retrying" not in out + err and "thrown while requesting" not in out + err


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("can my 4090 run Snarf?", "Snarf"),
        ("serve grumble on an A100", "grumble"),
        ("what about Snarf?", "Snarf"),
    ],
)
def test_a_plain_word_in_the_models_place_of_a_follow_up_is_not_the_last_model(text: str, name: str) -> None:
    parsed = parse(text, previous=PREVIOUS)
    assert parsed.unknown_model == name and (parsed.query is None or parsed.query.model is None)
