"""The readers of what a message names: one per `Reading` of core/answer_kind.py, each answering with the
kinds its row of `DECIDED_BY` lists, or None to let the next row decide. The order they are weighed in, and
the rows of the kinds asked for by their words (`asked_for`), are the table's; core/parser/pipeline.py
reads the table and has no branch per kind."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from core.answer_kind import QUERY_KINDS, AnswerKind, AskedBy, NamedBy, Reading
from core.jobs.defaults import method_decided
from core.parser import intent as words
from core.parser.entities import Extraction
from core.parser.followup import build_query, merge
from core.parser.result import Intent, Lang, Parsed
from core.parser.unread import names_a_vision_family, original_case, read_unknown_model
from core.parser.vision import extract_vision, find_vision_model, follow_up_vision
from core.query import Query, Task
from core.regex_screen import gated
from core.vision.job import VisionJob

# Fields that make a message a (follow-up) fit question even without a model.
_FIT_FIELDS = frozenset(
    {
        "task", "method", "card", "card_memory_bytes", "gpus", "precision", "batch", "seq", "runtime",
        "grad_checkpointing", "lora_rank", "tokens", "budget", "optimizer", "zero_stage", "model", "params_b",
        "samples", "sample_chars", "epochs", "text_bytes", "kv_cache_dtype", "expert_parallel", "gpu_layers",
        "parallel", "cpu_offload_gb", "cpu_moe_layers", "offload", "host_memory_bytes", "host_memory_type",
        "host_memory_channels", "algorithm",
        "num_generations", "completion_tokens", "rollout", "master_weights", "chunked_loss",
        "offload_activations", "launch", "sequence_parallel", "network", "network_gbit_s", "cpu_only",
        "tensor_parallel", "pipeline_parallel", "data_parallel", "users", "deadline_hours",
    }
)  # fmt: skip


# 'SD 1.5 出一张图要多少显存': the memory of a named image model is its job's answer, not the scenario's text
# ('SDXL 出图用什么卡' asks which card: the scenario, with the job)
_ASKS_MEMORY = gated(
    r"多少显存|显存多少|多大显存|显存多大|要多少\s*g|how\s+much\s+(?:vram|memory)|vram\s+(?:for|does)"
)


# A message this short that names only a model ('qwen 72b?') swaps the model of the chat's question.
SHORT = 30


@dataclass(frozen=True)
class Seen:
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


@dataclass(frozen=True)
class Message:
    """One message as read (its text, normalized text and extraction) with the chat's previous question and
    vision job: what every reader weighs."""

    text: str
    norm: str
    ex: Extraction
    previous: Query | None
    previous_vision: VisionJob | None
    seen: Seen

    def reply(self, intent: Intent, **fields: Any) -> Parsed:
        return self.seen.reply(intent, **fields)

    @property
    def cards(self) -> list[str]:
        return self.seen.cards

    @cached_property
    def short_or_follow_up(self) -> bool:
        return len(self.norm) <= SHORT or words.sounds_like_follow_up(self.norm)

    @cached_property
    def stated(self) -> frozenset[str]:
        """The fit fields the message states."""
        return frozenset(self.ex.fields.keys() & _FIT_FIELDS)


Reader = Callable[[Message], Parsed | None]


def read(row: AskedBy | NamedBy, message: Message) -> Parsed | None:
    """The answer the row decides for the message, or None (the next row weighs it)."""
    if isinstance(row, AskedBy):
        return asked_for(row, message)
    return READERS[row.reading](message)


# -- the kinds asked for by their words ---------------------------------------------------------------------


def asked_for(row: AskedBy, message: Message) -> Parsed | None:
    """'H20适合训练吗', '最大能跑多大的模型', or a follow-up of such a question changing its card or its job
    ('那推理呢', 'what about L20?', '那QLoRA呢'): the kind's query from the message (and the previous one)."""
    ex, norm, previous, seen = message.ex, message.norm, message.previous, message.seen
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


# -- what a message names ----------------------------------------------------------------------------------


def _faq_wording(m: Message) -> Parsed | None:
    faq_id = words.faq(m.norm, bool(m.cards), m.ex.has_model)
    if not faq_id:
        return None
    return m.reply(Intent.FAQ, faq=faq_id, wanted_memory_bytes=words.wanted_memory_bytes(m.norm))


def _budget_followed_up(m: Message) -> Parsed | None:
    """'那微调呢' after '预算每月5000元 能跑什么': the same budget (a job named with a budget is planned
    within it)."""
    previous, ex = m.previous, m.ex
    if ex.has_model or previous is None or previous.kind is not Intent.BUDGET:
        return None
    if "budget" in ex.fields or m.cards or not (len(m.norm) <= SHORT or words.sounds_like_follow_up(m.norm)):
        return None
    fields = merge(previous, ex.fields, ex.gpus_added) | {"kind": Intent.BUDGET}
    return m.reply(Intent.BUDGET, query=build_query(fields))


