"""Questions in, answers out: parse → compute → words, for the bot, the console chat and `gpufit ask`.

This module gathers numbers into plain data for the templates (templates/<lang>/*.j2 hold every sentence)
and packs the result as an `Answer`: full HTML, a compact form for groups and inline results, buttons that
change one thing of the query, and the JSON contract. It never raises: any failure becomes a friendly
error answer in the user's language, and the exception goes to the log.
"""

from __future__ import annotations

import html as html_lib
import logging
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core import advisor
from core.advisor import Fix, Plan
from core.catalog import Card, load_catalog
from core.cost import CardPrice, JobCost, PriceBookError, job_cost, load_price_book, price_book_in_force
from core.estimator import COMPONENTS, Estimate, Fit, UnknownCardError, UnknownModelError, Verdict, estimate
from core.query import DEFAULT_SEQ, Currency, Method, Precision, Query, Task
from core.registry import load_registry
from core.render import (
    TELEGRAM_LIMIT,
    environment,
    fmt_card_name,
    plain_text,
    render,
    split_message,
    utf16_len,
)

log = logging.getLogger(__name__)

Kind = Literal["fit", "plan", "card", "compare", "faq", "scenario", "help", "clarify", "error"]
Lang = Literal["en", "zh"]

FAQ_IDS = ("card_vs_vram", "vram_price", "vram_upgrade", "bandwidth", "folk_rule")
SCENARIO_IDS = ("learning", "production_inference", "pretraining", "vision")
# Suggested models when the question names none (registry ids; labels come from the registry).
SUGGESTED_MODELS = ("llama-3.1-8b", "qwen2.5-7b")
SUGGESTED_SIZE_B = 13.0
TRAINING_METHODS = (Method.FULL, Method.LORA, Method.QLORA)
CONTEXT_CHOICES = (4096, 8192, 32768)
PRECISION_CHOICES = (Precision.BF16, Precision.INT8, Precision.INT4)
MIN_SHOWN_BYTES = 5 * 2**20  # components under 5 MiB would print as 0.00 GiB
# Fields worth stating when assumed, in the order a reader checks them.
ASSUMPTION_ORDER = (
    "method",
    "precision",
    "batch",
    "seq",
    "gpus",
    "lora_rank",
    "grad_checkpointing",
    "optimizer",
    "zero_stage",
    "runtime",
)


class Button(BaseModel):
    """One inline-keyboard button; `action` is a core-level instruction the bot maps to callback data."""

    label: str
    action: str


