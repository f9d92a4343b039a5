"""Every answer gpufit gives to a fixed, large set of questions, written to one file: the proof that a
performance change left every rendered answer byte-identical (dump before, dump after, `diff` the two).

The questions: every turn of the answer corpus (tests/corpus/answers*.toml, follow-ups with the previous
turn's query), the parser corpus's texts (tests/corpus/phrasings.toml), the benchmark mix
(benchmarks.questions: the 200 and the fresh-start bench's generated ones), each answered as the message's
own language, in English and in Chinese, and once more in a chat whose currency is CNY. Each answer is
written whole: HTML, compact form, summary, title, buttons and `gpufit ask --json`; then `gpufit estimate
--json` and `gpufit plan --json` for a few jobs. Per-question caches are cleared before each question, as
for a question new to the process.

`python -m benchmarks.answers_dump OUT [--limit N]`
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, clear_question_caches

CORPUS = ROOT / "tests" / "corpus"
ESTIMATES = (
    ["--model", "llama-2-13b", "--task", "lora", "--card", "4090"],
    ["--model", "llama-3.1-70b", "--task", "full", "--card", "h100", "--gpus", "8"],
    ["--model", "qwen2.5-72b", "--task", "inference", "--card", "l20", "--gpus", "2"],
    ["--model", "qwen2.5-7b", "--task", "qlora", "--card", "t4"],
    ["--params", "13", "--task", "inference", "--card", "3090"],
)
PLANS = (
    "cheapest card to serve qwen2.5-7b",
    "fastest way to fine-tune llama 3.1 8b",
    "最便宜的方案 全参微调 qwen2.5 14b",
    "train llama 3.1 70b with lora on 1B tokens, cheapest",
)


def conversations() -> list[tuple[str, ...]]:
    """Each corpus entry's turns, then one-turn texts from the parser corpus and the benchmarks."""
    from benchmarks.questions import QUESTIONS, fresh_questions

    found: list[tuple[str, ...]] = []
    for path in sorted(CORPUS.glob("answers*.toml")):
        with path.open("rb") as handle:
            for raw in tomllib.load(handle)["entry"]:
                q = raw["q"]
                found.append((q,) if isinstance(q, str) else tuple(q))
    with (CORPUS / "phrasings.toml").open("rb") as handle:
        found += [(case["text"],) for case in tomllib.load(handle)["case"]]
    found += [(q.text,) for q in QUESTIONS]
    found += [(text,) for text in fresh_questions(750)]
    return list(dict.fromkeys(found))


def _answer_record(reply: Any) -> dict[str, Any]:
    return {
        "kind": str(reply.kind),
        "html": reply.html,
        "compact": reply.compact_html,
        "summary": reply.summary,
        "title": reply.title,
        "buttons": [[b.model_dump(mode="json") for b in row] for row in reply.buttons],
        "json": reply.to_json(),
    }


def dump(out: Path, limit: int | None) -> int:
    from bot.answer import ChatContext, answer_message
    from bot.cli import main as cli_main
    from core.query import Currency

    contexts: list[tuple[str, dict[str, Any]]] = [
        ("own", {}),
        ("en", {"lang": "en"}),
        ("zh", {"lang": "zh"}),
        ("cny", {"currency": Currency.CNY}),
    ]
    written = 0
    with out.open("w", encoding="utf-8") as handle:
        for turns in conversations()[:limit]:
            for label, extra in contexts:
                previous = previous_vision = None
                for index, text in enumerate(turns):
                    clear_question_caches()
                    context = ChatContext(previous=previous, previous_vision=previous_vision, **extra)
                    reply = answer_message(text, context)
                    record = {"q": text, "turn": index, "context": label} | _answer_record(reply)
                    handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True, default=str) + "\n")
                    if reply.query is not None or reply.vision is not None:  # as bot/store.py keeps them
                        previous, previous_vision = reply.query or previous, reply.vision
                    written += 1
        for argv in [["estimate", *a, "--json"] for a in ESTIMATES] + [["plan", q, "--json"] for q in PLANS]:
            clear_question_caches()
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                code = cli_main(argv)
            handle.write(json.dumps({"argv": argv, "code": code, "out": buffer.getvalue()}) + "\n")
            written += 1
    return written


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    args = parser.parse_args()
    print(f"{dump(args.out, args.limit)} answers written to {args.out}", file=sys.stderr)
