"""Load what answers need when a long-running process starts, once per process."""

from __future__ import annotations

import gc
from functools import cache
from typing import Any

import core.warm
from bot.render import compile_all

# Python collects its youngest generation every 700 allocations, a default for small scripts. An answer
# allocates thousands of short-lived objects and its caches keep some, so that meant ~5 collections per
# answer and, every tenth, a sweep over what the caches hold: over 750 new questions, 14% of the answers' CPU
# (0.9 s of 5.3 s) and pauses of 30–170 ms on whichever answer triggered them. At 20,000: 0.16 s, pauses
# under 65 ms, the same peak memory (most garbage is freed by reference counting, not by the collector).
GC_YOUNG_THRESHOLD = 20_000
# What survives a young collection while the caches fill is almost all cache entries (answers, estimates,
# parses: ~500 objects kept per new question), and nearly nothing the collector frees (over 750 new
# questions it found ~1,300 objects of cyclic garbage in 19 young collections and 56 in its one middle
# one). Left in the generations, those survivors were scanned again and again: each young collection
# took ~16 ms of CPU and the middle one over 200 ms, on whichever answer triggered it (7% of the answers'
# CPU, and the worst of the latency tail). So each young or middle collection's survivors are frozen
# too, this many times (each freezes at most about GC_YOUNG_THRESHOLD objects: ~3 million in all, about
# what the full caches hold). Frozen objects are still freed by reference counting when a cache drops them;
# only a reference cycle that was alive at a freeze and dies later is never collected, which this bound
# keeps to a fixed, small amount. Past it the collector works as before (with full caches a process keeps
# few new objects, so collections are rare). Counted here: gc.get_freeze_count() walks every frozen object.
GC_FREEZES = 150
_freezes = [0]


@cache
def warm() -> None:
    """Core's tables (core.warm) and every template compiled, before the first question arrives; then the
    garbage collector set for a process that answers many people (below).

    Without it the first ~20 answers after a start each paid for what they were first to need (a template
    compiled, a name table built: 100–400 ms) while later answers took ~10 ms; the bot and the console chat
    call this from the Application's post_init (bot/app.py), so the first user waits no longer than the
    hundredth. Once per process: tests build many Applications, and the templates never change while it
    runs (auto_reload is off). `gpufit ask` answers once and does not call it (it loads only what it needs).
    """
    core.warm.warm()
    compile_all()
    # What was just loaded lives as long as the process: out of the cyclic collector's sight, so that its
    # first full collection (tens of milliseconds, on whichever answer happens to trigger it) and every
    # later one do not walk the tables and templates again.
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    gc.callbacks.append(_freeze_survivors)


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    """After a young or middle collection, its survivors join the frozen objects (GC_FREEZES)."""
    if phase != "stop" or info["generation"] == 2:
        return
    gc.freeze()
    _freezes[0] += 1
    if _freezes[0] >= GC_FREEZES:
        gc.callbacks.remove(_freeze_survivors)
