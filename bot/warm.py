"""Load what answers need when a long-running process starts, once per process."""

from __future__ import annotations

import gc
from functools import cache
from typing import Any

import core.warm
from bot.hub.lookup import import_hub_client
from bot.render import compile_all

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
    """Core's tables (core.warm) and every template compiled, before the first question arrives; then the
    garbage collector set for a process that answers many people (above).

    Without it the first ~20 answers after a start each paid for what they were first to need (a template
    compiled, a name table built: 100–400 ms) while later answers took ~10 ms; the bot and the console chat
    call this from the Application's post_init (bot/app.py), so the first user waits no longer than the
    hundredth. Once per process: tests build many Applications, and the templates never change while it
    runs (auto_reload is off). `gpufit ask` answers once and does not call it (it loads only what it needs).
    """
    core.warm.warm()
    compile_all()
    import_hub_client()  # the Hub client, imported by the first lookup otherwise (inside someone's answer)
    # What was just loaded lives as long as the process: out of the cyclic collector's sight, so that its
    # first full collection (tens of milliseconds, on whichever answer happens to trigger it) and every
    # later one do not walk the tables and templates again.
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    gc.callbacks.append(_freeze_survivors)


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    """After a young or middle collection, its survivors join the frozen objects (GC_FREEZES times)."""
    if phase != "stop" or info["generation"] == 2:
        return
    gc.freeze()
    _freezes[0] += 1
    if _freezes[0] >= GC_FREEZES:
        gc.callbacks.remove(_freeze_survivors)
        gc.set_threshold(GC_YOUNG_THRESHOLD_UNFROZEN, *gc.get_threshold()[1:])
