"""The one answer service: every entry point (private chats, groups, inline mode, buttons, the console chat,
`gpufit ask`) turns a message or a stored query into an `Answer` here, and only here.

The flow, once per message: parse → resolve the models it names (registry; a model the registry lacks is
looked up on the Hub when a lookup is given — I/O, so callers on the event loop run this in a worker
thread) → the chat's context (language, currency, previous question, previous vision job) as *inputs* → the
answer kind's row of `bot/answer/kinds_table.py` (its advisor in core, its view) → rendered once. No entry
point re-runs an answer afterwards to change its currency or language.

Answers never raise: a failure becomes a friendly error answer in the user's language and goes to the log.
Pure answers (no Hub lookup) are cached per (message, context, price book): a team chat asks the same few
questions again and again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from functools import lru_cache

from bot.answer.clarify import (
    clarify_answer,
    error_answer,
    rejected_answer,
    unknown_card_answer,
    unknown_model_answer,
)
from bot.answer.common import to_lang
from bot.answer.hub import LookupNote, resolve_models, with_lookup_note
from bot.answer.kinds_table import KINDS, rebuild
from bot.answer.model import Answer, Lang, TypedNames
from bot.answer.vision import vision_fit_answer
from bot.hub.lookup import HubLookup
from bot.render import render
from core.answer_kind import QUERY_KINDS, AnswerKind
from core.cost import PriceBook, answer_pricing, price_book_in_force, price_book_problem, price_file
from core.estimator import UnknownCardError, UnknownModelError
from core.parser import Parsed, parse
from core.query import Currency, Query, Task
from core.registry import load_registry
from core.vision.job import VisionJob

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChatContext:
    """What the chat knows before the message: inputs to the answer, never applied to it afterwards."""

    lang: str | None = None  # the user's /lang or the group's language; None: the message's own language
    currency: Currency | None = None  # the group's /settings currency, for a question that names none
    previous: Query | None = None  # the last question here, for follow-ups ("那L20呢")
    previous_vision: VisionJob | None = None  # the last image / video / speech job, for its follow-ups


NO_CONTEXT = ChatContext()


def answer_message(
    text: str, context: ChatContext = NO_CONTEXT, *, lookup: HubLookup | None = None, compact: bool = False
) -> Answer:
    """Answer one message in its chat's context; with `lookup`, models the registry lacks are looked up on
    the Hub first (blocking I/O: off the event loop). With `compact`, the caller sends the compact form
    (groups, inline results): it is rendered here too, in the caller's worker thread, rather than when it
    is first read (see CompactForm: a private chat never needs it). Never raises."""
    reply = _answer_message(text, context, lookup)
    if compact:
        reply.compact.rendered()
    return reply


def _answer_message(text: str, context: ChatContext, lookup: HubLookup | None) -> Answer:
    if lookup is None:
        return _answer_text(text, context, price_book_in_force())
    lang = _lang(context, None, text)
    try:
        parsed = _parse(text, context.previous, context.previous_vision)
        lang = _lang(context, parsed, text)
        resolved, note = resolve_models(text, parsed, lookup)
        if (
            resolved is None
        ):  # nothing learned: the answer the message gets without it (and why, if looked up)
            reply = _answer_text(text, context, price_book_in_force())
        else:
            book = price_book_in_force()
            with answer_pricing(book):
                reply = _noting_missing_prices(_answer_parsed(resolved, lang, context.currency), book)
        return with_lookup_note(reply, lang, note) if note is not None else reply
    except Exception:
        log.exception("answer with Hub lookup failed for %r", text[:200])
        return error_answer(lang, "internal")


def answer_stored(query: Query, context: ChatContext = NO_CONTEXT) -> Answer:
    """Rebuild the answer a stored or edited query stands for (buttons, Details ▸): the same kind of answer
    (a plan stays a plan), with the chat's currency as input. Never raises."""
    lang = to_lang(context.lang or "en")
    return _answer_query(
        _with_currency(query, context.currency, query.answer_kind), lang, price_book_in_force()
    )


def answer(
    text: str,
    *,
    previous: Query | None = None,
    lang: str | None = None,
    previous_vision: VisionJob | None = None,
) -> Answer:
    """`answer_message` without a Hub lookup or a chat currency (tests, benchmarks, examples)."""
    return answer_message(text, ChatContext(lang=lang, previous=previous, previous_vision=previous_vision))


def answer_looking_up(
    text: str,
    *,
    lookup: HubLookup | None,
    previous: Query | None = None,
    lang: str | None = None,
    previous_vision: VisionJob | None = None,
) -> Answer:
    """`answer_message` with a Hub lookup and no chat currency (the command line, tests)."""
    context = ChatContext(lang=lang, previous=previous, previous_vision=previous_vision)
    return answer_message(text, context, lookup=lookup)


def answer_query(query: Query, *, lang: str) -> Answer:
    """`answer_stored` in a language, without a chat currency."""
    return answer_stored(query, ChatContext(lang=lang))


# -- the flow ----------------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _parse(text: str, previous: Query | None, previous_vision: VisionJob | None) -> Parsed:
    return parse(text, previous=previous, previous_vision=previous_vision)


