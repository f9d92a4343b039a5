"""Every table an answer reads, loaded in one go: for processes that answer many people."""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any

from core.advisor.card_advice import advice_rules
from core.advisor.largest_model import preferred_examples
from core.advisor.scenarios import load_scenarios
from core.catalog import load_catalog
from core.cost import price_book_in_force
from core.estimator.calibration import load_calibration
from core.parser.card_names import find_cards
from core.parser.market import read_platform
from core.parser.model_names import find_model
from core.parser.unread import read_unknown_model
from core.parser.vision import find_vision_model
from core.platforms import load_platforms
from core.registry import load_registry
from core.speed import load_speed_constants
from core.speed.calibration import coverage as speed_coverage
from core.vision.defaults import load_vision_constants
from core.vision.registry import load_vision_registry


def warm() -> None:
    """Load the card catalog, the model registries (language and vision), the price book, the calibration,
    speed and vision constants, the scenario and card-advice tables and the preferred example models, and
    compile the parser's name tables, now instead of on the first question that needs each.

    Core stays lazy on purpose: importing it reads nothing, and a one-shot `gpufit ask` loads only what its
    one answer needs. A long-running process (the bot, the console chat) calls this once at start, so that
    its first user does not wait for the tables (hundreds of milliseconds) while the hundredth does not.
    Every loader here is cached, so a second call costs nothing; a missing or broken price file is left to
    the answers, which say so (`price_book_in_force` returns None).
    """
    load_catalog()
    load_registry()
    load_calibration()
    load_speed_constants()
    speed_coverage()  # the published speed figures: where each runtime and card family was calibrated
    price_book_in_force()
    load_platforms()  # the rental platforms named in questions (data/platforms.toml)
    load_scenarios()
    advice_rules()
    preferred_examples()
    load_vision_registry()
    load_vision_constants()
    find_cards("")  # builds and compiles the card-name table (every alias of every card)
    find_model("")  # the same for model names and the size grammar
    find_vision_model("")  # and for vision model names
    read_platform("")  # and for platform names
    read_unknown_model("run plonk", follow_up=True)  # the serving engines' words of the model's slot


def question_caches() -> list[Any]:
    """Bounded caches (`lru_cache(maxsize=N)`) in loaded core modules that remember results for a question's
    inputs: cleared, a question is new to the process again.

    Left warm, as a running bot has them: the data loaders, unbounded (`@cache`: catalog, registry,
    templates) or `lru_cache(maxsize=1)` without parameters (load_runtimes, load_job_constants): they read
    a table once per process, whatever is asked, so clearing them between questions would charge each
    answer a reload that a real bot never pays.
    """
    found = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("core") or module is None:
            continue
        for value in vars(module).values():
            info = getattr(value, "cache_info", None)
            if (
                isinstance(value, functools._lru_cache_wrapper)
                and info is not None
                and info().maxsize is not None
                and _takes_inputs(value)
                and value not in found
            ):
                found.append(value)
    return found


def _takes_inputs(cached: Any) -> bool:
    """Whether a cached function has parameters (a loader has none: it remembers one table, not answers)."""
    return bool(inspect.signature(cached.__wrapped__).parameters)


def clear_question_caches() -> int:
    caches = question_caches()
    for cache in caches:
        cache.cache_clear()
    return len(caches)
