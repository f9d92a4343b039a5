"""The cards-needed search screens whole nodes by bisection (core/advisor/cards_needed.py `_counts_to_try`):
held against the exhaustive screen, count by count, over many jobs.

Two checks, on jobs drawn with a fixed seed from every model of the registry, cards of every size and the
job shapes answers size (serving engines, prefill runtimes, long contexts, many users, LoRA / QLoRA / full /
freeze fine-tunes, pretraining, ZeRO stages and offload, sequence parallelism, RL):
- the property the bisection rests on: over whole nodes a card's floor (`short_floor`) never grows with the
  count, for every job `floor_shrinks_over_nodes` admits;
- the search's results: `cards_needed` gives the same answer (count, layout, assessment) as with every
  count screened.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import core.advisor.cards_needed as search
from core.advisor.cards_needed import (
    NODE_SIZE,
    as_served,
    candidate_counts,
    cards_needed,
    floor_shrinks_over_nodes,
)
from core.catalog import load_catalog
from core.estimator import short_floor
from core.query import Algorithm, Method, Offload, Precision, Query, Task
from core.registry import load_registry

CARDS = (
    "rtx-4060-ti-8gb",
    "rtx-3060-12gb",
    "rtx-2080-ti",
    "t4",
    "rtx-4060-ti-16gb",
    "rtx-4090",
    "v100-sxm2-32gb",
    "l40s",
    "a100-40gb-sxm",
    "h100-sxm",
    "h200-sxm",
    "mi300x",
)

# job shapes: (fields of the query); the model is drawn beside them
SHAPES: tuple[dict[str, Any], ...] = (
    {},
    {"batch": 64},
    {"seq": 131072},
    {"runtime": "vllm", "seq": 32768, "batch": 16},
    {"runtime": "sglang"},
    {"runtime": "transformers", "batch": 8, "seq": 8192},
    {"runtime": "llama.cpp"},
    {"runtime": "tensorrt-llm", "precision": Precision.FP8},
    {"precision": Precision.INT4, "seq": 65536},
    {"task": Task.FINETUNE},
    {"task": Task.FINETUNE, "method": Method.QLORA, "seq": 8192},
    {"task": Task.FINETUNE, "method": Method.FULL},
    {"task": Task.FINETUNE, "method": Method.FULL, "batch": 8, "seq": 4096},
    {"task": Task.FINETUNE, "method": Method.FULL, "zero_stage": 2},
    {"task": Task.FINETUNE, "method": Method.FULL, "zero_stage": 1, "seq": 16384},
    {"task": Task.FINETUNE, "method": Method.FULL, "offload": Offload.OPTIMIZER},
    {"task": Task.FINETUNE, "method": Method.FULL, "offload": Offload.PARAMS},
    {"task": Task.FINETUNE, "method": Method.FREEZE},
    {"task": Task.FINETUNE, "method": Method.LORA, "seq": 65536, "sequence_parallel": 0},
    {"task": Task.FINETUNE, "method": Method.FULL, "seq": 131072, "sequence_parallel": 4},
    {"task": Task.FINETUNE, "method": Method.LORA, "chunked_loss": True, "seq": 32768},
    {"task": Task.FINETUNE, "grad_checkpointing": False, "batch": 4},
    {"task": Task.FINETUNE, "runtime": "unsloth"},
    {"task": Task.PRETRAIN},
    {"task": Task.PRETRAIN, "seq": 8192, "batch": 4},
    {"task": Task.FINETUNE, "algorithm": Algorithm.GRPO},
    {"task": Task.FINETUNE, "algorithm": Algorithm.PPO, "method": Method.FULL},
    {"task": Task.FINETUNE, "algorithm": Algorithm.DPO},
)


def _jobs(count: int, seed: int) -> list[tuple[Query, str]]:
    rng = random.Random(seed)
    models = [model.id for model in load_registry().models]
    jobs = []
    for _ in range(count):
        shape = rng.choice(SHAPES)
        jobs.append((Query(model=rng.choice(models), **shape), rng.choice(CARDS)))
    return jobs


@pytest.fixture
def exhaustive(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every count screened: no job is taken to have a floor that shrinks over nodes."""
    monkeypatch.setattr(search, "floor_shrinks_over_nodes", lambda query: False)


def test_the_floor_never_grows_over_whole_nodes() -> None:
    nodes = [count for count in candidate_counts() if count > NODE_SIZE]
    checked = 0
    for query, card_id in _jobs(300, seed=17):
        base = as_served(query.model_copy(update={"card": card_id, "gpus": None}))
        if not floor_shrinks_over_nodes(base):
            continue
        floors = [short_floor(base.model_copy(update={"gpus": n}), n) for n in nodes]
        known = [floor for floor in floors if floor is not None]
        if not known:
            continue  # the screen cannot tell (an offloading engine): every count gets its estimate
        assert len(known) == len(floors)
        grew = [(nodes[i], nodes[i + 1]) for i in range(len(known) - 1) if known[i + 1] > known[i]]
        assert not grew, f"{query.model_dump(exclude_defaults=True)} on {card_id}: the floor grows {grew}"
        checked += 1
    assert checked > 200


def _results(jobs: list[tuple[Query, str]]) -> list[Any]:
    catalog = load_catalog()
    return [cards_needed(query, catalog.get(card_id)) for query, card_id in jobs]


def test_bisection_gives_the_exhaustive_search_results(
    exhaustive: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = _jobs(160, seed=29)
    expected = _results(jobs)
    monkeypatch.undo()
    assert search.floor_shrinks_over_nodes is floor_shrinks_over_nodes
    found = _results(jobs)
    assert found == expected
    # the draw covers jobs no count holds and jobs that need whole nodes
    assert any(result is None for result in found)
    assert any(result is not None and result.count > NODE_SIZE for result in found)


def test_rl_jobs_are_screened_count_by_count() -> None:
    grpo = Query(model="qwen2.5-7b", task=Task.FINETUNE, algorithm=Algorithm.GRPO)
    assert not floor_shrinks_over_nodes(grpo)
    assert floor_shrinks_over_nodes(Query(model="qwen2.5-7b", task=Task.FINETUNE))
