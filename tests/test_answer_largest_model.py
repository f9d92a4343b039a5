"""The largest model (issue 10): per job, the largest size the cards take, with real registry models that
run the job themselves; only the job asked when one is named; never "which model?"."""

from __future__ import annotations

from typing import Any

import pytest
from test_answer_kinds import LANGS, assert_well_formed

from bot.answer import answer, answer_query
from core.advisor.largest_model import jobs_for, largest_models
from core.assessment import assess
from core.catalog import load_catalog
from core.query import Currency, Method, Query, Task
from core.registry import load_registry


def _rows(text: str, previous: Query | None = None) -> dict[tuple[str, str | None, str], dict]:  # type: ignore[type-arg]
    reply = answer(text, previous=previous)
    assert reply.kind == "largest_model", reply.html
    assert_well_formed(reply)
    rows: Any = reply.to_json()["answer"]["largest_model"]
    return {(r["task"], r["method"], r["precision"]): r for r in rows}


def test_serving_on_one_l40s() -> None:
    rows = _rows("what's the biggest model I can serve on an L40S?")
    assert set(rows) == {("inference", None, p) for p in ("bf16", "int8", "int4")}
    bf16, int8, int4 = (rows[("inference", None, p)]["params_b"] for p in ("bf16", "int8", "int4"))
    assert 18 <= bf16 <= 24 and bf16 < int8 < int4 and 65 <= int4 <= 93


def test_only_the_job_asked() -> None:
    rows = _rows("两张3090最大能LoRA多大的模型")
    assert list(rows) == [("finetune", "lora", "bf16")]
    row = rows[("finetune", "lora", "bf16")]
    assert row["gpus"] == 2 and 13 <= row["params_b"] <= 24


def test_every_job_when_none_is_named_and_pretraining_only_when_asked() -> None:
    rows = largest_models(load_catalog().get("rtx-4090"), 1, jobs_for(Query(defaulted=("task",))))
    assert {r.job.task for r in rows} == {Task.INFERENCE, Task.FINETUNE}
    pretrain = _rows("8卡A800最大能预训练多大的模型")
    assert list(pretrain) == [("pretrain", "full", "bf16")]
    assert 28 <= pretrain[("pretrain", "full", "bf16")]["params_b"] <= 44


def test_examples_are_real_models_that_run_the_job() -> None:
    card = load_catalog().get("rtx-4090")
    registry = load_registry()
    for row in largest_models(card, 1, jobs_for(Query(defaulted=("task",)))):
        assert row.params_b is not None and row.examples
        for model_id in row.examples:
            model = registry.get(model_id)
            assert model.total_params / 1e9 <= row.params_b * 1.005
            job = Query(task=row.job.task, method=row.job.method, precision=row.job.precision, model=model_id)
            assert assess(job, card, 1, book=None, currency=Currency.USD, speed=False).fits


def test_models_released_quantized_are_not_bf16_examples() -> None:
    rows = largest_models(load_catalog().get("l40s"), 1, jobs_for(Query(task=Task.INFERENCE)))
    bf16 = next(r for r in rows if r.job.precision.value == "bf16")
    assert "gpt-oss-20b" not in bf16.examples


def test_more_cards_take_larger_models() -> None:
    card = load_catalog().get("h100-sxm")
    jobs = jobs_for(Query(task=Task.FINETUNE, method=Method.FULL))
    one, eight = (largest_models(card, n, jobs)[0].params_b for n in (1, 8))
    assert one is not None and eight is not None and eight > 4 * one


def test_a_memory_size_stands_for_a_card() -> None:
    rows = _rows("what size model can I LoRA on a 24GB card")
    assert 6 <= rows[("finetune", "lora", "bf16")]["params_b"] <= 11.5


@pytest.mark.parametrize("text", ["what's the biggest model I can run?", "最大能跑多大的模型"])
def test_without_a_card_it_asks_which_card_not_which_model(text: str) -> None:
    reply = answer(text)
    assert reply.kind == "clarify" and reply.to_json()["answer"]["missing"] == "card"


def test_follow_ups_keep_the_question() -> None:
    first = answer("两张3090最大能LoRA多大的模型")
    second = _rows("那QLoRA呢", previous=first.query)
    assert list(second) == [("finetune", "qlora", "nf4")]
    assert second[("finetune", "qlora", "nf4")]["gpus"] == 2


@pytest.mark.parametrize("lang", LANGS)
def test_both_languages_and_compact(lang: str) -> None:
    query = Query(card="a10", kind="largest_model")
    reply = answer_query(query, lang=lang)
    assert reply.kind == "largest_model" and reply.lang == lang
    assert ("22.5 GiB usable" if lang == "en" else "实际可用 22.5 GiB") in reply.html
    assert len(reply.compact_html) < len(reply.html)
    assert_well_formed(reply)