def _billing_kind(m: Message) -> Parsed | None:
    """'autodl 4090 包月还是按小时': a card's billing kinds (which card, when only the hours are said)."""
    ex = m.ex
    if ex.has_model or "billing" not in ex.fields:
        return None
    fields = ex.fields
    if not m.cards:
        # '包月 3500 呢，每天跑 18 小时' after '…按量 7块一小时': the chat's card and prices, these hours
        carried = _billing_carried(m)
        if carried is None and "hours_per_day" not in fields:
            return None
        fields = (carried or {}) | fields
    fields = fields | {"kind": Intent.BILLING}
    if not m.cards and "card" not in fields:
        return m.reply(Intent.CLARIFY, query=build_query(fields), clarify="card")
    return m.reply(Intent.BILLING, query=build_query(fields))


# What a billing follow-up keeps of the chat's last question: the card rented, how it is used, the prices
# already given.
_BILLING_CARRIED = (
    "card", "gpus", "platform", "hours_per_day", "rental_days", "stated_hourly_price", "stated_monthly_price",
    "stated_weekly_price", "stated_daily_price", "stated_reserved_price", "currency",
)  # fmt: skip


def _billing_carried(m: Message) -> dict[str, object] | None:
    """'那包月 1100 划算吗' after '4090 按量 1.98一小时 …每天开8小时': a price the follow-up states for a
    billing kind is weighed on the chat's card and hours (the job itself is not what is asked)."""
    previous, fields = m.previous, m.ex.fields
    stated_price = any(f"stated_{term}_price" in fields for term in ("hourly", "daily", "weekly", "monthly"))
    if previous is None or previous.card is None or not stated_price or not m.short_or_follow_up:
        return None
    said = previous.said()
    return {name: said[name] for name in _BILLING_CARRIED if name in said}


def _budget_on_the_chats_job(m: Message) -> Parsed | None:
    """'预算 500 块够吗' after 'grpo 训 qwen2.5-7b …', '每月预算 1 万，这样租一个月够吗': the chat's job,
    held to the budget (its plans within it), not what the budget rents."""
    ex, previous = m.ex, m.previous
    if ex.has_model or "budget" not in ex.fields or m.cards or previous is None:
        return None
    if previous.kind is Intent.BUDGET or (previous.model is None and previous.params_b is None):
        return None
    return _fit(m) if m.short_or_follow_up else None


def _budget(m: Message) -> Parsed | None:
    """'预算每月5000元 能跑什么': what a budget buys (also kept running around the clock: 'we have $2,000 a
    month, the biggest model we can serve 24/7'; other hours a day with an amount are a billing question)."""
    ex = m.ex
    if ex.has_model or "budget" not in ex.fields or len(m.cards) > 1:
        return None
    if "hours_per_day" in ex.fields and ex.fields["hours_per_day"] != 24:
        return None
    return m.reply(Intent.BUDGET, query=build_query(ex.fields | {"kind": Intent.BUDGET}))


def _vision_job(m: Message) -> Parsed | None:
    """A vision job wins when a vision model is named; a task named without a model ('文生图') only when no
    language model is named either. Its follow-ups change only what they say."""
    ex, norm, previous_vision, card_ids = m.ex, m.norm, m.previous_vision, m.cards
    vision = None if ex.has_model and find_vision_model(norm) is None else extract_vision(norm, ex.fields)
    if vision is not None and previous_vision is not None and not card_ids and m.short_or_follow_up:
        vision = _on_the_previous_setup(vision, previous_vision)  # '换成 flux dev 呢': the same card, engine
    if vision is None and previous_vision is not None and not ex.has_model and m.short_or_follow_up:
        vision = follow_up_vision(norm, ex.fields, previous_vision)
        if vision is not None:
            return m.reply(Intent.FIT, vision=vision, cards=card_ids, follow_up=True)
    if vision is None:
        return None
    memory_of_a_named_model = find_vision_model(norm) is not None and _ASKS_MEMORY.search(norm)
    if not card_ids and words.scenario(norm) == "vision" and not memory_of_a_named_model:
        return m.reply(Intent.SCENARIO, scenario="vision", vision=vision)
    return m.reply(Intent.FIT, vision=vision, cards=card_ids)


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


def _small_talk(m: Message) -> Parsed | None:
    nothing_named = not m.ex.has_model and not m.cards
    if nothing_named and not m.ex.fields and (words.is_small_talk(m.norm) or words.is_off_topic(m.norm)):
        return m.reply(Intent.OUT_OF_SCOPE)
    return None


