"""core/regex_screen.py: the lookahead it puts before a pattern lists every character a match can begin with,
so the screened pattern finds exactly the matches of the pattern as written."""

from __future__ import annotations

import random
import re
import tomllib
from pathlib import Path

import pytest

from core.parser import card_names, model_names
from core.regex_screen import first_chars, screened
from core.runtimes import load_runtimes

CORPUS = Path(__file__).parent / "corpus"


@pytest.mark.parametrize(
    ("source", "flags", "expected"),
    [
        ("vllm|sglang", 0, "vs"),
        (r"(?<![a-z])trl(?![a-z])", 0, "t"),
        (r"kt[\s_-]*kernel|原生pytorch", 0, "k原"),
        (r"(?:rtx\s*)?(\d{4})", 0, None),  # \d is a category: not listed
        (r"(?:rtx\s*)?([0-3])", 0, "r0123"),  # an optional part followed through
        (r"a*b?", 0, None),  # can match nothing
        (r"(?i:a)b|c", 0, None),  # flags switched inside
        (r".x", 0, None),
        (r"[^a]x", 0, None),
        (r"(?P<r0>ab)|(?P<r1>(?=c)cd)", 0, "ac"),
        (r"(?>xy)|z++", 0, "xz"),
        (r"\bfoo", 0, "f"),
    ],
)
def test_first_chars(source: str, flags: int, expected: str | None) -> None:
    found = first_chars(source, flags)
    assert found == (frozenset(expected) if expected is not None else None)


def test_a_pattern_whose_first_chars_are_unknown_is_compiled_as_it_is() -> None:
    assert screened(r"\d+x").pattern == r"\d+x"
    assert screened("vllm|sglang").pattern.startswith("(?=[")


def _texts() -> list[str]:
    """Every corpus question, lower-cased and as typed, and each with runtime, card and model names spliced in
    at random places and in random case."""
    texts: list[str] = []
    for path in sorted(CORPUS.glob("answers*.toml")):
        with path.open("rb") as handle:
            for raw in tomllib.load(handle)["entry"]:
                q = raw["q"]
                texts += [q] if isinstance(q, str) else list(q)
    with (CORPUS / "phrasings.toml").open("rb") as handle:
        texts += [case["text"] for case in tomllib.load(handle)["case"]]
    names = [
        "vLLM", "SGLang", "sg-lang", "llama.cpp", "llama-server", "-ngl 99", "--n-gpu-layers", "tune run",
        "LLaMA-Factory", "unsloth", "trl", "hf", "Hugging Face", "ollama", "lm studio", "trt-llm", "exl2",
        "rtx4090", "RTX 4090", "2x3090", "4090s", "a100 80g", "h100-sxm", "昇腾910b", "qwen2.5-7b",
        "Llama 3.1 8B", "deepseek-r1-distill-qwen-32b", "gpt-oss-20b", "k" + "\u212a" + "ransformers",
    ]  # fmt: skip
    rng = random.Random(5)
    spliced = []
    for text in texts:
        for _ in range(2):
            name = rng.choice(names)
            name = name.upper() if rng.random() < 0.3 else name
            at = rng.randrange(len(text) + 1)
            spliced.append(
                text[:at] + rng.choice(["", " ", "x", "-"]) + name + rng.choice(["", " ", "s"]) + text[at:]
            )
    return [*texts, *(t.lower() for t in texts), *spliced]


@pytest.mark.parametrize("name", ["runtimes", "cards", "models"])
def test_the_screened_patterns_find_what_the_patterns_as_written_find(name: str) -> None:
    pattern = {
        "runtimes": load_runtimes()._pattern,
        "cards": card_names._table().pattern,
        "models": model_names._table().exact,
    }[name]
    assert pattern.pattern.startswith("(?=[")  # screened
    written = re.compile(pattern.pattern[pattern.pattern.index("])(?:") + 5 : -1], pattern.flags)
    found = 0
    for text in _texts():
        expected = [(m.span(), m.groups()) for m in written.finditer(text)]
        assert [(m.span(), m.groups()) for m in pattern.finditer(text)] == expected, text
        found += len(expected)
    assert found > 500