class Answer(BaseModel):
    """One reply, ready to send; frozen because answers are cached and shared."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    lang: Lang
    query: Query | None = None
    filled_query: Query | None = None
    html: str
    compact_html: str
    summary: str
    title: str
    buttons: list[list[Button]] = Field(default_factory=list)
    facts: dict[str, Any] = Field(default_factory=dict, description="JSON-ready numbers behind the answer")

    def to_json(self) -> dict[str, Any]:
        """`gpufit ask --json`: the filled query in the `gpufit estimate --json` schema, and the answer."""
        return {
            "query": query_json(self.query, self.filled_query),
            "answer": {
                "kind": self.kind,
                "lang": self.lang,
                "title": self.title,
                "summary": self.summary,
                "text": plain_text(self.html),
                "html": self.html,
                "compact_html": self.compact_html,
                "buttons": [[b.model_dump() for b in row] for row in self.buttons],
                **self.facts,
            },
        }


def query_json(query: Query | None, filled: Query | None) -> dict[str, Any] | None:
    """The filled query; `defaulted` is exactly the fields the user did not state (recomputed, so a stated
    field is never reported as assumed whatever the fill-in step recorded)."""
    if filled is None:
        return query.model_dump(mode="json") if query is not None else None
    stated = query or Query()
    dumped = filled.model_dump(mode="json")
    stated_fields = set(stated.said())
    if stated.task is not Task.INFERENCE or "task" in stated.model_fields_set:
        stated_fields.add("task")
    dumped["defaulted"] = [
        name
        for name in dumped
        if name not in ("defaulted", "task") and dumped[name] is not None and name not in stated_fields
    ]
    return dumped


# -- entry points --------------------------------------------------------------------------------------


def answer(text: str, *, previous: Query | None = None, lang: str | None = None) -> Answer:
    """Answer one message. Never raises.

    Pure for a given price file (the data files are read once), so answers are cached: a team chat asks
    the same few questions again and again.
    """
    return _answer(text, previous, lang, price_book_in_force())


def answer_query(query: Query, *, lang: str) -> Answer:
    """Recompute for a stored or edited query (buttons edit the message in place). Never raises."""
    return _answer_query(query, lang, price_book_in_force())


@lru_cache(maxsize=4096)
def _answer(text: str, previous: Query | None, lang: str | None, _book: object) -> Answer:
    chosen: Lang = _lang(lang) if lang else "en"
    try:
        from core.parser import detect_lang, parse

        if not lang:
            chosen = _lang(detect_lang(text))
        parsed = parse(text, previous=previous)
        if not lang:
            chosen = _lang(getattr(parsed, "lang", chosen))
        return _dispatch(parsed, text, previous, chosen)
    except Exception:
        log.exception("answer failed for %r", text[:200])
        return error_answer(chosen, "internal")


@lru_cache(maxsize=4096)
def _answer_query(query: Query, lang: str, _book: object) -> Answer:
    chosen = _lang(lang)
    try:
        return _fit_or_plan(query, chosen)
    except Exception:
        log.exception("answer_query failed for %s", query.model_dump_json())
        return error_answer(chosen, "internal", query=query)


def apply_action(query: Query, action: str) -> Query:
    """A button's action applied: 'method=qlora', 'precision=int4', 'seq=8192', 'card=<id>', 'gpus=2',
    'model=<id>', 'params_b=13', 'task=inference'. The changed field counts as stated. 'details' and
    'ask=…' leave the query as it is (the bot shows the full answer / asks the question)."""
    if action == "details" or action.startswith("ask="):
        return query
    name, sep, value = action.partition("=")
    if not sep or name not in Query.model_fields or name == "defaulted":
        raise ValueError(f"unknown action: {action!r}")
    said = query.said()
    said["task"] = query.task
    said[name] = value
    if name == "method":
        if query.task is Task.INFERENCE:
            said["task"] = Task.FINETUNE
        if value == Method.QLORA.value and said.get("precision") not in (None, Precision.NF4, Precision.INT4):
            said.pop("precision")
    elif name == "model":
        said.pop("params_b", None)
    elif name == "params_b":
        said.pop("model", None)
    elif name == "card":
        said.pop("card_memory_bytes", None)
    elif name == "task" and value == Task.INFERENCE.value:
        said.pop("method", None)
    try:
        return Query.model_validate(said)
    except ValidationError as err:
        raise ValueError(f"bad value in action {action!r}") from err


# -- dispatch ------------------------------------------------------------------------------------------


def _lang(value: object) -> Lang:
    return "zh" if str(value).lower().startswith("zh") else "en"


def _dispatch(parsed: Any, text: str, previous: Query | None, lang: Lang) -> Answer:
    intent = str(getattr(parsed, "intent", "fit"))
    query: Query | None = getattr(parsed, "query", None)
    if intent == "help":
        return help_answer(lang)
    if getattr(parsed, "unknown_model", None):
        name = str(parsed.unknown_model)
        return unknown_model_answer(lang, name, load_registry().closest(name), query)
    if intent == "clarify" or getattr(parsed, "clarify", None):
        return clarify_answer(lang, str(getattr(parsed, "clarify", None) or "model"), query)
    if intent == "faq":
        return faq_answer(lang, str(parsed.faq), query)
    if intent == "scenario":
        return scenario_answer(lang, str(parsed.scenario), query)
    cards = [c if isinstance(c, str) else c.id for c in (getattr(parsed, "cards", None) or [])]
    if intent == "card" and cards:
        return card_answer(lang, cards[0], query)
    if intent == "compare" and len(cards) >= 2:
        return compare_answer(lang, cards, query)
    if intent in ("card", "compare"):
        return card_answer(lang, cards[0], query) if cards else clarify_answer(lang, "card", query)
    if query is None:
        return clarify_answer(lang, "model", None)
    if getattr(parsed, "compare_methods", False) and query.method is None and query.task is Task.INFERENCE:
        query = query.model_copy(update={"task": Task.FINETUNE})
    if intent == "plan":
        return plan_answer(query, lang)
    return _fit_or_plan(query, lang)


def _fit_or_plan(query: Query, lang: Lang) -> Answer:
    if not query.model and not query.params_b:
        return clarify_answer(lang, "model", query)
    try:
        if query.task is Task.FINETUNE and query.method is None:
            return methods_answer(query, lang)
        return fit_answer(query, lang)
    except UnknownModelError as err:
        return unknown_model_answer(lang, err.name, err.suggestions, query)
    except UnknownCardError as err:
        return unknown_card_answer(lang, err.name, err.suggestions, query)


# -- building answers ----------------------------------------------------------------------------------


def _pack(
    kind: Kind,
    lang: Lang,
    template: str,
    data: dict[str, Any],
    *,
    query: Query | None = None,
    filled: Query | None = None,
    compact_template: str | None = None,
    buttons: list[list[Button]] | None = None,
    facts: dict[str, Any] | None = None,
) -> Answer:
    """Render full and compact forms, keep both inside Telegram's limit, derive title and summary."""
    html = render(template, lang, compact=False, short=False, **data)
    if utf16_len(html) > TELEGRAM_LIMIT:
        html = render(template, lang, compact=False, short=True, **data)
    if utf16_len(html) > TELEGRAM_LIMIT:
        html = split_message(html, TELEGRAM_LIMIT)[0]
    if compact_template:
        compact = render(compact_template, lang, compact=True, short=True, **data)
    else:
        compact = render(template, lang, compact=True, short=True, **data)
    if utf16_len(compact) > TELEGRAM_LIMIT:
        compact = split_message(compact, TELEGRAM_LIMIT)[0]
    lines = [line.strip() for line in plain_text(compact).splitlines() if line.strip()]
    title = lines[0] if lines else kind
    summary = " ".join(lines[1:]) if len(lines) > 1 else title
    return Answer(
        kind=kind,
        lang=lang,
        query=query,
        filled_query=filled,
        html=html,
        compact_html=compact,
        title=title[:256],
        summary=summary[:512],
        buttons=buttons or [],
        facts=facts or {},
    )


