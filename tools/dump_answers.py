"""Every answer gpufit gives to the questions it is tested and benchmarked on, as JSON lines: the proof that
a change meant to make answering cheaper changed no answer (run before and after, diff the files).

Questions: the answer corpus (tests/corpus/answers*.toml, every turn of every chat, each turn's query the
next turn's previous), the parser corpus (tests/corpus/phrasings.toml, with its previous query) and the
benchmark mix (benchmarks/questions.py, with its previous query); each answered in the message's own
language, in English and in Chinese (a chat's /lang). With --buttons, every button under each answer in the
message's own language is pressed too (`apply_action` then `answer_stored`, as the bot does). With --plan,
`gpufit plan` (text and --json) for the benchmark's plan questions. Each line is `gpufit ask --json` of one
answer (html, compact_html, text, buttons and facts included) plus its chart's figures.

    .venv/bin/python tools/dump_answers.py --buttons --plan --out /tmp/before.jsonl
    ... change ...
    .venv/bin/python tools/dump_answers.py --buttons --plan --out /tmp/after.jsonl
    cmp /tmp/before.jsonl /tmp/after.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.questions import QUESTIONS  # noqa: E402
from bot.answer import Answer, ChatContext, answer, answer_stored, apply_action  # noqa: E402
from core.query import Query  # noqa: E402

LANGS: tuple[str | None, ...] = (None, "en", "zh")


def corpus_chats() -> Iterator[tuple[str, tuple[str, ...]]]:
    """(id, turns) of every answer-corpus entry."""
    for path in sorted((ROOT / "tests" / "corpus").glob("answers*.toml")):
        with path.open("rb") as handle:
            for raw in tomllib.load(handle)["entry"]:
                q = raw["q"]
                yield f"{path.stem}:{raw['id']}", (q,) if isinstance(q, str) else tuple(q)


def phrasings() -> Iterator[tuple[str, str, Query | None]]:
    with (ROOT / "tests" / "corpus" / "phrasings.toml").open("rb") as handle:
        cases = tomllib.load(handle)["case"]
    for index, case in enumerate(cases):
        previous = case.get("previous")
        yield f"phrasings:{index}", case["text"], Query.model_validate(previous) if previous else None


def line(key: str, reply: Answer) -> str:
    record: dict[str, Any] = {"key": key, **reply.to_json()}
    record["chart"] = reply.chart.model_dump(mode="json") if reply.chart is not None else None
    record["filled"] = reply.filled_query.model_dump(mode="json") if reply.filled_query else None
    return json.dumps(record, ensure_ascii=False, sort_keys=True, default=str)


def pressed(key: str, reply: Answer, lang: str) -> Iterator[str]:
    """Each button under `reply` pressed, as the bot does it."""
    if reply.query is None:
        return
    for row in reply.buttons:
        for button in row:
            if button.action.startswith("ask="):
                yield line(f"{key} ask {button.action}", answer(button.action[4:], previous=reply.query))
                continue
            try:
                changed = apply_action(reply.query, button.action)
            except ValueError as err:
                yield json.dumps({"key": f"{key} {button.action}", "error": str(err)}, ensure_ascii=False)
                continue
            yield line(f"{key} {button.action}", answer_stored(changed, ChatContext(lang=lang)))


def dump(buttons: bool, plan: bool) -> Iterator[str]:
    for key, turns in corpus_chats():
        for lang in LANGS:
            previous: Query | None = None
            previous_vision = None
            for turn, text in enumerate(turns):
                reply = answer(text, previous=previous, lang=lang, previous_vision=previous_vision)
                name = f"{key}#{turn} {lang}"
                yield line(name, reply)
                if buttons and lang is None:
                    yield from pressed(name, reply, reply.lang)
                previous = reply.query or previous
                previous_vision = reply.vision or previous_vision
    for key, text, previous in phrasings():
        for lang in LANGS:
            yield line(f"{key} {lang}", answer(text, previous=previous, lang=lang))
    for index, question in enumerate(QUESTIONS):
        for lang in LANGS:
            reply = answer(question.text, previous=question.previous, lang=lang)
            name = f"bench:{index} {lang}"
            yield line(name, reply)
            if buttons and lang is None:
                yield from pressed(name, reply, reply.lang)
    if plan:
        from bot.cli import plan_command

        for index, question in enumerate(QUESTIONS):
            if question.category != "plan":
                continue
            for as_json in (False, True):
                out = io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                    code = plan_command(question.text, as_json=as_json, lang=None)
                yield json.dumps({"key": f"plan:{index} {as_json}", "code": code, "out": out.getvalue()})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the JSON-lines file to write")
    parser.add_argument("--buttons", action="store_true", help="press every button too")
    parser.add_argument("--plan", action="store_true", help="`gpufit plan` for the plan questions too")
    args = parser.parse_args()
    digest = hashlib.sha256()
    count = 0
    start = time.process_time()
    with Path(args.out).open("w", encoding="utf-8") as out:
        for text in dump(args.buttons, args.plan):
            out.write(text + "\n")
            digest.update(text.encode())
            count += 1
    print(f"{count} answers, sha256 {digest.hexdigest()[:16]}, {time.process_time() - start:.1f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
