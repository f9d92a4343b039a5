"""parse(): message (+ the chat's previous query) -> Parsed. The order of the fixed decisions lives here;
the kinds a message asks for by its words are rows of core/answer_kind.py's `ASKED_BY_WORDS`, each weighed
before the fixed decision its row names (`_asked_by_words`): a new such kind adds a row there, not a branch
here."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.answer_kind import ASKED_BY_WORDS, QUERY_KINDS, AnswerKind, AskedBy, ParserStep
from core.jobs.defaults import method_decided
from core.parser import intent as words
from core.parser.entities import Extraction, extract
from core.parser.followup import build_query, merge
from core.parser.lang import detect_lang
from core.parser.normalize import normalize
from core.parser.result import Intent, Lang, Parsed
from core.parser.unread import names_a_vision_family, original_case, read_unknown_model
from core.parser.vision import extract_vision, find_vision_model, follow_up_vision
from core.query import Query, Task
from core.vision.job import VisionJob

# Fields that make a message a (follow-up) fit question even without a model.
_FIT_FIELDS = frozenset(
    {
        "task", "method", "card", "card_memory_bytes", "gpus", "precision", "batch", "seq", "runtime",
        "grad_checkpointing", "lora_rank", "tokens", "budget", "optimizer", "zero_stage", "model", "params_b",
        "samples", "sample_chars", "epochs", "text_bytes", "kv_cache_dtype", "expert_parallel", "gpu_layers",
        "offload", "host_memory_bytes", "host_memory_type", "host_memory_channels", "algorithm",
        "num_generations", "completion_tokens", "rollout", "master_weights", "chunked_loss",
        "offload_activations", "launch", "sequence_parallel",
    }
)  # fmt: skip


# 'SD 1.5 出一张图要多少显存': the memory of a named image model is its job's answer, not the scenario's text
# ('SDXL 出图用什么卡' asks which card: the scenario, with the job)
_ASKS_MEMORY = re.compile(
    r"多少显存|显存多少|多大显存|显存多大|要多少\s*g|how\s+much\s+(?:vram|memory)|vram\s+(?:for|does)"
)


# A message this short that names only a model ('qwen 72b?') swaps the model of the chat's question.
_SHORT = 30


@dataclass(frozen=True)
class _Seen:
    """What every reply carries, whatever the intent."""

    lang: Lang
    cards: list[str]
    ambiguous_card: str | None
    unknown_model: str | None

    def reply(self, intent: Intent, **fields: Any) -> Parsed:
        base: dict[str, Any] = {
            "lang": self.lang,
            "cards": self.cards,
            "ambiguous_card": self.ambiguous_card,
            "unknown_model": self.unknown_model,
        }
        return Parsed(intent=intent, **(base | fields))


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
    seen = _Seen(lang, card_ids, ambiguous, unknown)
    if ex.rejected:
        return _rejected(ex, text, norm, previous, seen)

    def asked_before(step: ParserStep) -> Parsed | None:
        return _asked_by_words(step, ex, norm, previous, seen)

    if asked := asked_before(ParserStep.FAQ):
        return asked
    faq_id = words.faq(norm, bool(card_ids), ex.has_model)
    if faq_id:
        return seen.reply(Intent.FAQ, faq=faq_id, wanted_memory_bytes=words.wanted_memory_bytes(norm))
    nothing_named = not ex.has_model and not card_ids
    if asked := asked_before(ParserStep.MARKET):
        return asked
    market = _market(ex, seen, previous, norm)
    if market is not None:
        return market
    if asked := asked_before(ParserStep.VISION):
        return asked
    vision = _vision(ex, norm)
    follow_vision = False
    short_or_follow_up = len(norm) <= _SHORT or words.sounds_like_follow_up(norm)
    if vision is not None and previous_vision is not None and not card_ids and short_or_follow_up:
        vision = _on_the_previous_setup(vision, previous_vision)  # '换成 flux dev 呢': the same card, engine
    if vision is None and previous_vision is not None and not ex.has_model and short_or_follow_up:
        vision = follow_up_vision(norm, ex.fields, previous_vision)
        follow_vision = vision is not None
    if follow_vision and vision is not None:
        return seen.reply(Intent.FIT, vision=vision, cards=card_ids, follow_up=True)
    if vision is not None:
        memory_of_a_named_model = find_vision_model(norm) is not None and _ASKS_MEMORY.search(norm)
        if not card_ids and words.scenario(norm) == "vision" and not memory_of_a_named_model:
            return seen.reply(Intent.SCENARIO, scenario="vision", vision=vision)
        return seen.reply(Intent.FIT, vision=vision, cards=card_ids)
    if asked := asked_before(ParserStep.SMALL_TALK):
        return asked
    if nothing_named and not ex.fields and (words.is_small_talk(norm) or words.is_off_topic(norm)):
        return seen.reply(Intent.OUT_OF_SCOPE)
    if asked := asked_before(ParserStep.UNKNOWN_MODEL):
        return asked
    named = _unknown_name(ex, norm, text, follow_up=previous is not None)
    if named is not None:
        # a model we do not know is asked about, never answered with the chat's previous model
        # the kind the message asks for once its model is known (a Hub lookup may find it): kept on the query
        query = _asked(build_query(ex.fields), ex, norm, ex.fields)
        if names_a_vision_family(named):
            named = None  # 'run yolov8': which variant? (the examples name the vision models)
        return _Seen(lang, card_ids, ambiguous, named).reply(Intent.CLARIFY, query=query, clarify="model")
    if asked := asked_before(ParserStep.COMPARE):
        return asked
    if len(card_ids) >= 2:
        return seen.reply(
            Intent.COMPARE,
            query=build_query(ex.fields) if ex.has_model else None,
            card_counts=ex.card_counts,
        )
    if asked := asked_before(ParserStep.MODEL_JOB):
        return asked
    if ex.has_model:
        return _fit(ex, norm, previous, seen)
    if asked := asked_before(ParserStep.FOLLOW_UP):
        return asked
    scenario_id = None if card_ids else words.scenario(norm)
    if scenario_id:
        return seen.reply(Intent.SCENARIO, scenario=scenario_id)
    stated = ex.fields.keys() & _FIT_FIELDS
    if previous is not None and card_ids and words.sounds_like_follow_up(norm):
        return _fit(ex, norm, previous, seen)  # 'what about H100s?', '那L20呢': the same job on that card
    if previous is not None and not card_ids and words.asks_speed_or_cost(norm):
        return _fit(ex, norm, previous, seen)  # 'how fast would that be?': a figure of the same job
    if card_ids and (words.asks_card_info(ex.residue) or (previous is None and not stated - {"card"})):
        # a platform named ('autodl 5090 多少钱'): the card's prices there, or that it does not sell it
        return seen.reply(Intent.CARD_INFO, query=build_query(ex.fields) if "platform" in ex.fields else None)
    asks_more = ex.gpus_added or (words.wants_plan(norm) and words.sounds_like_follow_up(norm))
    if previous is not None and (stated or asks_more):
        return _fit(ex, norm, previous, seen)
    if ex.unknown_model is None and ex.family_only:
        seen = _Seen(lang, card_ids, ambiguous, ex.family_only)
    if stated or card_ids or ex.family_only or words.gpu_context(norm):
        query = build_query(ex.fields)
        return seen.reply(
            Intent.CLARIFY, query=query, clarify="model", compare_methods=_compare_methods(query)
        )
    if words.is_gibberish(norm):
        return seen.reply(Intent.CLARIFY, clarify="nonsense")
    return seen.reply(Intent.OUT_OF_SCOPE)


_SETUP_FIELDS = ("card", "card_memory_bytes", "gpus", "runtime", "currency")


def _on_the_previous_setup(vision: VisionJob, previous: VisionJob) -> VisionJob:
    """Another model asked on the last vision job's setup ('换成 flux dev 呢' after 'comfyui 跑 sdxl …
    4060ti'): the card, count and engine said before are kept unless this message says its own."""
    kept = {
        name: getattr(previous, name)
        for name in _SETUP_FIELDS
        if getattr(vision, name) is None
        and getattr(previous, name) is not None
        and name not in previous.defaulted
    }
    return vision.model_copy(update=kept) if kept else vision


