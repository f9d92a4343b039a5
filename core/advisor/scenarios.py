"""The article's scenario recommendations, checked against real numbers."""

from __future__ import annotations

from core.advisor.model import SCENARIOS, CardOption, ClaimCheck, ScenarioAdvice
from core.advisor.plan_search import plans
from core.advisor.shared import card_price
from core.assessment import verdict_for_count
from core.catalog import load_catalog
from core.estimator import (
    Fit,
    estimate,
)
from core.query import Currency, Method, Precision, Query, Runtime, Task
from core.speed import inference_speed, training_speed


def _claim(label: str, query: Query, says_fits: bool) -> ClaimCheck:
    catalog = load_catalog()
    result = estimate(query)
    count = result.query.gpus or 1
    verdict = verdict_for_count(result, count)
    assert verdict is not None and result.query.card
    card = catalog.get(result.query.card)
    decode = training = None
    if result.query.task is Task.INFERENCE:
        decode = inference_speed(result, card, count).decode_tokens_per_s
    else:
        training = training_speed(result, card, count, None).tokens_per_s
    fits = verdict.fits is not Fit.NO
    return ClaimCheck(
        label=label,
        query=result.query,
        model_name=result.model_name,
        card=card.id,
        count=count,
        need_bytes=verdict.need_bytes,
        capacity_bytes=verdict.capacity_bytes,
        verdict=verdict.fits,
        article_says_fits=says_fits,
        holds=fits == says_fits,
        weights_bytes=result.breakdown.weights,
        decode_tokens_per_s=decode,
        max_sequences=result.vllm.max_sequences if result.vllm else None,
        training_tokens_per_s=training,
    )


def _cards_between(low_gib: float, high_gib: float | None = None) -> list[str]:
    return [
        c.id
        for c in load_catalog().cards
        if c.memory_gib >= low_gib and (high_gib is None or c.memory_gib <= high_gib)
    ]


def _cheapest_cards(memory_gib: float, currency: Currency, limit: int = 3) -> list[CardOption]:
    options = [
        CardOption(card=c.id, card_name=c.name, memory_gib=c.memory_gib, price=card_price(c.id, currency))
        for c in load_catalog().cards
        if c.memory_gib == memory_gib
    ]
    options.sort(key=lambda o: (o.price is None, o.price.per_hour if o.price else 0.0))
    return options[:limit]


def scenario(name: str, *, currency: Currency = Currency.USD) -> ScenarioAdvice:
    """The article's scenario table, each row tried on concrete jobs (where the rule is loose, the checks
    show it with numbers) and backed by ranked plans."""
    if name == "learning":
        card = "rtx-4090"
        checks = [
            _claim("7b_inference_fp16", Query(model="llama-2-7b", card=card, precision=Precision.FP16), True),
            _claim(
                "13b_inference_fp16", Query(model="llama-2-13b", card=card, precision=Precision.FP16), True
            ),
            _claim(
                "13b_inference_int8", Query(model="llama-2-13b", card=card, precision=Precision.INT8), True
            ),
            _claim(
                "7b_lora",
                Query(
                    task=Task.FINETUNE,
                    method=Method.LORA,
                    model="llama-2-7b",
                    card=card,
                    grad_checkpointing=True,
                ),
                True,
            ),
            _claim(
                "13b_qlora",
                Query(
                    task=Task.FINETUNE,
                    method=Method.QLORA,
                    model="llama-2-13b",
                    card=card,
                    grad_checkpointing=True,
                ),
                True,
            ),
            _claim(
                "7b_full", Query(task=Task.FINETUNE, method=Method.FULL, model="llama-2-7b", card=card), True
            ),
        ]
        found = plans(
            Query(task=Task.FINETUNE, model="qwen2.5-7b", gpus=1),
            limit=5,
            currency=currency,
            cards=_cards_between(24, 24),
        )
        return ScenarioAdvice(
            name=name,
            min_memory_gib=24,
            example_card=card,
            checks=checks,
            plans=found,
            notes=["loose_13b_fp16"] if not checks[1].holds else [],
        )
    if name == "production_inference":
        card = "a100-80gb-sxm"
        checks = [
            _claim(
                "70b_bf16_one_card",
                Query(model="llama-3.1-70b", card=card, runtime=Runtime.VLLM, seq=4096),
                True,
            ),
            _claim(
                "70b_bf16_two_cards",
                Query(model="llama-3.1-70b", card=card, gpus=2, runtime=Runtime.VLLM, seq=4096),
                True,
            ),
            _claim(
                "70b_int4_48gb",
                Query(
                    model="llama-3.1-70b",
                    card="l40s",
                    precision=Precision.INT4,
                    runtime=Runtime.VLLM,
                    seq=4096,
                ),
                True,
            ),
            _claim(
                "32b_bf16_48gb", Query(model="qwen2.5-32b", card="l40s", runtime=Runtime.VLLM, seq=4096), True
            ),
            _claim(
                "8b_bf16_48gb", Query(model="llama-3.1-8b", card="l40s", runtime=Runtime.VLLM, seq=4096), True
            ),
        ]
        found = plans(
            Query(model="qwen2.5-32b", runtime=Runtime.VLLM, seq=4096),
            limit=5,
            currency=currency,
            cards=_cards_between(48),
        )
        notes = ["example_card_exceeds_minimum"]
        if not all(c.holds for c in checks):
            notes.append("large_models_need_more")
        return ScenarioAdvice(
            name=name, min_memory_gib=48, example_card=card, checks=checks, plans=found, notes=notes
        )
    if name == "pretraining":
        card = "h100-sxm"
        checks = [
            _claim(
                "8b_pretrain_8x_h100",
                Query(task=Task.PRETRAIN, model="llama-3.1-8b", card=card, gpus=8),
                True,
            ),
            _claim(
                "8b_pretrain_8x_4090",
                Query(task=Task.PRETRAIN, model="llama-3.1-8b", card="rtx-4090", gpus=8),
                False,
            ),
            _claim(
                "70b_pretrain_8x_h100",
                Query(task=Task.PRETRAIN, model="llama-3.1-70b", card=card, gpus=8, grad_checkpointing=True),
                True,
            ),
            _claim(
                "70b_pretrain_32x_h100",
                Query(task=Task.PRETRAIN, model="llama-3.1-70b", card=card, gpus=32, grad_checkpointing=True),
                True,
            ),
        ]
        found = plans(
            Query(task=Task.PRETRAIN, model="llama-3.1-8b", gpus=8, tokens=1e11),
            limit=5,
            currency=currency,
            cards=_cards_between(80),
        )
        return ScenarioAdvice(
            name=name,
            min_memory_gib=80,
            example_card=card,
            needs_nvlink=True,
            checks=checks,
            plans=found,
            notes=["zero3_pools_memory"],
        )
    if name == "vision":
        return ScenarioAdvice(
            name=name,
            min_memory_gib=24,
            safer_memory_gib=48,
            example_card="rtx-4090",
            cards=_cheapest_cards(24, currency) + _cheapest_cards(48, currency),
            notes=["vision_not_estimated"],
        )
    raise ValueError(f"unknown scenario {name!r}; one of {', '.join(SCENARIOS)}")
