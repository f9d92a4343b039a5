"""How many cards (issue 10): the count first, the parallelism the job really uses (tensor parallel sizes
that divide the heads, ZeRO-3, nodes of 8), the asked count's verdict, and the same search in fit answers."""

from __future__ import annotations

from typing import Any

import pytest
from test_answer_kinds import LANGS, assert_well_formed

from bot.answer import answer, answer_query
from core.advisor.cards_needed import cards_needed
from core.catalog import load_catalog
from core.parser import parse
from core.query import Method, Precision, Query, Runtime, Task
from core.registry import load_registry


def _card(card_id: str):  # type: ignore[no-untyped-def]
    return load_catalog().get(card_id)


def test_tensor_parallel_sizes_divide_the_heads() -> None:
    qwen72 = load_registry().get("qwen2.5-72b")  # 64 heads, 8 KV heads
    assert [size for size in range(1, 9) if qwen72.tensor_parallel_ok(size)] == [1, 2, 4, 8]
    falcon = load_registry().get("falcon-7b")  # 71 heads: only one card
    assert [size for size in range(1, 9) if falcon.tensor_parallel_ok(size)] == [1]
    deepseek = load_registry().get("deepseek-v3")  # MLA: one latent KV head, 128 attention heads
    assert deepseek.tensor_parallel_ok(8)


def test_count_rounds_up_to_a_tensor_parallel_size() -> None:
    needed = cards_needed(Query(model="qwen2.5-72b"), _card("h100-sxm"))
    assert needed is not None
    assert (needed.count, needed.parallelism, needed.tensor_parallel) == (4, "tp", 4)
    assert needed.memory_count == 3 and needed.rounded_for_heads


def test_a_pipeline_when_transformers_is_asked_takes_any_count() -> None:
    needed = cards_needed(Query(model="qwen2.5-32b", runtime=Runtime.TRANSFORMERS), _card("rtx-4090"))
    assert needed is not None and needed.parallelism == "pipeline" and needed.count == 3


def test_beyond_one_node_in_whole_nodes() -> None:
    needed = cards_needed(Query(model="llama-3.1-405b"), _card("h100-sxm"))
    assert needed is not None
    assert (needed.count, needed.nodes, needed.parallelism, needed.tensor_parallel) == (16, 2, "tp_pp", 8)


def test_training_shards_with_zero3() -> None:
    query = Query(task=Task.FINETUNE, method=Method.FULL, model="llama-3.1-8b")
    needed = cards_needed(query, _card("a100-80gb-sxm"))
    assert needed is not None and (needed.count, needed.parallelism) == (2, "zero3")
    assert needed.job.verdict is not None and needed.job.verdict.fits.value != "no"


@pytest.mark.parametrize(
    ("text", "card", "count"),
    [
        ("跑 Qwen2.5-72B 要几张 L20", "l20", 4),
        ("how many A100 80GB to serve Llama 3.1 405B in fp8?", "a100-80gb-sxm", 8),
        ("405b bf16要几张h100", "h100-sxm", 16),
        ("full finetune llama 3 8b, how many A100 80G do I need?", "a100-80gb-sxm", 2),
        ("lora微调qwen2.5-14b，4090要几张", "rtx-4090", 2),
    ],
)
def test_how_many_answers_lead_with_the_count(text: str, card: str, count: int) -> None:
    reply = answer(text)
    facts: dict[str, Any] = reply.to_json()["answer"]
    assert reply.kind == "cards_needed", reply.html
    assert facts["cards_needed"]["card"] == card and facts["cards_needed"]["count"] == count
    assert reply.html.startswith("🧮") and str(count) in reply.title
    assert_well_formed(reply)


