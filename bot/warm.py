"""Load what answers need when a long-running process starts, once per process."""

from __future__ import annotations

import gc
from functools import cache
from typing import Any

import core.warm
from bot.answer.service import answer_message
from bot.hub.lookup import import_hub_client
from bot.render import compile_all

# Asked once at start, in both languages and of each answer kind, as a group asks (the compact form too): what
# an answer is first to need beyond the tables and templates is paid here, not by the first users. Measured
# (answer_message in a thread, after the tables and templates): the first answer after a start took 22-38 ms
# of CPU, the later ones 7-11 ms; it was the first to build a regex (the runtime names' screened pattern),
# read jobs.toml, validate a few pydantic models and run the templates' macros. With these asked first
# (~130 ms at start), the first ones after them cost what later ones do. None is a question users are
# likely to send word for word, nor one of the benchmarks' (tests/test_bench_question_caches.py).
REHEARSAL = (
    "can I full fine-tune mistral 7b on 2x a6000?",
    "用一张4090跑qwen2.5 14b推理，32k上下文",
    "cheapest card to serve llama 3.1 70b at int4",
    "how many H100s to train a 34b model with LoRA?",
    "stable diffusion xl 1024x1024 on a 3060 12GB",
    "4090 vs 3090 for qwen2.5 7b inference",
    "两张3090能做QLoRA微调130亿参数的模型吗",
    "hi there bot",
)

# How the garbage collector is set for a process that answers many people. What an answer allocates is
# nearly all freed by reference counting; what survives a young collection is nearly all cache entries
# (answers, parses, estimates: ~500 objects per new question; over 750 new questions the collector found
# ~1,300 objects of cyclic garbage in all). Left in the older generations, those survivors were scanned
# again and again: a middle collection over them took ~210-240 ms of CPU once per ~750 new questions, and
# Python's default young threshold (700) cost 14% of the answers' CPU. So the survivors of each young or
# middle collection are frozen (gc.freeze: never scanned again, still freed by reference counting when a
# cache drops them), and a young collection only ever scans what is new since the last one: its cost is
# proportional to that, so a small threshold shortens the pauses without costing more in all. At 5,000:
# pauses under 10 ms (at 20,000 unfrozen: ~25 ms, and the 200 ms middle ones), ~0.4 ms per new question.
GC_YOUNG_THRESHOLD = 5_000
# Freezing stops after this many young collections (~3 million objects, about what full caches hold), and
# the young threshold goes back up to what suits unfrozen generations: a reference cycle that was alive at a
# freeze and dies later is never collected, and the bound keeps that to a fixed, small amount. With full
# caches a process keeps few new objects, so collections are rare by then. Counted here, because
# gc.get_freeze_count() walks every frozen object (it tripled a young collection's cost).
GC_FREEZES = 600
GC_YOUNG_THRESHOLD_UNFROZEN = 20_000
_freezes = [0]


@cache
def warm() -> None:
    """Core's tables (core.warm), every template compiled and a few questions answered (`rehearse`), before
    the first question arrives; then the garbage collector set for a process that answers many people
    (above).

    Without it the first ~20 answers after a start each paid for what they were first to need (a template
    compiled, a name table built: 100–400 ms) while later answers took ~10 ms; the bot and the console chat
    call this from the Application's post_init (bot/app.py), so the first user waits no longer than the
    hundredth. Once per process: tests build many Applications, and the templates never change while it
    runs (auto_reload is off). `gpufit ask` answers once and does not call it (it loads only what it needs).
    """
    core.warm.warm()
    compile_all()
    import_hub_client()  # the Hub client, imported by the first lookup otherwise (inside someone's answer)
    rehearse()
    # What was just loaded lives as long as the process: out of the cyclic collector's sight, so that its
    # first full collection (tens of milliseconds, on whichever answer happens to trigger it) and every
    # later one do not walk the tables and templates again.
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    gc.callbacks.append(_freeze_survivors)


def rehearse() -> None:
    """Answer REHEARSAL (no Hub lookup, no chat context), then forget the results core cached for those
    questions' inputs (core.warm.clear_question_caches; the tables stay): what is left warm is what any
    answer needs the first time, and no later question gets any part of its answer from the rehearsal."""
    for question in REHEARSAL:
        answer_message(question, compact=True).compact.rendered()
    core.warm.clear_question_caches()


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    """After a young or middle collection, its survivors join the frozen objects (GC_FREEZES times)."""
    if phase != "stop" or info["generation"] == 2:
        return
    gc.freeze()
    _freezes[0] += 1
    if _freezes[0] >= GC_FREEZES:
        gc.callbacks.remove(_freeze_survivors)
        gc.set_threshold(GC_YOUNG_THRESHOLD_UNFROZEN, *gc.get_threshold()[1:])
