"""core/regex_screen.py: the lookahead it puts before a pattern lists every character a match can begin with,
so the screened pattern finds exactly the matches of the pattern as written."""

from __future__ import annotations

import random
import re
import sys
import tomllib
import types
from pathlib import Path

import pytest

from core.parser import card_names, model_names
from core.regex_screen import AnyOf, Gated, by_first_char, first_chars, gated, needed_literals, screened
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


def test_by_first_char_groups_branches_that_begin_with_a_plain_character() -> None:
    assert by_first_char(["apple", "ab[cd]", "h100", "a100", "4090"]) == "a(?:pple|b[cd]|100)|h100|4090"
    assert by_first_char(["a*b", "ab"]) == "a*b|ab"  # a repeated first character: as written
    assert by_first_char(["ab", "x|y"]) == "ab|x|y"  # an alternation as a branch: as written
    assert by_first_char(["a(b)", "ac"]) == "a(b)|ac"  # a capturing group: as written
    assert by_first_char([r"\(x", "ab"]) == r"\(x|ab"


def test_branches_grouped_by_first_char_match_as_the_plain_alternation() -> None:
    """Random branches over a small alphabet, inside the kind of pattern the card names sit in: the same
    matches, spans and groups, backtracking included (the branches' order decides which one matches)."""
    rng = random.Random(23)
    pieces = ["a", "b", "c", "ab", "a?", "b+", "[ab]", "(c)", r"\s*", "(?:a|bc)", "c{2}", "(?=b)", "(?!a)"]
    alphabet = "abc x"
    for _ in range(600):
        branches = []
        for _ in range(rng.randint(2, 8)):
            branches.append(rng.choice("abc") + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 3))))
        tail = rng.choice(["", "b", "(?![a-z])", "c?x"])
        plain = re.compile(f"(?:{'|'.join(branches)}){tail}")
        grouped = re.compile(f"(?:{by_first_char(branches)}){tail}")
        for _ in range(15):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
            expected = [(m.span(), m.groups()) for m in plain.finditer(text)]
            assert [(m.span(), m.groups()) for m in grouped.finditer(text)] == expected, (branches, text)


def test_a_pattern_whose_first_chars_are_unknown_is_compiled_as_it_is() -> None:
    assert screened(r"\d+x").pattern == r"\d+x"
    assert screened("vllm|sglang").pattern.startswith("(?=[")


def _questions() -> list[str]:
    """Every corpus question as typed."""
    texts: list[str] = []
    for path in sorted(CORPUS.glob("answers*.toml")):
        with path.open("rb") as handle:
            for raw in tomllib.load(handle)["entry"]:
                q = raw["q"]
                texts += [q] if isinstance(q, str) else list(q)
    with (CORPUS / "phrasings.toml").open("rb") as handle:
        texts += [case["text"] for case in tomllib.load(handle)["case"]]
    return texts


def _texts() -> list[str]:
    """Every corpus question, lower-cased and as typed, and each with runtime, card and model names spliced in
    at random places and in random case."""
    texts = _questions()
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
    as_written = {"cards": card_names._table().written, "models": model_names._table().written}
    # the names of cards and models grouped by first character (by_first_char): compared with the plain list
    source = as_written.get(name, pattern.pattern[pattern.pattern.index("])(?:") + 5 : -1])
    written = re.compile(source, pattern.flags)
    found = 0
    for text in _texts():
        expected = [(m.span(), m.groups()) for m in written.finditer(text)]
        assert [(m.span(), m.groups()) for m in pattern.finditer(text)] == expected, text
        found += len(expected)
    assert found > 500