def _lang(context: ChatContext, parsed: Parsed | None, text: str) -> Lang:
    if context.lang:
        return to_lang(context.lang)
    if parsed is not None:
        return to_lang(parsed.lang)
    from core.parser import detect_lang

    return to_lang(detect_lang(text))


@lru_cache(maxsize=4096)
def _answer_text(text: str, context: ChatContext, _book: PriceBook | None) -> Answer:
    lang = _lang(context, None, text)
    try:
        parsed = _parse(text, context.previous, context.previous_vision)
        lang = _lang(context, parsed, text)
        with answer_pricing(_book):  # the whole answer from the book it is cached under
            return _noting_missing_prices(_answer_parsed(parsed, lang, context.currency), _book)
    except Exception:
        log.exception("answer failed for %r", text[:200])
        return error_answer(lang, "internal")


@lru_cache(maxsize=4096)
def _answer_query(query: Query, lang: Lang, _book: PriceBook | None) -> Answer:
    try:
        with answer_pricing(_book):
            return _noting_missing_prices(_rebuild(query, lang), _book)
    except Exception:
        log.exception("answer_query failed for %s", query.model_dump_json())
        return error_answer(lang, "internal", query=query)


_PRICED_KINDS = frozenset({AnswerKind.FIT, AnswerKind.PLAN, AnswerKind.COMPARE, AnswerKind.CARDS_NEEDED})


def _noting_missing_prices(reply: Answer, book: object) -> Answer:
    """An answer that would show prices says why it has none when the price file cannot be read."""
    if book is not None or reply.kind not in _PRICED_KINDS:
        return reply
    problem = price_book_problem() or ""
    note = render("prices_missing", reply.lang, file=str(price_file()), problem=problem)
    return reply.model_copy(
        update={
            "html": f"{reply.html}\n\n{note}",
            "lazy_facts": reply.lazy_facts.with_more({"prices": {"available": False, "problem": problem}}),
        }
    )


def _answer_parsed(parsed: Parsed, lang: Lang, currency: Currency | None) -> Answer:
    """What the message lacks is asked back first; then the kind's row answers."""
    kind = parsed.intent
    query = parsed.query
    if kind is AnswerKind.HELP or kind is AnswerKind.OUT_OF_SCOPE:
        return KINDS[kind].from_message(parsed, lang)  # type: ignore[misc]
    if parsed.rejected:  # 'batch -4', 'RTX 9999': said, not dropped
        return rejected_answer(lang, parsed.rejected, query)
    if parsed.vision is not None and kind is AnswerKind.FIT:
        vision = parsed.vision
        if currency is not None and vision.currency is None:
            vision = vision.model_copy(update={"currency": currency})
        return vision_fit_answer(vision, lang)
    unknown = parsed.unknown_model
    sized = query is not None and query.params_b
    if unknown and not (sized and kind in (AnswerKind.FIT, AnswerKind.PLAN, AnswerKind.CARDS_NEEDED)):
        return unknown_model_answer(lang, unknown, load_registry().closest(unknown), query)
    if kind is AnswerKind.CLARIFY and parsed.clarify == "nonsense":
        return KINDS[AnswerKind.OUT_OF_SCOPE].from_message(parsed, lang)  # type: ignore[misc]
    if kind is AnswerKind.CLARIFY or parsed.clarify:
        return clarify_answer(lang, parsed.clarify or "model", query)
    spec = KINDS[kind]
    if spec.from_message is not None:
        if spec.currency and query is not None:
            parsed = parsed.model_copy(update={"query": _with_currency(query, currency, kind)})
        return spec.from_message(parsed, lang)
    if query is None:
        return clarify_answer(lang, "model", None)
    if parsed.compare_methods and query.method is None and query.task is Task.INFERENCE:
        query = query.model_copy(update={"task": Task.FINETUNE})
    query = query.model_copy(update={"kind": None if kind is AnswerKind.FIT else kind})
    # a model not in the registry but with its size ("vicuna 13b") is estimated as a typical dense model
    typed = TypedNames(card=parsed.ambiguous_card, model=unknown)
    return _rebuild(_with_currency(query, currency, kind), lang, typed)


def _rebuild(query: Query, lang: Lang, typed: TypedNames | None = None) -> Answer:
    try:
        return rebuild(query, lang, typed or TypedNames())
    except UnknownModelError as err:
        return unknown_model_answer(lang, err.name, err.suggestions, query)
    except UnknownCardError as err:
        return unknown_card_answer(lang, err.name, err.suggestions, query)


def _with_currency(query: Query, currency: Currency | None, kind: AnswerKind) -> Query:
    """A chat's /settings currency applies to kinds whose figures it changes, when the question named none."""
    if currency is None or query.currency is not None or not KINDS[kind].currency:
        return query
    return query.model_copy(update={"currency": currency})


def with_context(context: ChatContext, **changes: object) -> ChatContext:
    """The same context with some inputs changed (a button's stored language, the chat's previous query)."""
    return replace(context, **changes)  # type: ignore[arg-type]


assert set(KINDS) >= QUERY_KINDS

__all__ = [
    "NO_CONTEXT",
    "ChatContext",
    "LookupNote",
    "answer",
    "answer_looking_up",
    "answer_message",
    "answer_query",
    "answer_stored",
    "with_context",
]
