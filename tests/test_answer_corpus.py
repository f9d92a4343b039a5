"""Answer facts for realistic questions (issue 10): every question goes through the real answer path, as
`gpufit ask --json` does, and every fact its entry names is checked in the JSON it produces.

The corpus (tests/corpus/answers.toml, answers_batch2.toml … answers_batch5.toml) holds `[[entry]]` tables:
  id      unique name, shown in failures
  q       the question, or a list of turns in one chat (each turn's query is the next turn's `previous`,
          as the bot remembers it); the facts apply to the LAST turn
  lang    the language of the last turn ("zh" | "en"); the answer must be in it
  kind    the kind of question (one of issue 10's ten: how_many, largest, serving, time_cost, compare,
          good_for, faq, out_of_scope, follow_up, sold_vs_usable); for the corpus statistics only
  tags    optional ("mixed", "typo", ...)
  expect  facts: a dotted path into the JSON -> what it must be. Paths start in `answer`, except those that
          start with `query.` (the top-level query). A path segment `name[k=v,k2=v2]` picks the first element
          of the list `name` whose fields k, k2 equal v, v2 (compared as text; `k=a|b` accepts a or b).
          A fact's value is
            a string, number or boolean   exact (numbers within 1e-6 relative)
            [lo, hi]                      a number in the closed range
            "present"                     the key is there, not null, not an empty list/dict/string
            "absent"                      the key is missing or null
            a table of tests, each one counted as its own fact:
              one_of = [...]              exact match with one of them
              ge = x / le = x             a number at least / at most x
              contains = x                a list holding x, or a string holding the substring x
              not_contains = x            the opposite
              matches = "re"              a string that re.search finds the pattern in
              not_matches = "re"          the opposite
"""

from __future__ import annotations

import importlib
import math
import re
import tomllib
from collections import Counter
from collections.abc import Collection
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from core.query import Query
from core.vision.job import VisionJob

CORPUS_DIR = Path(__file__).parent / "corpus"
CORPUS_FILES = (
    "answers.toml",
    "answers_batch2.toml",
    "answers_batch3.toml",
    "answers_batch4.toml",
    "answers_batch5.toml",
    "answers_quality.toml",
)
PASS_RATE = 0.97
KINDS = (
    "how_many",
    "largest",
    "serving",
    "time_cost",
    "compare",
    "good_for",
    "faq",
    "out_of_scope",
    "follow_up",
    "sold_vs_usable",
)
# Batch 4 (issue 18) counts its entries by the job's shape instead (statistics only)
BATCH4_KINDS = ("offload", "runtime", "rl", "launch", "long_context", "precision", "apple", "follow_up")
TESTS = ("one_of", "ge", "le", "contains", "not_contains", "matches", "not_matches")


def ask_json(
    text: str, previous: Query | None, previous_vision: VisionJob | None = None
) -> tuple[dict[str, Any], Query | None, VisionJob | None]:
    """One message through the answer path `gpufit ask --json` uses: (its JSON, the query and the vision job
    the bot remembers for the next turn). The answer layer is moving from core/answer to bot/answer; this is
    the one place that knows where it lives."""
    module: Any
    try:
        module = importlib.import_module("bot.answer")
    except ModuleNotFoundError:
        module = importlib.import_module("core.answer")
    reply = module.answer(text, previous=previous, previous_vision=previous_vision)
    return reply.to_json(), reply.query, reply.vision


class Entry(NamedTuple):
    source: str
    id: str
    turns: tuple[str, ...]
    lang: str
    kind: str
    tags: tuple[str, ...]
    expect: dict[str, Any]


def load_entries(names: tuple[str, ...] = CORPUS_FILES) -> list[Entry]:
    """The entries of these corpus files, in order (batch 4's report-only test loads its own file)."""
    entries: list[Entry] = []
    for name in names:
        with (CORPUS_DIR / name).open("rb") as handle:
            for raw in tomllib.load(handle)["entry"]:
                q = raw["q"]
                turns = (q,) if isinstance(q, str) else tuple(q)
                entries.append(
                    Entry(
                        name,
                        raw["id"],
                        turns,
                        raw["lang"],
                        raw["kind"],
                        tuple(raw.get("tags", ())),
                        dict(raw["expect"]),
                    )
                )
    return entries


ENTRIES = load_entries()