def _currency(query: Query | None, lang: Lang) -> str:
    if query is not None and query.currency is not None:
        return query.currency.value
    return Currency.CNY.value if lang == "zh" else Currency.USD.value


def _card_or_none(card_id: str | None) -> Card | None:
    if not card_id:
        return None
    catalog = load_catalog()
    if card_id in catalog.by_id:
        return catalog.get(card_id)
    match = catalog.resolve(card_id)
    return match.card if match else None


@lru_cache(maxsize=32)
def _macro_module(lang: Lang, module: str) -> Any:
    """templates/<lang>/<module>.j2 instantiated once per language (its macros are pure)."""
    return environment().get_template(f"{lang}/{module}.j2").make_module({"lang": lang})


def _call_macro(lang: Lang, module: str, name: str, *args: Any, **kwargs: Any) -> str:
    """A macro of templates/<lang>/<module>.j2 as plain text: labels and example questions live in templates
    like every other sentence, but buttons want text, not HTML."""
    macro = cast(Callable[..., str], getattr(_macro_module(lang, module), name))
    return html_lib.unescape(str(macro(*args, **kwargs)))


def model_label(est: Estimate, lang: str) -> str:
    """The model's name; a bare size is called by its size ('13B model'), worded by the templates."""
    if not est.representative_shape:
        return est.model_name
    size = est.query.params_b or round(est.params / 1e9, 1)
    return _call_macro(_lang(lang), "_words", "size_model", size).strip()


def _model_label(model_id: str) -> str:
    registry = load_registry()
    return registry.get(model_id).name if model_id in registry.by_id else model_id


# -- fit -----------------------------------------------------------------------------------------------


def folk_reason(est: Estimate) -> str:
    """Why the exact figure differs from the article's rule: one code, worded by the templates."""
    total, low, high = est.total_bytes, est.folk.low_bytes, est.folk.high_bytes
    b = est.breakdown
    q = est.query
    if low * 0.9 <= total <= high * 1.1:
        return "close"
    if total < low:
        if q.task is not Task.INFERENCE and q.method in (Method.LORA, Method.QLORA, Method.FREEZE):
            return "adapters_only"
        if q.gpus and q.gpus > 1:
            return "sharded"
        return "small_overhead"
    extras = {
        "kv_cache": b.kv_cache,
        "activations": b.activations + b.logits,
        "model_states": b.gradients + b.optimizer + (b.weights - est.folk.weights_bytes),
    }
    return max(extras, key=lambda k: extras[k])


def main_verdict(est: Estimate) -> Verdict | None:
    gpus = est.query.gpus or 1
    for verdict in est.verdicts:
        if verdict.count == gpus:
            return verdict
    return est.verdicts[-1] if est.verdicts else None


def _rows(est: Estimate, capacity: int | None) -> list[dict[str, Any]]:
    scale = capacity or est.total_bytes or 1
    shown = [name for name in COMPONENTS if getattr(est.breakdown, name) >= MIN_SHOWN_BYTES]
    return [
        {
            "name": name,
            "bytes": getattr(est.breakdown, name),
            "fraction": getattr(est.breakdown, name) / scale,
        }
        for name in shown
    ]


def _assumptions(est: Estimate, stated: Query) -> list[tuple[str, Any]]:
    """(field, value) for what was assumed, worth a reader's check; never a field the user stated."""
    filled = est.query
    said = stated.said()
    items: list[tuple[str, Any]] = []
    training = filled.task is not Task.INFERENCE
    for name in ASSUMPTION_ORDER:
        if name in said:
            continue
        value = getattr(filled, name)
        if value is None:
            continue
        if not training and name in ("method", "lora_rank", "grad_checkpointing", "optimizer", "zero_stage"):
            continue
        if training and name == "runtime":
            continue
        if name == "lora_rank" and filled.method not in (Method.LORA, Method.QLORA):
            continue
        if name == "gpus" and not (filled.card or filled.card_memory_bytes):
            continue
        if name == "zero_stage" and (filled.gpus or 1) == 1:
            continue
        if name == "optimizer" and filled.method is Method.QLORA:
            continue
        items.append((name, value.value if hasattr(value, "value") else value))
    return items


