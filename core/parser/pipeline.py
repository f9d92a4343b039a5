"""parse(): message (+ the chat's previous query) -> Parsed. What decides a message's kind is one table,
core/answer_kind.py's `DECIDED_BY`: its rows, in order, are the kinds asked for by their words and the
readings of what a message names (a FAQ wording, a budget, a vision job, a model, several cards …, read in
core/parser/readings.py); the first row that answers decides. This module reads the message once and walks
the table: it has no branch per kind, and adding a kind never edits it."""

from __future__ import annotations

from core.answer_kind import DECIDED_BY
from core.parser import intent as words
from core.parser.entities import extract
from core.parser.followup import build_query, merge
from core.parser.lang import detect_lang
from core.parser.normalize import normalize
from core.parser.readings import Message, Seen, read
from core.parser.result import Intent, Parsed
from core.parser.unread import original_case
from core.query import Query
from core.vision.job import VisionJob


def parse(text: str, previous: Query | None = None, previous_vision: VisionJob | None = None) -> Parsed:
    """Understand one chat message; `previous` is the last fit query of the same chat, if any, and
    `previous_vision` the last vision job (a follow-up to a vision answer changes only what it says)."""
    if not isinstance(text, str):
        text = ""
    lang = detect_lang(text[:4000])
    norm = normalize(text)
    if words.is_empty(norm):
        return Parsed(intent=Intent.CLARIFY, lang=lang, clarify="nonsense")
    ex = extract(norm)
    if "text_bytes" in ex.fields and "text_lang" not in ex.fields:
        ex.fields["text_lang"] = lang.value  # a dataset's language, when unsaid, is the asker's
    card_ids = list(dict.fromkeys(c.card_id for c in ex.cards))
    ambiguous = next((c.typed for c in ex.cards if c.ambiguous), None)
    unknown = original_case(text, ex.unknown_model) if ex.unknown_model else None
    seen = Seen(lang, card_ids, ambiguous, unknown)
    message = Message(text, norm, ex, previous, previous_vision, seen)
    if ex.rejected:
        return _rejected(message)
    for row in DECIDED_BY:
        parsed = read(row, message)
        if parsed is not None:
            return parsed
    raise AssertionError("the table's last row answers every message")  # pragma: no cover


def _rejected(message: Message) -> Parsed:
    """'batch -4', 'on 0 GPUs', 'RTX 9999': say what cannot be used, with the rest of the question kept
    (a follow-up's, on top of the chat's last job) so that a button can answer it once corrected."""
    ex, previous = message.ex, message.previous
    fields = ex.fields
    if previous is not None and not ex.has_model and message.short_or_follow_up:
        fields = merge(previous, fields, ex.gpus_added)
    query = build_query(fields) if fields else None
    rejected = [r.model_copy(update={"typed": original_case(message.text, r.typed)}) for r in ex.rejected]
    return message.reply(Intent.CLARIFY, clarify="rejected", query=query, rejected=rejected)