# ---------------------------------------------------------------------------------------------------
# The fact language
# ---------------------------------------------------------------------------------------------------
_MISSING = object()
_SELECTOR = re.compile(r"^(?P<name>[^\[\]]+)\[(?P<filters>[^\]]+)\]$")


def _text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _step(node: object, segment: str) -> object:
    selected = _SELECTOR.match(segment)
    name = selected["name"] if selected else segment
    if not isinstance(node, dict) or node.get(name) is None:
        return _MISSING
    child = node[name]
    if not selected:
        return child
    if not isinstance(child, list):
        return _MISSING
    wanted = dict(part.split("=", 1) for part in selected["filters"].split(","))
    for item in child:
        if isinstance(item, dict) and all(_text(item.get(k)) in v.split("|") for k, v in wanted.items()):
            return item
    return _MISSING


def lookup(data: dict[str, Any], path: str) -> object:
    """The value at a fact's path, or _MISSING."""
    node: object = data if path.startswith("query.") else data.get("answer")
    # split on dots outside [...] (selector values may hold dots: params_b=7.5)
    for segment in re.findall(r"[^.\[]+(?:\[[^\]]*\])?", path):
        node = _step(node, segment)
        if node is _MISSING:
            return _MISSING
    return node


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _equal(expected: object, actual: object) -> bool:
    want, got = _number(expected), _number(actual)
    if want is not None and got is not None:
        return abs(want - got) <= 1e-6 * max(1.0, abs(want))
    return expected == actual


def _is_present(actual: object) -> bool:
    return actual is not _MISSING and actual is not None and actual not in ("", [], {})


def _test(op: str, arg: object, actual: object) -> bool:
    got = _number(actual)
    if op == "one_of":
        return isinstance(arg, list) and any(_equal(a, actual) for a in arg)
    if op == "ge":
        return got is not None and got >= float(arg)  # type: ignore[arg-type]
    if op == "le":
        return got is not None and got <= float(arg)  # type: ignore[arg-type]
    if op in ("contains", "not_contains"):
        if isinstance(actual, list):
            inside = any(_equal(arg, item) for item in actual)
        elif isinstance(actual, str):
            inside = str(arg) in actual
        else:
            return False
        return inside if op == "contains" else not inside
    if op in ("matches", "not_matches"):
        if not isinstance(actual, str):
            return False
        found = re.search(str(arg), actual) is not None
        return found if op == "matches" else not found
    raise ValueError(f"unknown test {op!r}")


def check_fact(data: dict[str, Any], path: str, expected: object) -> list[tuple[str, str, object]]:
    """Failures of one fact as (fact, expected, got); a table of tests gives one fact per test."""
    actual = lookup(data, path)
    shown: object = "<missing>" if actual is _MISSING else actual
    if isinstance(shown, str) and len(shown) > 160:
        shown = shown[:160] + "…"
    if expected == "present":
        return [] if _is_present(actual) else [(path, "present", shown)]
    if expected == "absent":
        return [] if actual is _MISSING or actual is None else [(path, "absent", shown)]
    if isinstance(expected, list) and len(expected) == 2 and all(_number(x) is not None for x in expected):
        lo, hi = float(expected[0]), float(expected[1])
        got = _number(actual)
        ok = got is not None and lo <= got <= hi
        return [] if ok else [(path, f"in [{lo:g}, {hi:g}]", shown)]
    if isinstance(expected, dict):
        return [
            (f"{path} {op}", f"{op} {arg!r}", shown)
            for op, arg in expected.items()
            if not _test(op, arg, actual)
        ]
    return [] if _equal(expected, actual) else [(path, repr(expected), shown)]


def facts_of(entry: Entry) -> int:
    return 1 + sum(len(v) if isinstance(v, dict) else 1 for v in entry.expect.values())


_RESULTS: dict[tuple[str, str], list[str]] = {}
_ANSWERS: dict[tuple[str, str], dict[str, Any]] = {}


def run_entry(entry: Entry) -> list[str]:
    """Every failed fact of one entry, as a readable line (computed once per entry per session)."""
    key = (entry.source, entry.id)
    if key not in _RESULTS:
        _RESULTS[key] = _run_entry(entry)
    return _RESULTS[key]


def answer_of(entry: Entry) -> dict[str, Any]:
    """The JSON of the entry's last turn (computed once per entry per session, with its facts)."""
    run_entry(entry)
    return _ANSWERS[(entry.source, entry.id)]