def _speed(est: Estimate, card: Card | None) -> dict[str, Any] | None:
    if card is None:
        return None
    from core import speed

    gpus = est.query.gpus or 1
    if est.query.task is Task.INFERENCE:
        result: BaseModel = speed.inference_speed(est, card, gpus)
        kind = "inference"
    else:
        result = speed.training_speed(est, card, gpus, est.query.tokens)
        kind = "training"
    return {"kind": kind, **result.model_dump(mode="json")}


def _price(card_id: str, currency: str) -> CardPrice | None:
    """The card's typical hourly price in `currency`, or None when the price list has none."""
    try:
        return load_price_book().price_for(card_id, currency)
    except PriceBookError:
        log.warning("price list unreadable", exc_info=True)
        return None


def _cost(est: Estimate, card: Card | None, speed: dict[str, Any] | None, currency: str) -> JobCost | None:
    if card is None:
        return None
    price = _price(card.id, currency)
    if price is None:
        return None
    tokens_per_s = speed.get("aggregate_tokens_per_s") if speed and speed["kind"] == "inference" else None
    hours = speed.get("training_hours") if speed and speed["kind"] == "training" else None
    return job_cost(price, est.query.gpus or 1, tokens_per_s=tokens_per_s, hours=hours)


def _fix_action(fix: Fix) -> str | None:
    """The button that applies a fix, when one field says it."""
    q = fix.query
    actions = {
        "grad_checkpointing": "grad_checkpointing=true",
        "adamw_8bit": "optimizer=adamw_8bit",
        "smaller_batch": f"batch={q.batch}",
        "fp8": "precision=fp8",
        "int8": "precision=int8",
        "int4": "precision=int4",
        "lora": "method=lora",
        "qlora": "method=qlora",
        "shorter_context": f"seq={q.seq}",
        "more_cards": f"gpus={fix.count}",
        "bigger_card": f"card={fix.card}",
    }
    return actions.get(fix.kind)


def _fix_rows(query: Query, currency: str) -> list[dict[str, Any]]:
    rows = []
    for fix in advisor.fixes(query, currency=Currency(currency)):
        card = _card_or_none(fix.card)
        rows.append({"fix": fix, "card_name": card.name if card else fix.card, "action": _fix_action(fix)})
    return rows


def _plans(query: Query, currency: str, limit: int = 5) -> list[Plan]:
    return advisor.plans(query, limit=limit, currency=Currency(currency))


def _cheaper(query: Query, card: Card, currency: str) -> Plan | None:
    """A plan on another card that also fits and costs clearly less per hour than this card."""
    own = _price(card.id, currency)
    if own is None:
        return None
    filled = query.with_defaults()
    keep = {"card": None, "card_memory_bytes": None, "precision": filled.precision, "method": filled.method}
    base = query.model_copy(update=keep)
    for plan in advisor.plans(base, limit=3, currency=Currency(currency)):
        if plan.card == card.id or plan.cost_per_hour is None:
            continue
        if plan.verdict is Fit.FITS and plan.cost_per_hour < 0.8 * own.per_hour * (query.gpus or 1):
            return plan
    return None


def fit_view(query: Query, lang: Lang, *, light: bool = False) -> tuple[Estimate, dict[str, Any]]:
    """Everything the fit templates show, as data; `light` skips the advice searches (speed, price, fixes)."""
    est = estimate(query)
    filled = est.query
    card = _card_or_none(filled.card)
    verdict = main_verdict(est)
    single = next((v for v in est.verdicts if v.count == 1), None)
    capacity = verdict.capacity_bytes if verdict else None
    currency = _currency(query, lang)
    fits = verdict is not None and verdict.fits is not Fit.NO
    speed = _speed(est, card) if fits and not light else None
    cost = _cost(est, card, speed, currency) if not light else None
    fixes = (
        _fix_rows(query, currency)
        if verdict is not None and verdict.fits is not Fit.FITS and not light
        else []
    )
    plans = _plans(query, currency) if card is None and capacity is None and not light else []
    cheaper = None
    if card is not None and verdict is not None and verdict.fits is Fit.FITS and not light:
        cheaper = _cheaper(query, card, currency)
    view: dict[str, Any] = {
        "est": est,
        "q": filled,
        "model_name": model_label(est, lang),
        "card": card,
        "card_label": card.name if card else None,
        "capacity": capacity,
        "verdict": verdict,
        "single": single if single is not None and single is not verdict else None,
        "rows": _rows(est, capacity),
        "total": est.total_bytes,
        "folk": est.folk,
        "folk_reason": folk_reason(est),
        "bytes_per_weight": est.folk.weights_bytes / max(est.params, 1),
        "assumptions": _assumptions(est, query),
        "warnings": est.warnings,
        "notes": verdict.notes if verdict else [],
        "speed": speed,
        "cost": cost,
        "currency": currency,
        "fixes": fixes,
        "plans": plans,
        "cheaper": cheaper,
    }
    return est, view