# -- the gates: strings every match contains ------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "flags", "expected"),
    [
        (r"epochs?\s*(?:=|:)?\s*(\d+)", 0, {"epoch"}),
        (r"(?:tokens?|词元)", 0, {"token", "词元"}),  # 'tokens' holds 'token'
        (r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*(?:gb|gib|g)(?![a-z0-9])", 0, {"g"}),
        (r"grad[\s_-]*(?:ckpt|checkpoint)|梯度检查点", 0, {"grad", "梯度检查点"}),
        (r"@[a-z0-9_]*bot", 0, {"bot"}),  # the rarer of '@' and 'bot'
        (r"[零一二]+(?=\s*张)", 0, {"零", "一", "二"}),  # what a lookahead needs is not counted
        (r"a*b?", 0, None),  # can match nothing
        (r"\d+x?", 0, None),  # a category: nothing listed
        (r"x|\d", 0, None),  # one branch needs nothing
        (r"(?i:a)b", 0, {"b"}),  # flags switched inside: that part is not counted
        (r"(?i)vllm|sglang", 0, {"vllm", "sglang"}),  # matched ignoring case, as the pattern is
        (r"(?:ab){2,}", 0, {"ab"}),
        (r"[^a]bc", 0, {"bc"}),
    ],
)
def test_needed_literals(source: str, flags: int, expected: set[str] | None) -> None:
    found = needed_literals(source, flags)
    assert (found[0] if found is not None else None) == (frozenset(expected) if expected else None)


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    """A small random pattern over the letters a–d and 中, with every construct the gates read."""
    parts = []
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.35 or depth > 2:
            parts.append(rng.choice("abcd中"))
        elif roll < 0.45:
            parts.append(rng.choice(["[ab]", "[a-c]", "[^a]", r"\d", ".", r"\s", "[中d]"]))
        elif roll < 0.6:
            branches = [_random_pattern(rng, depth + 1) for _ in range(rng.randint(2, 3))]
            parts.append("(?:" + "|".join(branches) + ")")
        elif roll < 0.7:
            parts.append("(" + _random_pattern(rng, depth + 1) + ")")
        elif roll < 0.8:
            parts.append(rng.choice(["(?=", "(?!", "(?<=", "(?<!"]) + rng.choice("abcd") + ")")
        elif roll < 0.85:
            parts.append(rng.choice([r"\b", "^", "$"]))
        elif roll < 0.9:
            parts.append("(?i:" + rng.choice("abAB") + ")")
        else:
            parts.append("(?>" + _random_pattern(rng, depth + 1) + ")")
        if rng.random() < 0.3:
            parts[-1] = (
                "(?:" + parts[-1] + ")" + rng.choice(["?", "*", "+", "{2}", "{1,3}", "{0,2}", "??", "+?"])
            )
    return "".join(parts)


def test_a_gate_never_hides_a_match_of_random_patterns() -> None:
    """Random patterns against random texts: wherever the pattern finds a match, the match holds one of
    the gate's strings, and the gated pattern finds the same matches."""
    rng = random.Random(17)
    alphabet = "abcdABCD中 1"
    gated_count = 0
    for _ in range(1_200):
        source = _random_pattern(rng)
        flags = re.IGNORECASE if rng.random() < 0.2 else 0
        try:
            plain = re.compile(source, flags)
        except re.error:
            continue  # a lookbehind of no fixed width…
        pattern = gated(source, flags)
        literals = needed_literals(source, flags)
        gated_count += literals is not None
        for _ in range(20):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
            expected = [(m.span(), m.groups()) for m in plain.finditer(text)]
            assert [(m.span(), m.groups()) for m in pattern.finditer(text)] == expected, (source, text)
            assert pattern.sub("_", text) == plain.sub("_", text), (source, text)
            if literals is not None and expected:
                probe = re.compile("|".join(re.escape(s) for s in literals[0]), literals[1])
                for match in plain.finditer(text):
                    if match.end() > match.start():
                        assert probe.search(match.group(0)), (source, text, literals)
    assert gated_count > 250


def _parser_patterns() -> list[tuple[str, Gated]]:
    """Every gated pattern the parser's modules hold (module constants and tables of them)."""
    import core.parser.pipeline  # noqa: F401  (imports every parser module)
    from core.warm import warm

    warm()
    found: list[tuple[str, Gated]] = []

    def walk(value: object, name: str) -> None:
        if isinstance(value, Gated):
            found.append((name, value))
        elif isinstance(value, tuple):
            for index, item in enumerate(value):
                walk(item, f"{name}[{index}]")

    for module_name, module in sorted(sys.modules.items()):
        if module_name.startswith("core.parser") and module is not None:
            for attr, value in vars(module).items():
                walk(value, f"{module_name}.{attr}")
    return found


