"""Free-text answers of each step, in either language: a job, a model or size, a precision, a shape,
a workload, a budget, a card."""

from __future__ import annotations

import re

from core.catalog import Card, load_catalog, normalize_name
from core.checklist.model import (
    BATCH_RANGE,
    PARAMS_B_RANGE,
    SEQ_RANGE,
    ChecklistAnswers,
    Job,
    Step,
    StepError,
    default_currency,
)
from core.checklist.numbers import chinese_number, find_numbers, params_b_from_text
from core.query import DEFAULT_SEQ, Currency, Precision
from core.registry import load_registry


def _read_job(answers: ChecklistAnswers, text: str, lang: str) -> ChecklistAnswers | StepError:
    job = _job_from_text(text)
    if job is None:
        return StepError(code="job_unclear")
    return answers.model_copy(update={"job": job})


_QLORA_WORDS = re.compile(r"q-?lora", re.IGNORECASE)
_LORA_WORDS = re.compile(r"lora|adapter|peft", re.IGNORECASE)
_PRETRAIN_WORDS = re.compile(r"pre-?train|from scratch|预训练|从头|从零", re.IGNORECASE)
_FULL_WORDS = re.compile(r"\bfull\b|全参|全量", re.IGNORECASE)
_FINETUNE_WORDS = re.compile(r"fine-?tun|finetun|\bsft\b|\btrain|微调|训练|精调", re.IGNORECASE)
_INFERENCE_WORDS = re.compile(
    r"infer|serv|deploy|chat|\bapi\b|\brun|host|推理|部署|服务|上线|对话|聊天|跑", re.IGNORECASE
)


def _job_from_text(text: str) -> Job | None:
    try:
        return Job(text)
    except ValueError:
        pass
    if _QLORA_WORDS.search(text):
        return Job.QLORA
    if _LORA_WORDS.search(text):
        return Job.LORA
    if _PRETRAIN_WORDS.search(text):
        return Job.PRETRAIN
    if _FULL_WORDS.search(text):
        return Job.FULL
    if _FINETUNE_WORDS.search(text):
        return Job.UNSURE
    if _INFERENCE_WORDS.search(text):
        return Job.INFERENCE
    return None


def _read_model(answers: ChecklistAnswers, text: str, lang: str) -> ChecklistAnswers | StepError:
    registry = load_registry()
    if text.startswith("m:") and text[2:] in registry.by_id:
        return answers.model_copy(update={"model": text[2:], "params_b": None})
    if text.startswith("p:"):
        text = text[2:]
    match = registry.resolve(text)
    if match is not None:
        return answers.model_copy(update={"model": match.model.id, "params_b": None})
    size = params_b_from_text(text)
    if size is not None:
        if not PARAMS_B_RANGE[0] <= size <= PARAMS_B_RANGE[1]:
            return StepError(code="model_size_range")
        return answers.model_copy(update={"model": None, "params_b": size})
    found = _model_in_sentence(text)
    if found is not None:
        return answers.model_copy(update={"model": found, "params_b": None})
    return StepError(code="model_unknown", suggestions=registry.closest(text))


def _model_in_sentence(text: str) -> str | None:
    """A registry name inside a longer answer ("we use Qwen2.5 7B instruct")."""
    registry = load_registry()
    words = re.split(r"[\s,，。;；]+", text.strip())
    for width in range(min(len(words), 4), 0, -1):
        for begin in range(len(words) - width + 1):
            match = registry.resolve(" ".join(words[begin : begin + width]))
            if match is not None:
                return match.model.id
    return None


_PRECISION_WORDS: tuple[tuple[Precision, re.Pattern[str]], ...] = (
    (Precision.NF4, re.compile(r"nf4|qlora", re.IGNORECASE)),
    (Precision.BF16, re.compile(r"bf16|bfloat", re.IGNORECASE)),
    (Precision.FP32, re.compile(r"fp32|float32|32[- ]?bit|32位|全精度|单精度", re.IGNORECASE)),
    (Precision.FP16, re.compile(r"fp16|float16|16[- ]?bit|16位|半精度|half", re.IGNORECASE)),
    (Precision.FP8, re.compile(r"fp8|float8", re.IGNORECASE)),
    (Precision.INT8, re.compile(r"int8|8[- ]?bit|8位|八位", re.IGNORECASE)),
    (Precision.INT4, re.compile(r"int4|4[- ]?bit|4位|四位|gptq|awq", re.IGNORECASE)),
)
_TRAINABLE_PRECISIONS = (Precision.FP32, Precision.BF16, Precision.FP16)


def _read_precision(answers: ChecklistAnswers, text: str, lang: str) -> ChecklistAnswers | StepError:
    precision = precision_from_text(text)
    if precision is None:
        return StepError(code="precision_unclear")
    if answers.job in (Job.FULL, Job.PRETRAIN) and precision not in _TRAINABLE_PRECISIONS:
        return StepError(code="precision_not_trainable")
    return answers.model_copy(update={"precision": precision})