def _fit_facts(est: Estimate, view: dict[str, Any]) -> dict[str, Any]:
    return {
        "model_name": est.model_name,
        "verdict": view["verdict"].fits.value if view["verdict"] else None,
        "verdicts": [v.model_dump(mode="json") for v in est.verdicts],
        "breakdown": est.breakdown.as_dict(),
        "total_bytes": est.total_bytes,
        "peak_phase": est.peak_phase,
        "uncertainty": est.uncertainty,
        "folk_rule": {
            "weights_bytes": est.folk.weights_bytes,
            "factor": [est.folk.low_factor, est.folk.high_factor],
            "margin": est.folk.margin,
            "low_bytes": est.folk.low_bytes,
            "high_bytes": est.folk.high_bytes,
            "reason": view["folk_reason"],
        },
        "assumed": [name for name, _ in view["assumptions"]],
        "warnings": est.warnings,
        "speed": view["speed"],
        "cost": view["cost"].model_dump(mode="json") if view["cost"] else None,
        "fixes": [
            row["fix"].model_dump(mode="json", exclude={"query"}) | {"action": row["action"]}
            for row in view["fixes"]
        ],
        "plans": [advisor.plan_json(p) for p in view["plans"]],
        "cheaper": advisor.plan_json(view["cheaper"]) if view["cheaper"] else None,
    }


def fit_answer(query: Query, lang: Lang) -> Answer:
    est, view = fit_view(query, lang)
    return _pack(
        "fit",
        lang,
        "fit",
        {"v": view},
        query=query,
        filled=est.query,
        compact_template="fit_compact",
        buttons=fit_buttons(query, est, view, lang),
        facts=_fit_facts(est, view),
    )


def recommend_method(views: dict[Method, dict[str, Any]]) -> Method:
    """Full fine-tuning when it fits with room to spare (small models: the best quality for no extra card),
    else LoRA when it fits (the usual choice), else QLoRA, else full if it alone fits, else the smallest."""
    full = views[Method.FULL]["verdict"]
    if full is not None and full.fits is Fit.FITS:
        return Method.FULL
    for method in (Method.LORA, Method.QLORA, Method.FULL):
        verdict = views[method]["verdict"]
        if verdict is not None and verdict.fits is not Fit.NO:
            return method
    if all(views[m]["verdict"] is None for m in views):
        return Method.LORA
    return min(views, key=lambda m: views[m]["total"])


def methods_answer(query: Query, lang: Lang) -> Answer:
    """'Fine-tune' with no method: full, LoRA and QLoRA side by side, the recommended one in detail."""
    views: dict[Method, dict[str, Any]] = {}
    estimates: dict[Method, Estimate] = {}
    for method in TRAINING_METHODS:
        variant = query.model_copy(update={"method": method, "task": Task.FINETUNE})
        estimates[method], views[method] = fit_view(variant, lang, light=True)
    best = recommend_method(views)
    est, view = fit_view(query.model_copy(update={"method": best, "task": Task.FINETUNE}), lang)
    views[best] = view
    data = {"v": view, "methods": [(m.value, views[m]) for m in TRAINING_METHODS], "best": best.value}
    facts = _fit_facts(est, view) | {
        "recommended_method": best.value,
        "methods": {
            m.value: {
                "total_bytes": views[m]["total"],
                "verdict": views[m]["verdict"].fits.value if views[m]["verdict"] else None,
            }
            for m in TRAINING_METHODS
        },
    }
    return _pack(
        "fit",
        lang,
        "methods_side_by_side",
        data,
        query=query,
        filled=est.query.model_copy(update={"method": None}),
        buttons=fit_buttons(query.model_copy(update={"method": best}), est, view, lang, all_methods=True),
        facts=facts,
    )


def plan_answer(query: Query, lang: Lang) -> Answer:
    try:
        est, view = fit_view(query.model_copy(update={"card": None, "card_memory_bytes": None}), lang)
    except UnknownModelError as err:
        return unknown_model_answer(lang, err.name, err.suggestions, query)
    return _pack(
        "plan",
        lang,
        "plan",
        {
            "plans": view["plans"],
            "currency": view["currency"],
            "model_name": view["model_name"],
            "estimate": est,
            "query": est.query,
            "full": False,
        },
        query=query,
        filled=est.query,
        facts=_fit_facts(est, view),
    )