def test_the_parsers_gated_patterns_find_what_they_find_ungated() -> None:
    """Each gated pattern of the parser, on every corpus question (as typed, normalized, and with names
    spliced in): the same matches as the pattern without its gate, and each match holds a gate string."""
    from core.parser.normalize import normalize

    patterns = _parser_patterns()
    assert len(patterns) > 250
    typed = _questions()
    texts = list(dict.fromkeys([*typed, *(normalize(text) for text in typed)]))
    matched = 0
    for name, pattern in patterns:
        plain = pattern.compiled
        for text in texts:
            expected = [(m.span(), m.groups()) for m in plain.finditer(text)]
            if expected:
                assert pattern.holds(text), (name, text)
                assert [(m.span(), m.groups()) for m in pattern.finditer(text)] == expected, (name, text)
                matched += 1
            else:
                assert pattern.search(text) is None, (name, text)
    assert matched > 5_000


def _patterns_read_by(function: object, outside: tuple[object, ...]) -> set[int]:
    """The ids of the patterns `function` reads: module constants its code names (tables of them looked
    into), and those of the functions of its module that it calls, except `outside` (run whatever the
    gate says)."""
    assert isinstance(function, types.FunctionType)
    found: set[int] = set()
    seen: set[object] = set()

    def from_value(value: object) -> None:
        if isinstance(value, (re.Pattern, Gated)):
            found.add(id(value))
        elif isinstance(value, tuple):
            for item in value:
                from_value(item)

    def walk(func: types.FunctionType) -> None:
        if func in seen or func in outside:
            return
        seen.add(func)
        codes = [func.__code__]
        while codes:
            code = codes.pop()
            codes += [const for const in code.co_consts if isinstance(const, types.CodeType)]
            for name in code.co_names:
                value = func.__globals__.get(name)
                value = getattr(value, "__wrapped__", value)  # an lru_cache'd function
                if isinstance(value, types.FunctionType) and value.__module__ == func.__module__:
                    walk(value)
                else:
                    from_value(value)

    walk(function)
    return found


def _families() -> list[tuple[str, AnyOf, object, tuple[object, ...]]]:
    from core.parser import entities, jobs, market, normalize
    from core.parser.card_names import mask

    return [
        ("normalize", normalize._ANY_REWRITE, normalize._rewritten, ()),
        ("read_jobs", jobs._JOB_READINGS, jobs.read_jobs, (jobs.read_host_memory, mask)),
        ("_read_precision", entities._PRECISION_WORDS, entities._read_precision, ()),
        ("read_traffic", market._TRAFFIC_WORDS, market.read_traffic, (mask,)),
    ]


@pytest.mark.parametrize("index", range(4))
def test_a_readers_one_test_covers_every_pattern_it_reads(index: int) -> None:
    """A reader skipped on one test of its patterns' strings (AnyOf) lists every pattern it reads: one
    added to the reader and not to its list would be hidden where the others find nothing."""
    name, family, reader, outside = _families()[index]
    listed = {id(pattern) for pattern in family.patterns}
    read = _patterns_read_by(reader, outside)
    assert read, name
    module = sys.modules[reader.__module__]
    missing = [attr for attr, value in vars(module).items() if id(value) in read - listed]
    assert not missing, f"{name} reads {missing}: add them to its AnyOf"
    assert family.literals is not None, name  # every member gated: the test can fail


def test_a_family_holds_wherever_one_of_its_patterns_matches() -> None:
    from core.parser.normalize import normalize

    typed = _questions()
    texts = list(dict.fromkeys([*typed, *(normalize(text) for text in typed)]))
    for name, family, _reader, _outside in _families():
        for text in texts:
            if any(pattern.search(text) for pattern in family.patterns):
                assert family.holds(text), (name, text)
