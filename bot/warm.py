"""Load what answers need when a long-running process starts, once per process."""

from __future__ import annotations

import gc
from functools import cache

import core.warm
from bot.render import environment


@cache
def warm() -> None:
    """Core's tables (core.warm) and every template compiled, before the first question arrives.

    Without it the first ~20 answers after a start each paid for what they were first to need (a template
    compiled, a name table built: 100–400 ms) while later answers took ~10 ms; the bot and the console chat
    call this from the Application's post_init (bot/app.py), so the first user waits no longer than the
    hundredth. Once per process: tests build many Applications, and the templates never change while it
    runs (auto_reload is off). `gpufit ask` answers once and does not call it (it loads only what it needs).
    """
    core.warm.warm()
    templates = environment()
    for name in templates.list_templates(extensions=["j2"]):
        templates.get_template(name)
    # What was just loaded lives as long as the process: out of the cyclic collector's sight, so that its
    # first full collection (tens of milliseconds, on whichever answer happens to trigger it) and every
    # later one do not walk the tables and templates again.
    gc.freeze()