# -- buttons -------------------------------------------------------------------------------------------


def button_label(lang: Lang, action: str, **extra: Any) -> str:
    """Button words live in templates/<lang>/_buttons.j2; labels are plain text."""
    name, _, value = action.partition("=")
    return _call_macro(lang, "_buttons", "label", name, value, **extra).strip()


def _button(lang: Lang, action: str, **extra: Any) -> Button:
    if "card" in extra:
        extra["card"] = fmt_card_name(str(extra["card"]))
    return Button(label=button_label(lang, action, **extra), action=action)


def fit_buttons(
    query: Query, est: Estimate, view: dict[str, Any], lang: Lang, *, all_methods: bool = False
) -> list[list[Button]]:
    filled = est.query
    rows: list[list[Button]] = []
    if filled.task is Task.INFERENCE:
        rows.append(
            [_button(lang, f"precision={p.value}") for p in PRECISION_CHOICES if p is not filled.precision]
        )
    elif filled.task is Task.FINETUNE:
        current = None if all_methods else filled.method
        rows.append([_button(lang, f"method={m.value}") for m in TRAINING_METHODS if m is not current])
    seq = filled.seq or DEFAULT_SEQ
    rows.append([_button(lang, f"seq={s}") for s in CONTEXT_CHOICES if s != seq])
    extra: list[Button] = []
    verdict = view["verdict"]
    for row in view["fixes"]:
        action = row["action"]
        if action and len(extra) < 3 and not action.startswith(("seq=", "method=", "precision=")):
            extra.append(_button(lang, action, card=row["card_name"]))
    if verdict is not None and verdict.fits is Fit.NO and not extra:
        bigger = _bigger_card(verdict.need_bytes, view["card"])
        if bigger is not None:
            extra.append(_button(lang, f"card={bigger.id}", card=bigger.name))
    for plan in ([view["cheaper"]] if view["cheaper"] else []) + view["plans"][:1]:
        extra.append(_button(lang, f"card={plan.card}", card=plan.card_name))
    if extra:
        rows.append(extra)
    rows.append([_button(lang, "details")])
    return [row for row in rows if row]


def _bigger_card(need_bytes: int, current: Card | None) -> Card | None:
    """The most rented card with room for `need_bytes` (with 10% to spare), other than the current one."""
    candidates = [
        c
        for c in load_catalog().cards
        if c.memory_bytes >= need_bytes * 1.1 and (current is None or c.id != current.id)
    ]
    return candidates[0] if candidates else None


# -- card facts and comparisons ------------------------------------------------------------------------


def card_view(card: Card, currency: str) -> dict[str, Any]:
    price = _price(card.id, currency)
    return {"card": card, "price": price, "memory_bytes": card.memory_bytes}


def card_answer(lang: Lang, card_id: str, query: Query | None) -> Answer:
    card = _card_or_none(card_id)
    if card is None:
        return unknown_card_answer(lang, card_id, load_catalog().closest(card_id), query)
    currency = _currency(query, lang)
    view = card_view(card, currency)
    fits = what_fits(card)
    buttons = [[_button(lang, f"ask={q}") for q in _card_questions(lang, card)]]
    return _pack(
        "card",
        lang,
        "card",
        {"c": view, "fits": fits, "currency": currency},
        query=query,
        buttons=buttons,
        facts={"cards": [_card_facts(view)], "what_fits": fits},
    )


def _card_questions(lang: Lang, card: Card) -> list[str]:
    text = _call_macro(lang, "_buttons", "card_questions", fmt_card_name(card.name))
    return [line.strip() for line in text.splitlines() if line.strip()]


def _card_facts(view: dict[str, Any]) -> dict[str, Any]:
    card: Card = view["card"]
    return card.model_dump(mode="json", exclude={"aliases", "notes", "source"}) | {
        "memory_bytes": card.memory_bytes,
        "price": view["price"].model_dump(mode="json") if view["price"] else None,
    }


# Sizes people ask about, for "what fits on this card" (billions of parameters, dense).
SIZE_LADDER = (1.5, 3.0, 7.0, 8.0, 14.0, 32.0, 70.0, 110.0, 180.0, 405.0)


def what_fits(card: Card) -> list[dict[str, Any]]:
    """The largest common dense size that fits one card for four typical jobs (bare-size estimates)."""
    jobs = (
        ("inference", Query(task=Task.INFERENCE, precision=Precision.BF16)),
        ("inference_int4", Query(task=Task.INFERENCE, precision=Precision.INT4)),
        ("lora", Query(task=Task.FINETUNE, method=Method.LORA)),
        ("qlora", Query(task=Task.FINETUNE, method=Method.QLORA)),
    )
    rows: list[dict[str, Any]] = []
    for job, base in jobs:
        best: float | None = None
        for size in SIZE_LADDER:
            est = estimate(base.model_copy(update={"params_b": size, "card": card.id}))
            verdict = main_verdict(est)
            if verdict is None or verdict.fits is Fit.NO:
                break
            best = size
        rows.append({"job": job, "params_b": best})
    return rows


