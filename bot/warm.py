"""Load what answers need when a long-running process starts, once per process."""

from __future__ import annotations

import gc
from functools import cache

import core.warm
from bot.render import compile_all

# Python collects its youngest generation every 700 allocations, a default for small scripts. An answer
# allocates thousands of short-lived objects and its caches keep some, so that meant ~5 collections per
# answer and, every tenth, a sweep over what the caches hold: over 750 new questions, 14% of the answers' CPU
# (0.9 s of 5.3 s) and pauses of 30–170 ms on whichever answer triggered them. At 20,000: 0.16 s, pauses
# under 65 ms, the same peak memory (most garbage is freed by reference counting, not by the collector).
GC_YOUNG_THRESHOLD = 20_000


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
