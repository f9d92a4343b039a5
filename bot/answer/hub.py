"""Answers for models outside the built-in list: Hub ids, URLs and unknown names looked up first.

The lookup is I/O (bot/hub), so this runs in a worker thread of the bot and in the command line; what it
finds is taught to the registry (core.registry.Registry.learn) and the question is answered as usual, with
a line saying where the figures came from — or, when the lookup failed, why (gated, not found, timeout,
offline), before the answer the message gets without it.
"""

from __future__ import annotations

import logging

from bot.answer.model import Answer, Lang
from bot.hub.cache import SqliteModelCache
from bot.hub.lookup import HubLookup, LookupResult
from bot.hub.reference import HubRef, find_reference
from bot.render import render
from core.answer_kind import AnswerKind
from core.parser import Parsed
from core.query import Query
from core.registry import ModelArch, load_registry

log = logging.getLogger(__name__)


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


# Kinds whose question names one model: a looked-up model replaces the name the parser could not place.
_MODEL_KINDS = (AnswerKind.FIT, AnswerKind.PLAN, AnswerKind.CARDS_NEEDED, AnswerKind.CLARIFY)

# What a lookup tells the answer: shown as a note above it when the model was not learned or came by a
# fallback (a mirror, ModelScope, the cache).
LookupNote = LookupResult


def resolve_models(text: str, parsed: Parsed, lookup: HubLookup) -> tuple[Parsed | None, LookupNote | None]:
    """The parsed message with a model the registry lacks looked up on the Hub (blocking I/O) and learned.

    (parsed with the learned model, the lookup when its note is worth showing), or (None, the lookup) when
    it was looked up but not learned (gated, not found, offline), or (None, None) when there was nothing to
    look up (a registry model, an image job, no model named)."""
    if parsed.vision is not None:
        return None, None  # an image job (diffusers, ViT): not a language model to look up
    ref, result = find_and_look_up(text, parsed, lookup)
    if ref is None or result is None:
        return None, None
    model = learn(result)
    if model is None:
        return None, result
    note = result if result.fallback else None
    query = parsed.query
    if parsed.intent not in _MODEL_KINDS and query is not None:
        return None, note  # about something else (a card, a comparison): answered as asked
    query = (query or Query(model=model.id)).model_copy(update={"model": model.id, "params_b": None})
    # 'which model?' was asked because of the name alone: the kind the message asked for is on its query
    intent = query.answer_kind if parsed.intent is AnswerKind.CLARIFY else parsed.intent
    update = {"intent": intent, "query": query, "unknown_model": None, "clarify": None}
    return parsed.model_copy(update=update), note


def with_lookup_note(reply: Answer, lang: Lang, result: LookupNote) -> Answer:
    """The answer, under a line saying where the model's figures came from or why they could not be had."""
    return _with_note(reply, lang, result)


def _with_note(reply: Answer, lang: Lang, result: LookupResult) -> Answer:
    note = render(
        "hub_lookup",
        lang,
        status=result.status.value,
        repo=result.ref.repo_id,
        site=result.ref.site,
        date=result.fetched_at.date().isoformat() if result.fetched_at else "",
    )
    lookup = {"status": result.status.value, "repo": result.ref.repo_id}
    facts = reply.lazy_facts.with_more({"hub_lookup": lookup})
    return reply.model_copy(
        update={
            "html": f"{note}\n\n{reply.html}",
            "compact": reply.compact.with_html(lambda compact: f"{note}\n{compact}"),
            "lazy_facts": facts,
        }
    )


__all__ = [
    "LookupNote",
    "find_and_look_up",
    "learn",
    "learn_cached",
    "resolve_models",
    "with_lookup_note",
]