def _market(ex: Extraction, seen: _Seen, previous: Query | None, norm: str) -> Parsed | None:
    """'autodl 4090 包月还是按小时': a card's billing kinds; '预算每月5000元 能跑什么': what a budget buys,
    and its follow-ups ('那微调呢': the same budget). Only without a model (a job named with a budget is
    planned within it)."""
    if ex.has_model:
        return None
    follows_budget = (
        previous is not None
        and previous.kind is Intent.BUDGET
        and "budget" not in ex.fields
        and not seen.cards
        and (len(norm) <= _SHORT or words.sounds_like_follow_up(norm))
    )
    if follows_budget and previous is not None:
        fields = merge(previous, ex.fields, ex.gpus_added) | {"kind": Intent.BUDGET}
        return seen.reply(Intent.BUDGET, query=build_query(fields))
    if "billing" in ex.fields and (seen.cards or "hours_per_day" in ex.fields):
        fields = ex.fields | {"kind": Intent.BILLING}
        if not seen.cards:
            return seen.reply(Intent.CLARIFY, query=build_query(fields), clarify="card")
        return seen.reply(Intent.BILLING, query=build_query(fields))
    if "budget" in ex.fields and len(seen.cards) <= 1 and "hours_per_day" not in ex.fields:
        return seen.reply(Intent.BUDGET, query=build_query(ex.fields | {"kind": Intent.BUDGET}))
    return None


