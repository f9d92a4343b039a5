"""Field accuracy of the parser over real-world phrasings (tests/corpus/phrasings.toml)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from core.parser import Parsed, parse
from core.query import Query
from core.units import GIB

CORPUS = Path(__file__).parent / "corpus" / "phrasings.toml"
PARSED_FIELDS: tuple[str, ...] = (
    "intent",
    "lang",
    "faq",
    "scenario",
    "clarify",
    "follow_up",
    "compare_methods",
    "unknown_model",
)
PARSED_FIELDS += ("ambiguous_card", "cards")
QUERY_FIELDS = (
    "method", "model", "params_b", "card", "card_memory_bytes", "gpus", "precision", "batch", "seq",
    "runtime", "grad_checkpointing", "lora_rank", "tokens", "budget", "budget_period", "currency",
    "optimizer", "zero_stage",
)  # fmt: skip
FIT_LIKE = ("fit", "plan", "clarify", "cards_needed", "largest_model")


def _cases() -> list[dict[str, Any]]:
    with CORPUS.open("rb") as handle:
        return list(tomllib.load(handle)["case"])


CASES = _cases()


def _previous(case: dict[str, Any]) -> Query | None:
    raw = case.get("previous")
    if raw is None:
        return None
    data = dict(raw)
    data.setdefault("defaulted", [] if "task" in data else ["task"])
    return Query(**data)


def _value(parsed: Parsed, name: str) -> object:
    if name in PARSED_FIELDS:
        value = getattr(parsed, name)
    elif parsed.query is None:
        return None
    elif name == "task":
        return "default" if "task" in parsed.query.defaulted else parsed.query.task
    else:
        value = getattr(parsed.query, name)
    return value


def _same(expected: object, actual: object) -> bool:
    if (
        isinstance(expected, float | int)
        and not isinstance(expected, bool)
        and isinstance(actual, float | int)
    ):
        return abs(float(expected) - float(actual)) <= 1e-6 * max(1.0, abs(float(expected)))
    if isinstance(actual, list):
        return list(expected) == actual if isinstance(expected, list) else False
    if hasattr(actual, "value"):
        actual = actual.value
    return expected == actual


def _expected(case: dict[str, Any]) -> dict[str, object]:
    expect = dict(case["expect"])
    if "card_memory_gib" in expect:
        expect["card_memory_bytes"] = int(expect.pop("card_memory_gib")) * GIB
    return expect


def _check(case: dict[str, Any]) -> tuple[int, list[str], list[str]]:
    """(expected fields checked, wrong expected fields, spurious fields) for one case."""
    parsed = parse(case["text"], _previous(case))
    expect = _expected(case)
    wrong = [
        f"{case['text']!r}: {name} expected {value!r}, got {_value(parsed, name)!r}"
        for name, value in expect.items()
        if not _same(value, _value(parsed, name))
    ]
    spurious: list[str] = []
    if expect.get("intent") in FIT_LIKE and parsed.query is not None:
        for name in QUERY_FIELDS:
            if name not in expect and getattr(parsed.query, name) is not None:
                spurious.append(f"{case['text']!r}: unexpected {name}={getattr(parsed.query, name)!r}")
        if "task" not in expect and "task" not in parsed.query.defaulted:
            spurious.append(f"{case['text']!r}: unexpected task={parsed.query.task!r}")
    return len(expect), wrong, spurious


def test_corpus_is_big_and_varied() -> None:
    zh = [c for c in CASES if c["expect"].get("lang") == "zh"]
    tags = [t for c in CASES for t in c.get("tags", [])]
    assert len(CASES) >= 320
    assert len(zh) >= 160
    assert tags.count("mixed") >= 30
    assert tags.count("typo") >= 20
    assert tags.count("followup") >= 20


def test_field_accuracy_at_least_97_percent() -> None:
    total = 0
    failures: list[str] = []
    for case in CASES:
        checked, wrong, _ = _check(case)
        total += checked
        failures.extend(wrong)
    accuracy = 1 - len(failures) / total
    print(f"\nparser corpus: {len(CASES)} cases, {total} expected fields, accuracy {accuracy:.2%}")
    assert accuracy >= 0.97, f"accuracy {accuracy:.2%} over {total} fields; failures:\n" + "\n".join(failures)


def test_few_spurious_fields() -> None:
    """Fields the user did not state stay unset (a guessed card count is worse than none)."""
    spurious = [s for case in CASES for s in _check(case)[2]]
    fit_like = sum(1 for c in CASES if c["expect"].get("intent") in FIT_LIKE)
    assert len(spurious) <= 0.03 * fit_like, "spurious fields:\n" + "\n".join(spurious)


@pytest.mark.parametrize("case", [c for c in CASES if c["expect"].get("intent") not in FIT_LIKE], ids=str)
def test_intent_of_non_fit_messages(case: dict[str, Any]) -> None:
    assert parse(case["text"], _previous(case)).intent.value == case["expect"]["intent"]