_BARE_BITS = {"32": Precision.FP32, "16": Precision.FP16, "8": Precision.INT8, "4": Precision.INT4}


def precision_from_text(text: str) -> Precision | None:
    lowered = text.strip().lower()
    if lowered in _BARE_BITS:
        return _BARE_BITS[lowered]
    for precision in Precision:
        if lowered == precision.value:
            return precision
    for precision, pattern in _PRECISION_WORDS:
        if pattern.search(text):
            return precision
    for precision in Precision:
        if precision.value in lowered:  # GGUF names inside a sentence: "q4_k_m please"
            return precision
    return None


_BATCH_AFTER = re.compile(
    r"^\s*(?:concurrent\s+|parallel\s+|simultaneous\s+)?"
    r"(?:users?|sessions?|requests?|seqs?|sequences?|concurren|people|并发|个?用户|人|路|条并发)",
    re.IGNORECASE,
)
_BATCH_BEFORE = re.compile(
    r"(?:batch(?:[ _-]?size)?|\bbs|users?|concurrency|并发数?|用户数?|批次?大小?|批量)"
    r"\s*(?:of\s*)?[:=：]?\s*(?:约|大约|about|~)?\s*$",
    re.IGNORECASE,
)


def _read_shape(answers: ChecklistAnswers, text: str, lang: str) -> ChecklistAnswers | StepError:
    if text.startswith("s:"):
        seq_text, _, batch_text = text[2:].partition(":")
        if seq_text.isdigit() and batch_text.isdigit():
            return _shape(answers, int(seq_text), int(batch_text))
    numbers = find_numbers(text)
    if not numbers:
        return StepError(code="shape_unclear")
    seq: int | None = None
    batch: int | None = None
    for number in numbers:
        is_batch = bool(
            _BATCH_AFTER.match(text[number.end : number.end + 24])
            or _BATCH_BEFORE.search(text[max(0, number.start - 24) : number.start])
        )
        if not is_batch and seq is None and (number.multiplier > 1 or number.value >= 128):
            seq = number.tokens()
        elif batch is None and number.multiplier == 1:
            batch = int(number.value)
    if seq is None and batch is None:
        return StepError(code="shape_unclear")
    return _shape(
        answers, seq if seq is not None else answers.seq, batch if batch is not None else answers.batch
    )


def _shape(answers: ChecklistAnswers, seq: int | None, batch: int | None) -> ChecklistAnswers | StepError:
    if seq is not None and not SEQ_RANGE[0] <= seq <= SEQ_RANGE[1]:
        return StepError(code="seq_range")
    if batch is not None and not BATCH_RANGE[0] <= batch <= BATCH_RANGE[1]:
        return StepError(code="batch_range")
    return answers.model_copy(update={"seq": seq, "batch": batch})


_PER_DAY_FACTORS: tuple[tuple[re.Pattern[str], float], ...] = (
    (re.compile(r"qps|per ?s(ec(ond)?)?\b|/s\b|每秒", re.IGNORECASE), 86_400.0),
    (re.compile(r"per ?min(ute)?|/min|每分钟|每分", re.IGNORECASE), 1_440.0),
    (re.compile(r"per ?h(our)?\b|/h\b|an hour|hourly|每小时|每个小时|/小时", re.IGNORECASE), 24.0),
    (re.compile(r"per ?week|a week|weekly|每周|每星期", re.IGNORECASE), 1 / 7),
    (re.compile(r"per ?month|a month|monthly|每月|每个月", re.IGNORECASE), 1 / 30),
)
_SAMPLE_WORDS = re.compile(r"samples?|examples?|rows?|records?|条|样本|个样|对话", re.IGNORECASE)
_EPOCH_WORDS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:epochs?|轮|遍|个epoch)", re.IGNORECASE)


def _read_workload(answers: ChecklistAnswers, text: str, lang: str) -> ChecklistAnswers | StepError:
    if text.startswith("r:") or text.startswith("t:"):
        try:
            value = float(text[2:])
        except ValueError:
            return StepError(code="workload_unclear")
        if value <= 0:
            return StepError(code="workload_unclear")
        field = "requests_per_day" if text.startswith("r:") else "tokens"
        return answers.model_copy(update={field: value})
    epochs_match = _EPOCH_WORDS.search(text)
    body = text[: epochs_match.start()] + text[epochs_match.end() :] if epochs_match else text
    numbers = [n for n in find_numbers(body) if n.total > 0]
    if not numbers:
        return StepError(code="workload_unclear")
    amount = numbers[0].total
    if answers.serving:
        factor = next((f for pattern, f in _PER_DAY_FACTORS if pattern.search(text)), 1.0)
        return answers.model_copy(update={"requests_per_day": amount * factor})
    if _SAMPLE_WORDS.search(body):
        amount *= answers.seq or DEFAULT_SEQ  # samples × tokens per sample (the context of step 4)
    if epochs_match:
        amount *= float(epochs_match.group(1))
    return answers.model_copy(update={"tokens": amount})


