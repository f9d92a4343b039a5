"""Chinese answers read as Chinese: over every Chinese question of the answer corpus (tests/corpus/, all
batches), the answer's text carries no English sentence punctuation or English words where Chinese has its
own — the slips a native reader trips on ("🧰 运行时：verl." ending in an English period, "2,048 tokens",
"GRPO: policy 49.8 GiB · reference 4.7 GiB", "(GGUF Q4_K_M，上下文 …)" in ASCII brackets). Names (vLLM,
LoRA, KV cache), units and numbers stay as they are written; code and commands are not checked.

The answers are the corpus tests' own (computed once per session, tests/test_answer_corpus.py)."""

from __future__ import annotations

import re

import pytest
from test_answer_corpus import CORPUS_DIR, answer_of, load_entries

ZH_ENTRIES = [
    e for e in load_entries(tuple(sorted(p.name for p in CORPUS_DIR.glob("answers*.toml")))) if e.lang == "zh"
]
_CJK = "\u4e00-\u9fff"
# What a Chinese sentence must not carry, each with why
SLIPS: dict[str, re.Pattern[str]] = {
    # a line that ends in an English full stop (not a number's point, not an ellipsis)
    "English full stop at a line's end": re.compile(r"[^\s.\d]\.$", re.M),
    # "GRPO: policy", "策略: ": a Chinese label takes "："
    "English colon after a label": re.compile(
        rf"(?:[{_CJK}]|(?<![\w./-])[A-Za-z]{{2,}}): (?=[{_CJK}A-Za-z])"
    ),
    # "2,048 tokens": Chinese counts "2,048 个 token" (the unit "token/s" is fine)
    "English plural 'tokens'": re.compile(r"(?<![\w/-])tokens(?![\w/])"),
    # "(GGUF Q4_K_M，上下文 4,096 token)": brackets around Chinese are full-width
    "ASCII brackets around Chinese": re.compile(rf"\([^()]*[{_CJK}][^()]*\)"),
    # "带宽 120 GB/s。 可用": no space after a Chinese full stop or comma
    "space after a Chinese full stop": re.compile(rf"[。，；](?: )(?=[{_CJK}A-Za-z0-9])"),
    # "最大模型 （稠密模型": no space before a full-width bracket
    "space before a full-width bracket": re.compile(rf"[{_CJK}] （"),
    # "每天 10 万 次请求": a count's 万 / 亿 is read with the measure word after it, "10 万次"
    "space after 万 or 亿": re.compile(rf"\d (?:万亿|亿|万) (?=[{_CJK}])"),
    # "policy 49.8 GiB · reference 4.7 GiB": the roles of an RL job in English
    "RL roles in English": re.compile(r"(?<![\w-])(?:policy|reference|critic|reward) \d"),
}
_CODE = re.compile(r"^\s*(?:▶️|\$|<code>|```)|--[a-z]|\{\"|ds_config", re.M)


def slips_in(text: str) -> list[tuple[str, str]]:
    """(slip, line) for every line of a Chinese answer that has one; command lines are left out."""
    found = []
    for line in text.splitlines():
        if _CODE.search(line):
            continue
        found += [(name, line.strip()) for name, pattern in SLIPS.items() if pattern.search(line)]
    return found


def test_the_corpus_has_chinese_answers_to_read() -> None:
    assert len(ZH_ENTRIES) >= 300


def test_chinese_answers_have_no_english_slips() -> None:
    slips = []
    for entry in ZH_ENTRIES:
        data = answer_of(entry)
        answer = data.get("answer", {})
        if answer.get("lang") != "zh":
            continue  # the language itself is the corpus test's fact
        slips += [f"{entry.source}:{entry.id}: {name}: {line}" for name, line in slips_in(answer["text"])]
    assert not slips, f"{len(slips)} slips in Chinese answers:\n" + "\n".join(slips[:60])


@pytest.mark.parametrize(
    ("line", "slip"),
    [
        ("🧰 运行时：verl.", "English full stop at a line's end"),
        ("🎯 GRPO: policy 49.8 GiB · reference 4.7 GiB。", "English colon after a label"),
        ("假设：bf16，batch 1，512 tokens。", "English plural 'tokens'"),
        ("🧰 运行时：Ollama (GGUF Q4_K_M，上下文 4,096 token，KV f16)。", "ASCII brackets around Chinese"),
        ("带宽 120 GB/s。 可用 llama.cpp", "space after a Chinese full stop"),
        ("🎯 GRPO：policy 49.8 GiB", "RL roles in English"),
        ("单卡能装下的最大模型 （稠密模型）", "space before a full-width bracket"),
        ("每天 10 万 次请求，服务要全天运行", "space after 万 or 亿"),
    ],
)
def test_each_slip_is_caught(line: str, slip: str) -> None:
    assert (slip, line) in slips_in(line)


@pytest.mark.parametrize(
    "line",
    [
        "🧰 运行时：verl。",
        "每卡约需 20.9 GiB，卡上 24.0 GiB，余量 13%。",
        "⚡ 单路约 56 token/s，7 路并发合计约 379 token/s。",
        "🧰 运行时：Ollama（GGUF Q4_K_M，上下文 4,096 token，KV f16）。",
        "📋 默认假设：bf16、batch 1、2,048 token、LoRA rank 16。",
        "每天 10 万次请求，约 1.2 万 token。",
        "▶️ vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 2048.",
    ],
)
def test_chinese_as_written_passes(line: str) -> None:
    assert slips_in(line) == []
