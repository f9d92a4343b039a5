"""Out of scope (issue 10) and unreadable messages (issue 14's wording): what gpufit does with three
example questions, or "I didn't understand that" with two; never "which model?" to a message naming no
job, and GPU questions are never sent away."""

from __future__ import annotations

import pytest
from test_answer_kinds import LANGS, assert_well_formed

from bot.answer import answer

OFF_TOPIC = [
    "今天北京天气怎么样",
    "write me a poem about the sea",
    "hello",
    "你好",
    "谢谢你！",
    "I want to do AI",
    "我想做AI",
    "tell me a joke",
    "英伟达股票还能买吗",
    "give me a haiku about GPUs",
    "推荐几部好看的电影",
    "what's 17 times 23?",
]


@pytest.mark.parametrize("text", OFF_TOPIC)
def test_off_topic_gets_what_gpufit_does(text: str) -> None:
    reply = answer(text)
    facts = reply.to_json()["answer"]
    assert reply.kind == "out_of_scope", reply.html
    assert "missing" not in facts
    assert "Which model" not in reply.html and "哪个模型" not in reply.html
    assert len([b for row in reply.buttons for b in row]) == 3
    assert_well_formed(reply)


@pytest.mark.parametrize("lang", LANGS)
def test_in_the_asker_language(lang: str) -> None:
    reply = answer("今天天气怎么样" if lang == "zh" else "what's the weather like?")
    assert reply.lang == lang
    assert ("只回答" if lang == "zh" else "I only answer questions about GPUs") in reply.html
    assert reply.compact_html != reply.html


@pytest.mark.parametrize("text", ["?", "asdf", "asdf qwer", "zxcv"])
def test_unreadable_messages(text: str) -> None:
    reply = answer(text)
    assert reply.kind == "clarify" and reply.to_json()["answer"]["missing"] == "understanding"
    assert "I didn't understand that" in reply.html
    assert len([b for row in reply.buttons for b in row]) == 2
    assert_well_formed(reply)


@pytest.mark.parametrize(
    "text",
    [
        "4090",
        "which gpu should I rent?",
        "how much vram do I need to fine-tune?",
        "显存不够怎么办",
        "can a 4090 run llama 3.1 8b?",
        "H20 参数",
        "/help",
    ],
)
def test_gpu_questions_are_not_sent_away(text: str) -> None:
    assert answer(text).kind != "out_of_scope"


@pytest.mark.parametrize("lang", LANGS)
def test_help_examples_of_the_new_kinds_get_their_kind(lang: str) -> None:
    """Every example question /help shows for the new kinds is answered as that kind."""
    examples = {
        "en": {
            "how many H100s for Llama 3.1 405B?": "cards_needed",
            "biggest model on a 3090?": "largest_model",
            "is the H20 good for training?": "card_advice",
        },
        "zh": {
            "Llama 3.1 405B 要几张 H100": "cards_needed",
            "3090 最大能跑多大的模型": "largest_model",
            "H20 适合训练吗": "card_advice",
        },
    }[lang]
    help_text = answer("/help", lang=lang).html
    for question, kind in examples.items():
        assert question in help_text
        assert answer(question).kind == kind