def compare_answer(lang: Lang, card_ids: list[str], query: Query | None) -> Answer:
    cards: list[Card] = []
    for card_id in card_ids:
        card = _card_or_none(card_id)
        if card is None:
            return unknown_card_answer(lang, card_id, load_catalog().closest(card_id), query)
        if card not in cards:
            cards.append(card)
    if len(cards) < 2:
        return card_answer(lang, cards[0].id, query)
    currency = _currency(query, lang)
    views = [card_view(c, currency) for c in cards[:6]]
    verdicts: list[dict[str, Any]] = []
    if query is not None and (query.model or query.params_b):
        for view in views:
            est = estimate(query.model_copy(update={"card": view["card"].id, "card_memory_bytes": None}))
            verdict = main_verdict(est)
            if verdict is not None:
                verdicts.append(
                    {
                        "card": view["card"],
                        "verdict": verdict,
                        "model_name": model_label(est, lang),
                        "q": est.query,
                    }
                )
    leaders = _leaders(views)
    return _pack(
        "compare",
        lang,
        "compare",
        {"cards": views, "leaders": leaders, "verdicts": verdicts, "currency": currency},
        query=query,
        facts={
            "cards": [_card_facts(v) for v in views],
            "verdicts": [v["verdict"].model_dump(mode="json") for v in verdicts if v["verdict"] is not None],
        },
    )


def _leaders(views: list[dict[str, Any]]) -> dict[str, Card | None]:
    cards: list[Card] = [v["card"] for v in views]
    priced = [(v["price"].per_hour, v["card"]) for v in views if v["price"] is not None]
    return {
        "memory": max(cards, key=lambda c: c.memory_bytes),
        "bandwidth": max(cards, key=lambda c: c.bandwidth_gb_s),
        "compute": max(cards, key=lambda c: c.tensor_tflops),
        "cheapest": min(priced, key=lambda p: p[0])[1] if priced else None,
    }


# -- FAQ, scenarios, help, clarify, errors -------------------------------------------------------------


def faq_answer(lang: Lang, faq_id: str, query: Query | None) -> Answer:
    if faq_id not in FAQ_IDS:
        return help_answer(lang)
    catalog = load_catalog()
    currency = _currency(query, lang)
    cards = {cid: catalog.get(cid) for cid in FAQ_CARDS}
    data: dict[str, Any] = {"cards": cards, "faq": faq_id, "examples": [], "decode": {}, "prices": {}}
    if faq_id == "folk_rule":
        data["examples"] = _folk_examples(query, lang)
    elif faq_id == "bandwidth":
        data["decode"] = _decode_examples(cards)
    elif faq_id == "vram_price":
        data["prices"] = {
            "small": _price("a100-40gb-sxm", currency),
            "big": _price("a100-80gb-sxm", currency),
        }
    return _pack("faq", lang, f"faq_{faq_id}", data, query=query, facts={"faq": faq_id})


FAQ_CARDS = ("rtx-4090", "a100-80gb-sxm", "h100-sxm", "a100-40gb-sxm")


def _folk_examples(query: Query | None, lang: Lang) -> list[dict[str, Any]]:
    """The user's own job when they named one, else the article's 7B example as full fine-tune and LoRA."""
    if query is not None and (query.model or query.params_b):
        samples = [query.model_copy(update={"card": None, "card_memory_bytes": None})]
    else:
        samples = [
            Query(task=Task.FINETUNE, method=Method.FULL, params_b=7.0),
            Query(task=Task.FINETUNE, method=Method.LORA, params_b=7.0),
        ]
    views = []
    for sample in samples:
        try:
            views.append(fit_view(sample, lang, light=True)[1])
        except (UnknownModelError, UnknownCardError):
            continue
    return views


def _decode_examples(cards: dict[str, Card]) -> dict[str, float]:
    """Tokens/s one 8B bf16 model decodes at on each card: the bandwidth FAQ's worked example."""
    from core import speed

    result: dict[str, float] = {}
    for card_id, card in cards.items():
        est = estimate(Query(model="llama-3.1-8b", card=card_id))
        result[card_id] = speed.inference_speed(est, card, 1).decode_tokens_per_s
    return result


def scenario_answer(lang: Lang, name: str, query: Query | None) -> Answer:
    if name not in SCENARIO_IDS:
        return help_answer(lang)
    currency = _currency(query, lang)
    advice = advisor.scenario(name, currency=Currency(currency))
    catalog = load_catalog()
    names = {c.id: c.name for c in catalog.cards}
    return _pack(
        "scenario",
        lang,
        f"scenario_{name}",
        {"a": advice, "names": names, "scenario": name, "currency": currency},
        query=query,
        facts={"scenario": name, "advice": advice.model_dump(mode="json")},
    )


