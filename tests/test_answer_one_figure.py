"""One source for each figure, and words that match the job (issue 20): the card sheet and the largest-model
answer give the same sizes; a comparison's memory line compares memory; a card without bf16 is never offered
a bf16 plan; an inference answer never explains itself with gradients; a serving answer that does not fit
says the engine's share of the card and for how many; a named image model gets the image job's answer."""

from __future__ import annotations

from typing import Any

import pytest

from bot.answer import answer
from bot.render import html_to_terminal
from core.advisor import plans
from core.catalog import load_catalog
from core.query import Method, Query, Task


def _largest(text: str) -> dict[tuple[str, str | None, str], float | None]:
    rows: Any = answer(text, lang="en").facts["largest_model"]
    return {(r["task"], r["method"], r["precision"]): r["params_b"] for r in rows}


@pytest.mark.parametrize("card", ["h20", "4090", "a100 80gb", "v100", "l40s", "t4"])
def test_the_card_sheet_and_the_largest_model_answer_agree(card: str) -> None:
    what_fits: Any = answer(f"/card {card}", lang="en").facts["what_fits"]
    sheet = {row["job"]: row for row in what_fits}
    inference = _largest(f"What's the largest model I can run on a {card}?")
    lora = _largest(f"What's the largest model I can LoRA on a {card}?")
    bf16 = sheet["inference"]["precision"]
    assert sheet["inference"]["params_b"] == inference[("inference", None, bf16)]
    assert sheet["inference_int4"]["params_b"] == inference[("inference", None, "int4")]
    assert sheet["lora"]["params_b"] == lora[("finetune", "lora", bf16)]


def test_a_memory_line_compares_memory() -> None:
    three = html_to_terminal(answer("/compare 4090 a100 h100", lang="en").html)
    assert "Memory: the same" not in three
    assert "Most memory: A100 80GB SXM4 (80.0 GiB usable) and H100 SXM5 80GB (79.6 GiB usable)" in three
    pair = html_to_terminal(answer("/compare 3090 4090", lang="en").html)
    assert "Memory: the same" in pair  # both 24 GB: the same indeed
    zh = html_to_terminal(answer("4090和A100和H100对比", lang="zh").html)
    assert "显存：一样大" not in zh and "显存最大：A100" in zh


def test_a_card_without_bf16_is_never_offered_bf16() -> None:
    catalog = load_catalog()
    for query in (
        Query(task=Task.FINETUNE, model="qwen2.5-7b"),
        Query(task=Task.FINETUNE, method=Method.LORA, model="llama-3.1-8b"),
        Query(task=Task.INFERENCE, model="qwen2.5-14b"),
    ):
        for plan in plans(query, limit=200):
            if catalog.get(plan.card).bf16_tflops == 0:
                assert plan.precision.value != "bf16", plan
    text = html_to_terminal(answer("plan for LoRA qwen2.5 7b on a V100", lang="en").html)
    assert "Assumed: bf16" not in text and "Assumed: fp16" in text
    sheet = html_to_terminal(answer("/card v100", lang="en").html)
    assert "inference, fp16" in sheet and "inference, bf16" not in sheet


@pytest.mark.parametrize(
    "question",
    [
        "can a 3090 run llama 3.1 8b int4",
        "can a T4 run qwen2.5 7b in int4",
        "run qwen2.5 32b int8 on an A100",
        "can a 4090 run phi-3 mini",
        "4090能跑int4的qwen2.5 14b吗",
    ],
)
def test_an_inference_answer_never_explains_itself_with_training(question: str) -> None:
    reply = answer(question)
    text = html_to_terminal(reply.html).lower()
    assert reply.kind == "fit"
    for word in ("gradient", "adamw", "moments", "梯度", "优化器"):
        assert word not in text, (question, word)


def test_a_serving_answer_says_the_engines_share_and_for_how_many() -> None:
    text = html_to_terminal(
        answer("serve qwen2.5-72b with 32k context on 2× H100 for 50 users at once", lang="en").html
    )
    assert "vLLM takes 0.90 of the 79.6 GiB usable: gpu_memory_utilization" in text
    assert "for 50 sequences at once" in text
    zh = html_to_terminal(answer("用2张H100部署qwen2.5-72b，32k上下文，50个用户同时用", lang="zh").html)
    assert "gpu_memory_utilization" in zh and "50" in zh


def test_a_named_image_model_gets_the_image_jobs_answer() -> None:
    reply = answer("Stable Diffusion 1.5 出一张512x512的图要多少显存")
    assert reply.kind == "fit" and "Stable Diffusion 1.5" in html_to_terminal(reply.html)
    assert reply.facts.get("scenario") is None
