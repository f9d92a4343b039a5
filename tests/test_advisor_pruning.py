"""The advisor's searches skip work without changing a result (issue 17): each shortcut held against the
plain search it replaces, over many jobs drawn with a fixed seed.

- `bigger_card` tries the cards of one size cheapest first and stops at the first that runs the job: the
  same card as estimating every card of the size and taking the cheapest that runs (catalog order among
  equal prices).
- `_with_chosen_layout` returns a job at once where `pretraining_layout` could choose no layout (a fine-tune,
  a card without NVLink, one node): the same job as filling its defaults and asking.
- One answer is priced from one book (`answer_pricing`): the price file is not checked again inside it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from bot.answer import answer
from core.advisor.bigger_card import _bigger_of_kind, bigger_card
from core.advisor.shared import card_price
from core.assessment import verdict_for_count
from core.catalog import Card, load_catalog
from core.cost import PriceBook, answer_pricing, price_book_in_force, use_price_file
from core.estimator import Fit, estimate, short_floor
from core.estimator.memory import _with_chosen_layout
from core.layout import pretraining_layout, with_layout
from core.query import Currency, Method, Precision, Query, Task
from core.registry import load_registry
from core.speed.constants import load_speed_constants

CARDS = (
    "rtx-3060-12gb",
    "t4",
    "rtx-4090",
    "rtx-3090",
    "a10",
    "l4",
    "v100-sxm2-32gb",
    "a100-40gb-sxm",
    "l40s",
    "a100-80gb-sxm",
    "h100-sxm",
    "mi300x",
)
SHAPES: tuple[dict[str, Any], ...] = (
    {},
    {"batch": 32},
    {"seq": 65536},
    {"runtime": "vllm", "batch": 16},
    {"runtime": "llama.cpp"},
    {"precision": Precision.INT4},
    {"precision": Precision.FP16},
    {"task": Task.FINETUNE},
    {"task": Task.FINETUNE, "method": Method.QLORA, "seq": 8192},
    {"task": Task.FINETUNE, "method": Method.FULL},
    {"task": Task.FINETUNE, "method": Method.FULL, "gpus": 4},
    {"task": Task.PRETRAIN, "gpus": 8},
    {"task": Task.PRETRAIN, "gpus": 32},
)


def _jobs(count: int, seed: int) -> list[tuple[Query, str]]:
    rng = random.Random(seed)
    models = [model.id for model in load_registry().models]
    return [(Query(model=rng.choice(models), **rng.choice(SHAPES)), rng.choice(CARDS)) for _ in range(count)]


def _every_card_of_the_size(query: Query, card: Card, count: int, currency: Currency) -> Card | None:
    """`bigger_card` as it was: every card of each size estimated, the cheapest that runs the job kept."""
    bf16 = query.precision in (None, Precision.BF16)
    floor = short_floor(query, count)
    for same_size in _bigger_of_kind(load_catalog(), card.vendor, card.memory_bytes, bf16):
        fitting: list[tuple[float, Card]] = []
        for other in same_size:
            if not other.unified_memory and floor is not None and floor > other.memory_bytes:
                continue
            verdict = verdict_for_count(
                estimate(query.model_copy(update={"card": other.id, "gpus": count})), count
            )
            if verdict is not None and verdict.fits is not Fit.NO:
                price = card_price(other.id, currency, None, query.platform)
                fitting.append((price.per_hour if price else float("inf"), other))
        if fitting:
            return min(fitting, key=lambda t: t[0])[1]
    return None


@pytest.mark.parametrize("currency", [Currency.USD, Currency.CNY])
def test_bigger_card_is_the_cheapest_of_the_smallest_size_that_runs(currency: Currency) -> None:
    catalog = load_catalog()
    found = 0
    for query, card_id in _jobs(120, seed=41):
        card = catalog.get(card_id)
        job = query.model_copy(update={"card": card_id})
        count = job.gpus or 1
        expected = _every_card_of_the_size(job, card, count, currency)
        assert bigger_card(job, card, count, currency) == expected, job.model_dump(exclude_defaults=True)
        found += expected is not None
    assert found > 40  # the draw reaches jobs that some bigger card runs


def test_a_layout_is_looked_for_only_where_one_can_be_chosen() -> None:
    catalog, registry, constants = load_catalog(), load_registry(), load_speed_constants()
    chosen = 0
    for query, card_id in _jobs(200, seed=43):
        card = catalog.get(card_id)
        model = registry.by_id[query.model or ""]
        filled = query.with_defaults()
        layout = pretraining_layout(filled, model, card, filled.gpus or 1, constants)
        expected = query if query.task is Task.INFERENCE else with_layout(query, layout)
        assert _with_chosen_layout(query, model, card) == expected
        chosen += layout is not None
    assert chosen > 0


def test_one_answer_is_priced_from_one_book(tmp_path: Path) -> None:
    book = price_book_in_force()
    assert book is not None
    with answer_pricing(book):
        use_price_file(tmp_path / "missing.toml")
        try:
            assert price_book_in_force() is book  # not read again inside the answer
        finally:
            use_price_file(None)
    with answer_pricing(None):
        assert price_book_in_force() is None  # an answer begun without prices stays without them
    assert price_book_in_force() is book


def test_an_answer_checks_the_price_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from core import cost

    checks: list[int] = []
    real = cost.load_price_book

    def counted() -> PriceBook:
        checks.append(1)
        return real()

    monkeypatch.setattr(cost, "load_price_book", counted)
    reply = answer("can I run qwen2.5 32b on 2x 4090 with vllm, 8 users?")
    assert reply.kind.value == "fit"
    assert len(checks) == 1