def help_answer(lang: Lang) -> Answer:
    text = _call_macro(lang, "_buttons", "help_questions")
    examples = [line.strip() for line in text.splitlines() if line.strip()]
    return _pack(
        "help",
        lang,
        "help",
        {"examples": examples},
        buttons=[[_button(lang, f"ask={q}")] for q in examples[:3]],
    )


def clarify_answer(lang: Lang, missing: str, query: Query | None) -> Answer:
    """One short question with choices for buttons (what is missing: 'model', 'card', 'task')."""
    missing = missing if missing in ("model", "card", "task") else "model"
    registry = load_registry()
    if missing == "card":
        choices = [
            _button(lang, f"card={c}", card=load_catalog().get(c).name)
            for c in ("rtx-4090", "a100-80gb-sxm", "h100-sxm")
        ]
    elif missing == "task":
        choices = [_button(lang, a) for a in ("task=inference", "method=lora", "method=full")]
    else:
        choices = [_button(lang, f"model={m}", card=registry.get(m).name) for m in SUGGESTED_MODELS]
        choices.append(_button(lang, f"params_b={SUGGESTED_SIZE_B:g}"))
    return _pack(
        "clarify",
        lang,
        "clarify",
        {"missing": missing, "choices": [b.label for b in choices]},
        query=query,
        buttons=[choices],
        facts={"missing": missing, "choices": [b.model_dump() for b in choices]},
    )


def unknown_model_answer(lang: Lang, name: str, suggestions: list[str], query: Query | None) -> Answer:
    names = [(s, _model_label(s)) for s in suggestions[:3]]
    buttons = [[_button(lang, f"model={s}", card=label) for s, label in names]]
    if not names:
        buttons = [[_button(lang, f"model={m}", card=_model_label(m)) for m in SUGGESTED_MODELS]]
    return _pack(
        "clarify",
        lang,
        "unknown_model",
        {"name": name, "suggestions": [label for _, label in names], "what": "model"},
        query=query,
        buttons=buttons,
        facts={"missing": "model", "unknown": name, "suggestions": suggestions},
    )


def unknown_card_answer(lang: Lang, name: str, suggestions: list[str], query: Query | None) -> Answer:
    catalog = load_catalog()
    cards = [catalog.get(s) for s in suggestions[:3] if s in catalog.by_id]
    return _pack(
        "clarify",
        lang,
        "unknown_model",
        {"name": name, "suggestions": [c.name for c in cards], "what": "card"},
        query=query,
        buttons=[[_button(lang, f"card={c.id}", card=c.name) for c in cards]] if cards else [],
        facts={"missing": "card", "unknown": name, "suggestions": [c.id for c in cards]},
    )


def error_answer(lang: Lang, code: str, *, query: Query | None = None) -> Answer:
    """A friendly apology; never a traceback. Rendering itself failing falls back to fixed text."""
    try:
        return _pack("error", lang, "error", {"code": code}, query=query)
    except Exception:
        log.exception("rendering the error answer failed")
        text = (
            "Sorry, something went wrong. Please try again." if lang == "en" else "抱歉，出错了，请再试一次。"
        )
        return Answer(
            kind="error",
            lang=lang,
            query=query,
            filled_query=None,
            html=text,
            compact_html=text,
            summary=text,
            title=text,
        )


# -- CLI -----------------------------------------------------------------------------------------------


def estimate_view(est: Estimate, lang: str = "en") -> dict[str, Any]:
    """Data for templates/<lang>/estimate.j2 (`gpufit estimate` without --json)."""
    filled = est.query
    card = _card_or_none(filled.card)
    verdict = main_verdict(est)
    stated = Query.model_validate(
        {k: v for k, v in filled.model_dump().items() if k not in filled.defaulted and k != "defaulted"}
    )
    view = {
        "est": est,
        "q": filled,
        "model_name": model_label(est, lang),
        "card": card,
        "card_label": card.name if card else None,
        "capacity": verdict.capacity_bytes if verdict else None,
        "verdict": verdict,
        "verdicts": est.verdicts,
        "single": None,
        "rows": _rows(est, verdict.capacity_bytes if verdict else None),
        "total": est.total_bytes,
        "folk": est.folk,
        "folk_reason": folk_reason(est),
        "bytes_per_weight": est.folk.weights_bytes / max(est.params, 1),
        "assumptions": _assumptions(est, stated),
        "warnings": est.warnings,
        "notes": verdict.notes if verdict else [],
        "speed": None,
        "cost": None,
        "currency": "USD",
        "fixes": [],
        "plans": [],
    }
    return {"v": view, "compact": False, "short": False}