def report_pass_rate(label: str, entries: list[Entry]) -> None:
    """Print a batch's pass rate and its failed facts (the report-only batches' one output, shown with -s)."""
    passed = [e for e in entries if not run_entry(e)]
    rate = len(passed) / len(entries)
    print(f"\nanswer corpus {label}: {len(passed)}/{len(entries)} entries pass ({rate:.1%})")
    for line in (line for e in entries for line in run_entry(e)):
        print("  " + line)


def _run_entry(entry: Entry) -> list[str]:
    previous: Query | None = None
    previous_vision: VisionJob | None = None
    data: dict[str, Any] = {}
    for turn in entry.turns:
        data, remembered, vision = ask_json(turn, previous, previous_vision)
        # as the bot's store keeps them (bot/store.py set_last_question): a language-model answer's query
        # (its vision job cleared), or a vision job (the last query kept)
        if remembered is not None or vision is not None:
            previous = remembered or previous
            previous_vision = vision
    _ANSWERS[(entry.source, entry.id)] = data
    failures = check_fact(data, "lang", entry.lang)
    for path, expected in entry.expect.items():
        failures.extend(check_fact(data, path, expected))
    question = " ⟶ ".join(entry.turns)
    return [
        f"{entry.source}:{entry.id} {question!r}: {fact} expected {want}, got {got!r}"
        for fact, want, got in failures
    ]


def assert_facts_well_formed(e: Entry, cards: Collection[str], models: Collection[str]) -> None:
    """Every fact of the entry in the fact language, and the cards and models it names ids of `cards` /
    `models` (the batches' own checks call this too)."""
    for path, value in e.expect.items():
        assert re.fullmatch(r"(query\.)?[\w\[\]=,.|\-]+", path), (e.id, path)
        if isinstance(value, list):
            assert len(value) == 2 and value[0] <= value[1], (e.id, path, value)
        if isinstance(value, dict):
            assert set(value) <= set(TESTS), (e.id, path, value)
        names = value.get("one_of", []) if isinstance(value, dict) else [value]
        names = [n for n in names if isinstance(n, str) and n not in ("present", "absent")]
        if path.endswith("card") or path.startswith("compare.winner."):
            assert all(n in cards for n in names), (e.id, path, value)
        if path in ("query.model",) or path.endswith("examples"):
            arg = value.get("contains") if isinstance(value, dict) else value
            assert arg is None or arg in ("present", "absent") or arg in models, (e.id, path, value)


def assert_batch_varied(entries: list[Entry], kinds: Collection[str], at_least: int) -> None:
    """A held-out batch's shape: unique ids, big enough, mostly Chinese, some multi-turn chats, and exactly
    the kinds it was written to cover."""
    ids = [e.id for e in entries]
    assert len(ids) == len(set(ids))
    assert len(entries) >= at_least
    assert sum(e.lang == "zh" for e in entries) * 2 > len(entries)
    assert sum(len(e.turns) > 1 for e in entries) >= 5
    assert set(Counter(e.kind for e in entries)) == set(kinds)


def assert_batch_well_formed(entries: list[Entry]) -> None:
    """Every fact in the fact language; the cards and models a batch names are ids of the catalog /
    registries."""
    from core.catalog import load_catalog
    from core.registry import load_registry
    from core.vision.registry import load_vision_registry

    catalog = load_catalog().by_id
    models = set(load_registry().by_id) | set(load_vision_registry().models)
    for e in entries:
        assert e.lang in ("zh", "en"), e
        assert e.expect, e
        assert_facts_well_formed(e, catalog, models)


def assert_batch_passes(label: str, entries: list[Entry], rate: float) -> None:
    """A batch's pass rate at least its bar (the failures printed, shown with -s)."""
    report_pass_rate(label, entries)
    passed = sum(not run_entry(e) for e in entries)
    assert passed / len(entries) >= rate, f"{label}: {passed}/{len(entries)}"


# ---------------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------------
def test_corpus_is_well_formed() -> None:
    """Unique ids, known kinds, every fact written in the fact language, ids of real cards and models."""
    from core.catalog import load_catalog
    from core.registry import load_registry

    ids = [(e.source, e.id) for e in ENTRIES]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    catalog, registry = load_catalog().by_id, load_registry().by_id
    for e in ENTRIES:
        assert e.kind in (BATCH4_KINDS if e.source == "answers_batch4.toml" else KINDS), e
        assert e.lang in ("zh", "en"), e
        assert e.expect, e
        assert all(t.strip() for t in e.turns), e
        assert_facts_well_formed(e, catalog, registry)