@pytest.mark.parametrize("lang", LANGS)
def test_why_names_the_heads_and_the_asked_count(lang: str) -> None:
    query = Query(model="qwen2.5-72b", card="h100-sxm", gpus=3, kind="cards_needed")
    reply = answer_query(query, lang=lang)
    facts: dict[str, Any] = reply.to_json()["answer"]
    assert facts["cards_needed"]["count"] == 4 and facts["cards_needed"]["memory_count"] == 3
    assert ("64 attention heads" if lang == "en" else "64 个注意力头") in reply.html
    assert facts["verdict"] in ("fits", "tight")  # 3 cards hold it by memory; tensor parallel cannot use 3
    assert_well_formed(reply)


@pytest.mark.parametrize("lang", LANGS)
def test_more_cards_asked_than_needed(lang: str) -> None:
    query = Query(model="llama-3.1-8b", card="h100-sxm", gpus=8, kind="cards_needed")
    facts: dict[str, Any] = answer_query(query, lang=lang).to_json()["answer"]
    assert facts["cards_needed"]["count"] == 1 and facts["verdict"] == "fits"


def test_without_a_card_every_usual_card_gets_a_count() -> None:
    reply = answer("how many GPUs do I need to serve llama 3.1 70b?")
    facts: dict[str, Any] = reply.to_json()["answer"]
    assert reply.kind == "cards_needed"
    assert len(facts["options"]) >= 3 and all(o["count"] for o in facts["options"])
    assert facts["cards_needed"] == facts["options"][0]
    assert_well_formed(reply)


@pytest.mark.parametrize(
    ("text", "count"), [("4张4090够不够跑qwen2.5 72b", 8), ("will 2x L40S be enough for llama-3.1-70b?", 4)]
)
def test_fit_answers_that_do_not_fit_say_which_count_does(text: str, count: int) -> None:
    reply = answer(text)
    facts: dict[str, Any] = reply.to_json()["answer"]
    assert reply.kind == "fit" and facts["verdict"] == "no"
    assert facts["cards_needed"]["count"] == count
    assert f"➡️ {count}" in reply.html and f"➡️ {count}" in reply.compact_html


def test_fit_answers_that_fit_carry_no_count() -> None:
    facts: dict[str, Any] = answer("can a 4090 run llama 3.1 8b?").to_json()["answer"]
    assert facts["verdict"] == "fits" and facts["cards_needed"] is None


def test_follow_ups_keep_asking_how_many() -> None:
    first = answer("跑 Qwen2.5-72B 要几张 L20")
    second = answer("那H20呢", previous=first.query)
    third = answer("what about int4?", previous=second.query)
    assert second.kind == third.kind == "cards_needed"
    needed: Any = second.to_json()["answer"]["cards_needed"]
    understood: Any = third.to_json()["query"]
    assert needed["card"] == "h20"
    assert understood["precision"] == Precision.INT4.value


@pytest.mark.parametrize("lang", LANGS)
def test_compact_form_for_groups(lang: str) -> None:
    reply = answer_query(Query(model="qwen2.5-72b", card="l20", kind="cards_needed"), lang=lang)
    assert reply.compact_html.startswith("🧮") and len(reply.compact_html) < len(reply.html)
    assert_well_formed(reply)


@pytest.mark.parametrize("lang", LANGS)
def test_serving_many_users_sizes_the_kv_pool_for_them(lang: str) -> None:
    query = Query(model="qwen2.5-32b", card="l20", batch=100, seq=4096, kind="cards_needed")
    reply = answer_query(query, lang=lang)
    needed: Any = reply.to_json()["answer"]["cards_needed"]
    assert needed["runs_count"] == 2 and needed["count"] > 2 and needed["queued"] == 0
    assert ("queues the rest" if lang == "en" else "排队") in reply.html
    assert_well_formed(reply)


@pytest.mark.parametrize(
    "text",
    [
        "how many users can a 4090 serve with llama 3.1 8b?",
        "how many tokens per second does a 4090 do on llama 8b",
        "预训练 qwen2.5-0.5b 规模的模型，1000亿token，16张A800，几天？",
    ],
)
def test_other_counts_are_not_how_many_cards(text: str) -> None:
    assert parse(text).intent.value != "cards_needed"
