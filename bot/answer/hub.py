"""Answers for models outside the built-in list: Hub ids, URLs and unknown names looked up first.

The lookup is I/O (bot/hub), so this runs in a worker thread of the bot and in the command line; what it
finds is taught to the registry (core.registry.Registry.learn) and the question is answered as usual, with
a line saying where the figures came from — or, when the lookup failed, why (gated, not found, timeout,
offline), before the answer the message gets without it.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.answer import answer
from bot.answer.common import to_lang
from bot.answer.model import Answer, Lang
from bot.hub.cache import SqliteModelCache
from bot.hub.lookup import HubLookup, LookupResult
from bot.hub.reference import HubRef, find_reference
from bot.render import render
from core.parser import Intent, Parsed, detect_lang, parse
from core.query import Query
from core.registry import ModelArch, load_registry
from core.vision.job import VisionJob

log = logging.getLogger(__name__)

_FIT_INTENTS = (Intent.FIT, Intent.PLAN, Intent.CLARIFY)


def learn(result: LookupResult) -> ModelArch | None:
    """The looked-up description, known to the registry under its id (dated), or None."""
    if result.model is None:
        return None
    dated = result.model.model_copy(
        update={"fetched_on": result.fetched_at.date().isoformat() if result.fetched_at else ""}
    )
    return load_registry().learn(dated)


def learn_cached(cache: SqliteModelCache) -> int:
    """Teach the registry every model the bot looked up before; how many."""
    registry = load_registry()
    count = 0
    for entry in cache.entries():
        dated = entry.model.model_copy(
            update={"origin": "cache", "fetched_on": entry.fetched_at.date().isoformat()}
        )
        registry.learn(dated)
        count += 1
    return count


def find_and_look_up(
    text: str, parsed: Parsed, lookup: HubLookup
) -> tuple[HubRef | None, LookupResult | None]:
    """A Hub id / URL in the text, else the unknown model name searched on the Hub; then its lookup."""
    ref = find_reference(text)
    if ref is not None:
        match = load_registry().resolve(ref.repo_id)
        if match is not None and match.model.origin == "registry":
            return None, None  # a shipped model typed as its repo id: the registry has it exactly
    elif parsed.unknown_model:
        found = lookup.search_or_failure(parsed.unknown_model)
        if isinstance(found, LookupResult):
            return found.ref, found  # the Hub could not be asked: the answer says so
        ref = found
    if ref is None:
        return None, None
    return ref, lookup.lookup(ref)


def answer_looking_up(
    text: str,
    *,
    lookup: HubLookup | None,
    previous: Query | None = None,
    lang: str | None = None,
    previous_vision: VisionJob | None = None,
) -> Answer:
    """`answer()`, with a model the registry lacks looked up on the Hub first. Never raises."""
    plain = answer(text, previous=previous, lang=lang, previous_vision=previous_vision)
    if lookup is None:
        return plain
    chosen: Lang = to_lang(lang) if lang else to_lang(detect_lang(text))
    try:
        parsed = parse(text, previous=previous, previous_vision=previous_vision)
        if parsed.vision is not None:
            return plain  # an image job (diffusers, ViT): not a language model to look up
        ref, result = find_and_look_up(text, parsed, lookup)
        if ref is None or result is None:
            return plain
        model = learn(result)
        if model is None:
            return _with_note(plain, chosen, result)
        reply = _answer_for(text, parsed, model, previous, chosen)
        return _with_note(reply, chosen, result) if result.fallback else reply
    except Exception:
        log.exception("Hub lookup answer failed for %r", text[:200])
        return plain


def _answer_for(text: str, parsed: Parsed, model: ModelArch, previous: Query | None, lang: Lang) -> Answer:
    """The question answered for the learned model: its name and size replace what the parser read."""
    from bot.answer import answer_query

    query = parsed.query
    if parsed.intent not in _FIT_INTENTS and query is not None:
        return answer(text, previous=previous, lang=lang)
    if query is None:
        query = Query(model=model.id)
    update: dict[str, Any] = {"model": model.id, "params_b": None}
    return answer_query(query.model_copy(update=update), lang=lang)


def _with_note(reply: Answer, lang: Lang, result: LookupResult) -> Answer:
    note = render(
        "hub_lookup",
        lang,
        status=result.status.value,
        repo=result.ref.repo_id,
        site=result.ref.site,
        date=result.fetched_at.date().isoformat() if result.fetched_at else "",
    )
    facts = reply.facts | {"hub_lookup": {"status": result.status.value, "repo": result.ref.repo_id}}
    return reply.model_copy(
        update={
            "html": f"{note}\n\n{reply.html}",
            "compact_html": f"{note}\n{reply.compact_html}",
            "facts": facts,
        }
    )


__all__ = ["answer_looking_up", "find_and_look_up", "learn", "learn_cached"]