def test_corpus_is_big_and_varied() -> None:
    first = [e for e in ENTRIES if e.source == CORPUS_FILES[0]]
    second = [e for e in ENTRIES if e.source == CORPUS_FILES[1]]
    third = [e for e in ENTRIES if e.source == CORPUS_FILES[2]]
    assert len(first) >= 220
    assert len(second) >= 60
    assert len(third) >= 60
    assert sum(e.lang == "zh" for e in third) >= 30
    assert set(Counter(e.kind for e in third)) == set(KINDS)
    assert sum(e.lang == "zh" for e in first) * 2 >= len(first)
    kinds = Counter(e.kind for e in first)
    assert set(kinds) == set(KINDS), kinds
    assert sum(len(e.turns) > 1 for e in first) >= 20
    tags = Counter(t for e in first for t in e.tags)
    assert tags["typo"] >= 10
    assert tags["mixed"] >= 30


def _rate() -> tuple[float, int, list[str]]:
    failures: list[str] = []
    passed = 0
    for entry in ENTRIES:
        wrong = run_entry(entry)
        passed += not wrong
        failures.extend(wrong)
    return passed / len(ENTRIES), sum(facts_of(e) for e in ENTRIES), failures


def test_answers_carry_their_facts() -> None:
    """At least 97% of entries carry every fact; the failures are listed."""
    rate, facts, failures = _rate()
    by_source = Counter(e.source for e in ENTRIES)
    print(
        f"\nanswer corpus: {len(ENTRIES)} entries ({dict(by_source)}), {facts} facts, "
        f"{len(failures)} failed facts, entry pass rate {rate:.1%}"
    )
    for source in CORPUS_FILES:
        own = [e for e in ENTRIES if e.source == source]
        ok = sum(not run_entry(e) for e in own)
        print(f"  {source}: {ok}/{len(own)} entries pass")
    assert rate >= PASS_RATE, f"entry pass rate {rate:.1%}; failures:\n" + "\n".join(failures)


# ---------------------------------------------------------------------------------------------------
# The checker itself must be able to fail (a checker that passes everything would hide every bug)
# ---------------------------------------------------------------------------------------------------
SAMPLE: dict[str, Any] = {
    "query": {"params_b": 72.7, "model": "qwen2.5-72b"},
    "answer": {
        "kind": "cards_needed",
        "cards_needed": {"card": "l20", "count": 4},
        "largest_model": [
            {"task": "inference", "precision": "bf16", "params_b": 11.0, "examples": ["qwen2.5-7b"]},
            {"task": "finetune", "method": "qlora", "params_b": 33.0, "examples": []},
        ],
        "text": "sold as 48 GB, 45 GiB usable",
        "serving": {"queued": None},
    },
}


@pytest.mark.parametrize(
    ("path", "expected", "ok"),
    [
        ("kind", "cards_needed", True),
        ("kind", "fit", False),
        ("cards_needed.count", 4, True),
        ("cards_needed.count", 8, False),
        ("cards_needed.count", [3, 4], True),
        ("cards_needed.count", [5, 8], False),
        ("query.params_b", [70, 75], True),
        ("query.params_b", [7, 8], False),
        ("largest_model[task=inference,precision=bf16].params_b", [9, 12], True),
        ("largest_model[task=inference,precision=int4].params_b", [9, 12], False),
        ("largest_model[task=inference,precision=fp16|bf16].params_b", [9, 12], True),
        ("largest_model[task=finetune,method=qlora].examples", "present", False),
        ("largest_model[task=inference,precision=bf16].examples", {"contains": "qwen2.5-7b"}, True),
        ("serving.queued", "absent", True),
        ("serving.queued", "present", False),
        ("speed.decode_tokens_per_s", "present", False),
        ("speed.decode_tokens_per_s", [1, 100], False),
        ("cards_needed.card", {"one_of": ["l20", "l40s"]}, True),
        ("cards_needed.card", {"one_of": ["h20"]}, False),
        ("text", {"matches": r"45 GiB", "not_matches": r"48 GiB"}, True),
        ("text", {"not_contains": "45 GiB"}, False),
        ("cards_needed.count", {"ge": 4, "le": 4}, True),
        ("cards_needed.count", {"ge": 5}, False),
    ],
)
def test_fact_checker(path: str, expected: object, ok: bool) -> None:
    assert (check_fact(SAMPLE, path, expected) == []) is ok