def _unknown_name(ex: Extraction, norm: str, text: str, *, follow_up: bool) -> str | None:
    """The name of a model the message asks about that the registry lacks and gives no size for: a pasted
    Hub id, 'Zorblax-9000' where the model goes, or a family without its size ('qwen3')."""
    if ex.has_model or find_vision_model(norm) is not None:
        return None
    if ex.unknown_model:
        return original_case(text, ex.unknown_model)
    if ex.family_only:
        return ex.family_only  # 'which Qwen3?'
    named = read_unknown_model(ex.residue, follow_up=follow_up)
    return original_case(text, named) if named else None


def _rejected(ex: Extraction, text: str, norm: str, previous: Query | None, seen: _Seen) -> Parsed:
    """'batch -4', 'on 0 GPUs', 'RTX 9999': say what cannot be used, with the rest of the question kept
    (a follow-up's, on top of the chat's last job) so that a button can answer it once corrected."""
    fields = ex.fields
    follow_up = len(norm) <= _SHORT or words.sounds_like_follow_up(norm)
    if previous is not None and not ex.has_model and follow_up:
        fields = merge(previous, fields, ex.gpus_added)
    query = build_query(fields) if fields else None
    rejected = [r.model_copy(update={"typed": original_case(text, r.typed)}) for r in ex.rejected]
    return seen.reply(Intent.CLARIFY, clarify="rejected", query=query, rejected=rejected)


# The rows of ASKED_BY_WORDS weighed before each fixed decision (steps without rows cost nothing).
_ROWS_BEFORE: dict[ParserStep, tuple[AskedBy, ...]] = {
    step: tuple(row for row in ASKED_BY_WORDS if row.before is step) for step in ParserStep
}


def _asked_by_words(
    step: ParserStep, ex: Extraction, norm: str, previous: Query | None, seen: _Seen
) -> Parsed | None:
    """The first row weighed before `step` that the message asks for (or follows up), if any."""
    for row in _ROWS_BEFORE[step]:
        parsed = _asked_for(row, ex, norm, previous, seen)
        if parsed is not None:
            return parsed
    return None