_NO_BUDGET = re.compile(
    r"^\s*(no|none|n/a|no limit|unlimited|any|whatever|skip|不限|没有|无|随便|都行|不知道|没预算)\W*$",
    re.IGNORECASE,
)
_CNY_WORDS = re.compile(r"¥|￥|元|块|rmb|cny|人民币|yuan", re.IGNORECASE)
_USD_WORDS = re.compile(r"\$|usd|dollar|美元|美金|刀", re.IGNORECASE)
_PER_HOUR_WORDS = re.compile(
    r"/\s*h\b|/\s*hr|per ?h(ou)?r|an hour|hourly|a hour|/小时|每小时|一小时|每卡时|时租|每个小时|/时",
    re.IGNORECASE,
)


def _read_budget(answers: ChecklistAnswers, text: str, lang: str) -> ChecklistAnswers | StepError:
    if text == "b:none" or _NO_BUDGET.match(text):
        return answers.model_copy(
            update={
                "budget": None,
                "budget_per_hour": None,
                "currency": answers.currency or default_currency(lang),
            }
        )
    if text.startswith("b:"):
        parts = text.split(":")
        if len(parts) == 4 and parts[1] in ("h", "t") and parts[2] in Currency.__members__:
            try:
                amount = float(parts[3])
            except ValueError:
                return StepError(code="budget_unclear")
            return answers.model_copy(
                update={"budget": amount, "budget_per_hour": parts[1] == "h", "currency": Currency(parts[2])}
            )
        return StepError(code="budget_unclear")
    numbers = [n for n in find_numbers(text) if n.total > 0]
    if not numbers:
        return StepError(code="budget_unclear")
    currency = (
        Currency.CNY
        if _CNY_WORDS.search(text)
        else Currency.USD
        if _USD_WORDS.search(text)
        else default_currency(lang)
    )
    return answers.model_copy(
        update={
            "budget": numbers[0].total,
            "budget_per_hour": bool(_PER_HOUR_WORDS.search(text)),
            "currency": currency,
        }
    )


_RECOMMEND = re.compile(
    r"recommend|suggest|you (choose|pick|decide)|any|no pref|don'?t know|not sure"
    r"|推荐|建议|不知道|随便|都行|帮我选|你选",
    re.IGNORECASE,
)
_COUNT_PATTERNS = (
    re.compile(r"(\d+)\s*[x×*]\s*(?=\D)", re.IGNORECASE),
    re.compile(r"[x×*]\s*(\d+)\b", re.IGNORECASE),
    re.compile(r"(\d+|[一二两三四五六七八九十]+)\s*(?:张|块|卡|台|个|片|cards?|gpus?)", re.IGNORECASE),
)


def _read_card(answers: ChecklistAnswers, text: str, lang: str) -> ChecklistAnswers | StepError:
    catalog = load_catalog()
    if text == "c:rec":
        return answers.model_copy(update={"card": None, "gpus": None})
    if text.startswith("c:"):
        card_id, _, count = text[2:].partition(":")
        if card_id in catalog.by_id and count.isdigit() and 1 <= int(count) <= 4096:
            return answers.model_copy(update={"card": card_id, "gpus": int(count)})
        return StepError(code="card_unknown")
    card = card_in_text(text)
    if card is None:
        if _RECOMMEND.search(text):
            return answers.model_copy(update={"card": None, "gpus": None})
        return StepError(code="card_unknown", suggestions=catalog.closest(text))
    gpus = count_in_text(text, card)
    if gpus is not None and not 1 <= gpus <= 4096:
        return StepError(code="gpus_range")
    return answers.model_copy(update={"card": card.id, "gpus": gpus})


def card_in_text(text: str) -> Card | None:
    """The card a free-text answer names: the whole answer, else the longest alias found inside it."""
    catalog = load_catalog()
    match = catalog.resolve(text)
    if match is not None:
        return match.card
    normalized = f" {normalize_name(text)} "
    for key in catalog.alias_keys:
        if len(key) >= 2 and re.search(rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9])", normalized):
            found = catalog.resolve(key)
            if found is not None:
                return found.card
    return None


def count_in_text(text: str, card: Card) -> int | None:
    """How many cards an answer asks for ("2x 4090", "4090 × 2", "两张A100"), not the card's own digits."""
    for pattern in _COUNT_PATTERNS:
        for match in pattern.finditer(text):
            raw = match.group(1)
            value = int(raw) if raw.isdigit() else int(chinese_number(raw) or 0)
            if (
                value
                and str(value) not in card.id.replace("-", " ").split()
                and value != int(card.memory_gib)
            ):
                return value
    return None


READERS = {
    Step.JOB: _read_job,
    Step.MODEL: _read_model,
    Step.PRECISION: _read_precision,
    Step.SHAPE: _read_shape,
    Step.WORKLOAD: _read_workload,
    Step.BUDGET: _read_budget,
    Step.CARD: _read_card,
}
