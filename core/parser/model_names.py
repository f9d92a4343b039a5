"""Find the model a message is about: a registry alias, or 'family [version] size' grammar.

Exact aliases come from the registry (built once). When the name is written in a way no alias
lists ('deepseek r1 distill 32b', 'qwen 2.5 7b', 'llama 3 9b'), a family + version + size grammar
picks the registry model of that family and size (newest version first); a family and size the
registry does not have gives the size alone and reports the name as unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from core.parser.aliases import alias_pattern
from core.parser.normalize import normalize
from core.regex_screen import by_first_char, screened
from core.registry import ModelArch, load_registry

MODEL_MARK = "\ue002"
_FAMILY_ONLY_MIN = 4  # 'opt', 'phi', 'yi' alone are ordinary words too often

# Families the registry lacks still tell us a size is a model size ('vicuna 13b', 'baichuan 53b').
_EXTRA_FAMILIES = (
    "codellama", "vicuna", "minicpm", "ernie", "kimi", "starcoder", "solar", "command-r", "grok", "olmo",
    "nemotron", "granite", "hunyuan", "gpt", "gpt-neox", "pythia", "mpt", "aquila", "skywork", "moss",
    "chatglm", "glm", "internvl", "llava", "qwen-vl", "whisper", "wizardlm", "zephyr", "openchat",
    "tinyllama", "smollm", "stablelm", "orion", "xverse", "telechat", "doubao",
)  # fmt: skip

# Words that make a name another model than the family's plain one of that size (its own encoders, heads or
# layers): 'qwen3-omni-30b-a3b' is not Qwen3-30B-A3B, 'qwen2-audio-7b' not Qwen2-7B. When no registry model
# of the family and size carries the word, the name is one the registry lacks (asked about by name, never
# swapped).
_OTHER_MODEL_WORDS = frozenset({"omni", "audio", "vl", "vision", "video", "embedding", "reranker", "linear"})

# Words that end a model's name: 'deepseek v2 lite on 6 910b' names DeepSeek-V2-Lite on six Ascend 910B cards,
# never a 910B model of the DeepSeek family (a size after them is another thing's: a card's, a count's).
_JOINING_WORDS = "(?:on|with|for|in|at|using|via|to|vs|versus|or|and|from)"

# Words that never distinguish two registry models.
_NOISE = frozenset(
    {"instruct", "chat", "base", "it", "hf", "model", "the", "a", "an", "of", "and", "v", "with", "b"}
)


@dataclass(frozen=True)
class ModelMention:
    model_id: str | None  # None: a family and size the registry does not have
    params_b: float | None  # the total; None when the name gives only the active count ('17B-16E')
    typed: str
    start: int
    end: int
    active_params_b: float | None = None  # MoE names: 'A3B' in '30B-A3B', '17B' in '17B-16E'
    experts: int | None = None  # '16E'


@dataclass(frozen=True)
class _Entry:
    model: ModelArch
    family: str
    tokens: frozenset[str]
    size: str | None  # nominal size from the id: '7', '0.5', '8x7'
    version: float


def _tokens(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?|[a-z]+", text)


def _nominal_size(model_id: str) -> str | None:
    for part in model_id.split("-"):
        moe = re.fullmatch(r"(\d+)x(\d+(?:\.\d+)?)b", part)
        if moe:
            return f"{moe.group(1)}x{moe.group(2)}"
        dense = re.fullmatch(r"(\d+(?:\.\d+)?)([bm])", part)
        if dense:
            value = float(dense.group(1)) / (1000 if dense.group(2) == "m" else 1)
            return f"{value:g}"
    return None


def _version(model_id: str, family: str) -> float:
    rest = model_id.removeprefix(family).lstrip("-")
    match = re.match(r"[a-z]?(\d+(?:\.\d+)?)", rest)
    return float(match.group(1)) if match else 0.0


@dataclass(frozen=True)
class _ModelTable:
    exact: re.Pattern[str]
    by_key: dict[str, str]
    entries: tuple[_Entry, ...]
    grammar: re.Pattern[str]
    families: frozenset[str]
    family_only: re.Pattern[str]
    written: str  # `exact` before its names were grouped by first character (tests compare the two)


def _key(text: str) -> str:
    return " ".join(_tokens(normalize(text)))


@cache
def _table() -> _ModelTable:
    registry = load_registry()
    by_key: dict[str, str] = {}
    entries: list[_Entry] = []
    families: set[str] = set(_EXTRA_FAMILIES)
    for model in registry.models:
        family = model.family or re.match(r"[a-z]+", model.id).group(0)  # type: ignore[union-attr]
        prefix = re.match(r"[a-z]+(?:-[a-z]+)?", model.id)
        families.add(family)
        if prefix and len(prefix.group(0).split("-")[0]) >= 3:
            families.add(prefix.group(0).split("-")[0])
        spellings = (model.id, model.name, *model.aliases, model.hf_repo.split("/")[-1])
        for name in spellings:
            if name:
                by_key.setdefault(_key(name), model.id)
        tokens = frozenset(t for name in (model.id, *model.aliases) for t in _tokens(normalize(name)))
        entries.append(_Entry(model, family, tokens, _nominal_size(model.id), _version(model.id, family)))
    keys = sorted(by_key, key=lambda k: (-len(k.replace(" ", "")), k))
    branches = [alias_pattern(k) for k in keys]
    written = rf"(?<![a-z0-9.])(?:{'|'.join(branches)})(?![a-z0-9])"  # ~20,000 characters of names
    exact = screened(rf"(?<![a-z0-9.])(?:{by_first_char(branches)})(?![a-z0-9])")  # the same (regex_screen)
    fams = "|".join(re.escape(f).replace(r"\-", r"[\s\-_]?") for f in sorted(families, key=len, reverse=True))
    grammar = re.compile(
        rf"(?<![a-z0-9])(?P<fam>{fams})(?![a-z])"
        rf"(?P<mid>(?:[\s\-_/:.]*+(?:v?\d++(?:\.\d+)?+|(?!{_JOINING_WORDS}(?![a-z]))[a-z]++)){{0,4}}?)[\s\-_/:]*"
        r"(?P<size>(?:\d+\s*x)?\d+(?:\.\d+)?)\s*(?P<unit>b|m|亿)(?![a-z0-9])"
        r"(?:[\s\-_]*(?:a(?P<active>\d+(?:\.\d+)?)b|(?P<experts>\d+)e)(?![a-z0-9]))?"
    )
    names = "|".join(
        re.escape(f) for f in sorted(families, key=len, reverse=True) if len(f) >= _FAMILY_ONLY_MIN
    )
    # not a family where a word goes on after a dot (a runtime's name, as the C++ port's is)
    family_only = re.compile(rf"(?<![a-z0-9])(?:{names})(?:[\s\-_.]*\d+(?:\.\d+)?)?(?![a-z0-9]|\.[a-z])")
    return _ModelTable(exact, by_key, tuple(entries), grammar, frozenset(families), family_only, written)


def _size_value(size: str, unit: str) -> tuple[str, float]:
    """('8x7', 56.0) or ('7', 7.0): the nominal label and the total billions."""
    scale = {"b": 1.0, "m": 0.001, "亿": 0.1}[unit]
    moe = re.fullmatch(r"(\d+)\s*x\s*(\d+(?:\.\d+)?)", size)
    if moe:
        label = f"{int(moe.group(1))}x{float(moe.group(2)) * scale:g}"
        return label, int(moe.group(1)) * float(moe.group(2)) * scale
    value = float(size) * scale
    return f"{value:g}", value


def _size_matches(entry: _Entry, label: str, value: float) -> bool:
    if entry.size is not None:
        return entry.size == label or (("x" not in label) and entry.size.replace("x", "") == label)
    return value > 0 and abs(entry.model.params_b - value) <= 0.1 * value


def _family_of(entry: _Entry, fam: str) -> bool:
    return entry.family == fam or entry.model.id.startswith(fam)


def moe_name_sizes(
    size_b: float, active: str | None, experts: str | None
) -> tuple[float | None, float | None]:
    """(total, active) billions from a MoE name: '30B-A3B' is 30 total, 3 active; '17B-16E' is 17 active,
    the total unknown from the name (Llama 4 Scout is 109B); a dense '7B' is the total."""
    if active:
        return size_b, float(active)
    if experts:
        return None, size_b
    return size_b, None


def _from_grammar(match: re.Match[str]) -> ModelMention:
    table = _table()
    fam = re.sub(r"[\s_]", "-", match.group("fam"))
    label, value = _size_value(match.group("size"), match.group("unit"))
    total, active = moe_name_sizes(value, match.group("active"), match.group("experts"))
    experts = int(match.group("experts")) if match.group("experts") else None
    said = _tokens(match.group("mid"))
    if said and said[-1] == "a" and match.group("mid").endswith("a") and not match.group("active"):
        # 'hunyuan-a13b': the A-count is the active parameters (Hunyuan-A13B is 80B in all), never the size
        total, active = None, value
        said = said[:-1]
    if said and said[-1] == "e" and match.group("mid").endswith("e"):
        # 'gemma 3n e4b': an E-count is the effective parameters (Gemma 3n E4B holds 8B), never the size, and
        # never another model of that size ('gemma 3 4b')
        return ModelMention(None, None, match.group(0).strip(), match.start(), match.end())
    numbers = [t for t in said if t[0].isdigit()]
    words = [t for t in said if not t[0].isdigit() and t not in _NOISE]
    candidates = [e for e in table.entries if _family_of(e, fam) and _size_matches(e, label, value)]

    def version_ok(entry: _Entry) -> bool:
        return all(any(t == n or t.startswith(n + ".") for t in entry.tokens) for n in numbers)

    candidates = [e for e in candidates if version_ok(e)]
    if experts:
        candidates = [e for e in candidates if e.model.experts == experts] or candidates
    if active:
        near = [
            e for e in candidates if e.model.active_params_b and abs(e.model.active_params_b - active) < 1
        ]
        candidates = near or candidates
    for word in words:
        narrowed = [e for e in candidates if word in e.tokens]
        if narrowed:
            candidates = narrowed
        elif word in _OTHER_MODEL_WORDS:
            candidates = []
            break
    typed = match.group(0).strip()
    if not candidates:
        params = round(total, 6) if total and total > 0 else None
        return ModelMention(None, params, typed, match.start(), match.end(), active, experts)
    exact_version = [e for e in candidates if all(n in e.tokens for n in numbers)]
    pool = exact_version or candidates
    best = max(pool, key=lambda e: (e.version, -candidates.index(e)))
    return ModelMention(best.model.id, None, typed, match.start(), match.end())


def find_model(text: str) -> ModelMention | None:
    """The first model named in normalized text (registry id, or an unknown name with its size)."""
    table = _table()
    exact = table.exact.search(text)
    grammar = table.grammar.search(text)
    if exact and grammar and grammar.start() <= exact.start() < grammar.end() and grammar.end() > exact.end():
        return _from_grammar(grammar)  # 'deepseek r1' + ' distill 32b': the longer reading wins
    if exact and (grammar is None or exact.start() <= grammar.start()):
        model_id = table.by_key.get(" ".join(_tokens(exact.group(0))))
        if model_id:
            mention = ModelMention(model_id, None, exact.group(0).strip(), exact.start(), exact.end())
            return _base_of_glued_name(text, mention) or mention
    if grammar:
        return _from_grammar(grammar)
    return None


_GLUED_TAIL = re.compile(r"[\-_][a-z0-9.\-_]+")


def _base_of_glued_name(text: str, mention: ModelMention) -> ModelMention | None:
    """'deepseek-r1-0528-qwen3-8b', 'r1-distill-llama-8b' as one hyphenated name: a model named after another
    and ending in a registry model of its own size is that model's weights (a distilled or fine-tuned
    checkpoint of it: DeepSeek-R1-0528-Qwen3-8B is a Qwen3-8B), never the 671B model named first."""
    tail = _GLUED_TAIL.match(text, mention.end)
    if tail is None:
        return None
    inner = find_model(tail.group(0))
    if inner is None or inner.model_id in (None, mention.model_id) or inner.start == 0:
        return None
    if _nominal_size(inner.model_id or "") is None:
        return None
    end = tail.start() + inner.end
    return ModelMention(inner.model_id, None, text[mention.start : end].strip(), mention.start, end)


def model_id_for(name: str) -> str | None:
    """A model name as people type it ('ds r1 distill 32b', 'lama 3 8b') -> registry id, if it names one."""
    from core.parser.normalize import normalize

    mention = find_model(normalize(name))
    return mention.model_id if mention else None


def find_family_only(text: str) -> str | None:
    """A model family named without a size ('llama3', 'qwen'): a model-looking name we cannot size."""
    match = _table().family_only.search(text)
    return match.group(0).strip() if match else None