def _asked_for(row: AskedBy, ex: Extraction, norm: str, previous: Query | None, seen: _Seen) -> Parsed | None:
    """'H20适合训练吗', '最大能跑多大的模型', or a follow-up of such a question changing its card or its job
    ('那推理呢', 'what about L20?', '那QLoRA呢'): the kind's query from the message (and the previous one)."""
    fewest, most = row.cards
    if not _names_no_one_model(ex, norm, row.sizes_in_general) or len(seen.cards) > most:
        return None
    if _moves_the_job(row, previous, norm):
        return None
    again = previous is not None and row.kind in QUERY_KINDS and previous.kind is row.kind
    if len(seen.cards) >= fewest and row.asked(norm, ex.residue, ex.fields):
        fields = dict(ex.fields)
        if again and previous is not None and not (ex.cards or "card_memory_bytes" in fields):
            fields = merge(previous, fields, ex.gpus_added)  # asked anew about the same setup
    elif again and previous is not None and (ex.fields or ex.gpus_added):
        fields = merge(previous, ex.fields, ex.gpus_added)
    else:
        return None
    if row.kind not in QUERY_KINDS:
        return seen.reply(row.kind)
    fields["kind"] = row.kind
    fields.pop("sort", None)
    query = build_query(fields)
    cards = seen.cards or ([query.card] if query.card else [])
    return seen.reply(row.kind, query=query, cards=cards, follow_up=again)


def _moves_the_job(row: AskedBy, previous: Query | None, norm: str) -> bool:
    """'what about 80GB cards?' after a job of a model: that job on such a card, not a listing."""
    if row.job_follow_up_unless is None or previous is None or previous.kind is row.kind:
        return False
    has_job = previous.model is not None or previous.params_b is not None
    return has_job and words.sounds_like_follow_up(norm) and not row.job_follow_up_unless.search(norm)


def _names_no_one_model(ex: Extraction, norm: str, sizes_in_general: bool) -> bool:
    """No model named, nor one model's size; a class of sizes ('for 7B models', '适合部署7b模型吗') where the
    kind is about such classes. A question about one model ('跑个7b的模型，4080可以吗') is a fit question."""
    if "model" in ex.fields:
        return False
    return "params_b" not in ex.fields or (sizes_in_general and words.sizes_in_general(norm))


def _vision(ex: Extraction, norm: str) -> VisionJob | None:
    """A vision job wins when a vision model is named; a task named without a model ('文生图') only when no
    language model is named either."""
    if ex.has_model and find_vision_model(norm) is None:
        return None
    return extract_vision(norm, ex.fields)


def _fit(ex: Extraction, norm: str, previous: Query | None, seen: _Seen) -> Parsed:
    only_a_name = not (ex.fields.keys() - {"model", "params_b"}) and len(norm) <= _SHORT
    follow_up = previous is not None and (
        not ex.has_model or only_a_name or words.sounds_like_follow_up(norm)
    )
    fields = merge(previous, ex.fields, ex.gpus_added) if previous is not None and follow_up else ex.fields
    query = build_query(fields)
    if query.model is None and query.params_b is None:
        return seen.reply(Intent.CLARIFY, query=query, clarify="model")
    cards = seen.cards or ([query.card] if query.card else [])
    query = _asked(query, ex, norm, fields)
    if query.kind is AnswerKind.CARDS_NEEDED:
        return seen.reply(Intent.CARDS_NEEDED, query=query, cards=cards, follow_up=follow_up)
    return seen.reply(
        query.answer_kind,
        query=query,
        cards=cards,
        follow_up=follow_up,
        compare_methods=_compare_methods(query),
    )


def _asked(query: Query, ex: Extraction, norm: str, fields: dict[str, Any]) -> Query:
    """The kind of answer a question about one model asks for, on its query: how many cards (kept across
    follow-ups), ranked plans ('cheapest card for …', a budget without a card; asked anew by each message,
    'fastest …' ranks them by speed), or a fit."""
    if words.asks_how_many_cards(norm) or words.asks_how_many_cards(ex.residue):
        return query.model_copy(update={"kind": AnswerKind.CARDS_NEEDED, "sort": None})
    if query.kind is AnswerKind.CARDS_NEEDED:
        return query.model_copy(update={"sort": None})
    plan = words.wants_plan(norm) or ("budget" in ex.fields and "card" not in fields)
    sort = "speed" if words.wants_fastest(norm) else None
    return query.model_copy(update={"kind": AnswerKind.PLAN if plan else None, "sort": sort})


def _compare_methods(query: Query) -> bool:
    """Fine-tuning without a method: full, LoRA and QLoRA side by side, unless the framework or the algorithm
    named decides it (Unsloth's 4-bit QLoRA, the RL trainers' full policy)."""
    if method_decided(query):
        return False
    return query.task is Task.FINETUNE and query.method is None and "task" not in query.defaulted