def _unknown_model(m: Message) -> Parsed | None:
    """A model we do not know is asked about, never answered with the chat's previous model; the kind the
    message asks for once its model is known (a Hub lookup may find it) is kept on the query."""
    ex = m.ex
    named = _unknown_name(ex, m.norm, m.text, follow_up=m.previous is not None)
    if named is None:
        return None
    query = _asked(build_query(ex.fields), ex, m.norm, ex.fields)
    if names_a_vision_family(named):
        named = None  # 'run yolov8': which variant? (the examples name the vision models)
    seen = Seen(m.seen.lang, m.cards, m.seen.ambiguous_card, named)
    return seen.reply(Intent.CLARIFY, query=query, clarify="model")


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


def _several_cards(m: Message) -> Parsed | None:
    if len(m.cards) < 2:
        return None
    query = build_query(m.ex.fields) if m.ex.has_model else None
    return m.reply(Intent.COMPARE, query=query, card_counts=m.ex.card_counts)


def _a_model(m: Message) -> Parsed | None:
    return _fit(m) if m.ex.has_model else None


def _scenario_wording(m: Message) -> Parsed | None:
    scenario_id = None if m.cards else words.scenario(m.norm)
    return m.reply(Intent.SCENARIO, scenario=scenario_id) if scenario_id else None


def _the_chats_job_asked(m: Message) -> Parsed | None:
    """'what about H100s?', '那L20呢': the same job on that card; 'how fast would that be?': a figure of the
    same job."""
    if m.previous is None:
        return None
    if m.cards and words.sounds_like_follow_up(m.norm):
        return _fit(m)
    if not m.cards and words.asks_speed_or_cost(m.norm):
        return _fit(m)
    return None


def _a_card(m: Message) -> Parsed | None:
    """A card's facts; with a platform named ('autodl 5090 多少钱'), its prices there, or that it does not
    sell it."""
    if not m.cards:
        return None
    if not (words.asks_card_info(m.ex.residue) or (m.previous is None and not m.stated - {"card"})):
        return None
    return m.reply(Intent.CARD_INFO, query=build_query(m.ex.fields) if "platform" in m.ex.fields else None)


def _the_chats_job_changed(m: Message) -> Parsed | None:
    """A field of the chat's job stated ('batch 8'), cards added ('再加一张'), or plans asked of it."""
    asks_more = m.ex.gpus_added or (words.wants_plan(m.norm) and words.sounds_like_follow_up(m.norm))
    return _fit(m) if m.previous is not None and (m.stated or asks_more) else None


def _a_job_without_its_model(m: Message) -> Parsed | None:
    """A job's fields, a card or a family named, and no model: which model?"""
    ex = m.ex
    seen = m.seen
    if ex.unknown_model is None and ex.family_only:
        seen = Seen(seen.lang, seen.cards, seen.ambiguous_card, ex.family_only)
    if not (m.stated or m.cards or ex.family_only or words.gpu_context(m.norm)):
        return None
    query = build_query(ex.fields)
    return seen.reply(Intent.CLARIFY, query=query, clarify="model", compare_methods=_compare_methods(query))


def _gibberish(m: Message) -> Parsed | None:
    return m.reply(Intent.CLARIFY, clarify="nonsense") if words.is_gibberish(m.norm) else None


def _anything(m: Message) -> Parsed | None:
    return m.reply(Intent.OUT_OF_SCOPE)


# -- a model's job -----------------------------------------------------------------------------------------


def _fit(m: Message) -> Parsed:
    ex, norm, previous, seen = m.ex, m.norm, m.previous, m.seen
    only_a_name = not (ex.fields.keys() - {"model", "params_b"}) and len(norm) <= SHORT
    follow_up = previous is not None and (
        not ex.has_model or only_a_name or words.sounds_like_follow_up(norm, by_first_word=len(norm) <= SHORT)
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


READERS: dict[Reading, Reader] = {
    Reading.FAQ_WORDING: _faq_wording,
    Reading.BUDGET_FOLLOWED_UP: _budget_followed_up,
    Reading.BILLING_KIND: _billing_kind,
    Reading.BUDGET_ON_THE_CHATS_JOB: _budget_on_the_chats_job,
    Reading.BUDGET: _budget,
    Reading.VISION_JOB: _vision_job,
    Reading.SMALL_TALK: _small_talk,
    Reading.UNKNOWN_MODEL: _unknown_model,
    Reading.SEVERAL_CARDS: _several_cards,
    Reading.A_MODEL: _a_model,
    Reading.SCENARIO_WORDING: _scenario_wording,
    Reading.THE_CHATS_JOB_ASKED: _the_chats_job_asked,
    Reading.A_CARD: _a_card,
    Reading.THE_CHATS_JOB_CHANGED: _the_chats_job_changed,
    Reading.A_JOB_WITHOUT_ITS_MODEL: _a_job_without_its_model,
    Reading.GIBBERISH: _gibberish,
    Reading.ANYTHING: _anything,
}

assert set(READERS) == set(Reading), "every reading has its reader"
