"""The guided pre-rental checklist as a pure state machine (no telegram, no sqlite).

The bot stores `ChecklistState` as JSON after every answer and feeds the user's next answer back in here, so a
restart resumes at the same step, and the same code drives the Telegram flow, the tests and any other
front end.
Each step takes a button's choice id or free text in either language ("70亿", "about 32k", "2 x 4090");
`skip` takes the default the prompt states, `back` returns to the previous step with its answer kept.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.advisor import Fix, Plan, fixes, plans
from core.catalog import Card, Segment, load_catalog, normalize_name
from core.estimator import Estimate, Fit, estimate
from core.query import DEFAULT_BATCH, DEFAULT_SEQ, Currency, Method, Precision, Query, Task
from core.registry import load_registry


class Step(StrEnum):
    JOB = "job"
    MODEL = "model"
    PRECISION = "precision"
    SHAPE = "shape"
    WORKLOAD = "workload"
    BUDGET = "budget"
    CARD = "card"


STEPS: tuple[Step, ...] = tuple(Step)
DONE = len(STEPS)

# What /skip takes at each step (the prompts state these).
DEFAULT_PARAMS_B = 7.0
DEFAULT_USERS = 1

PARAMS_B_RANGE = (0.01, 5000.0)
SEQ_RANGE = (16, 10_000_000)
BATCH_RANGE = (1, 100_000)


class Job(StrEnum):
    """The job choices of step 1 (button ids, also stored)."""

    INFERENCE = "infer"
    FULL = "ft_full"
    LORA = "ft_lora"
    QLORA = "ft_qlora"
    UNSURE = "ft_unsure"
    PRETRAIN = "pretrain"


_JOB_TASK: dict[Job, tuple[Task, Method | None]] = {
    Job.INFERENCE: (Task.INFERENCE, None),
    Job.FULL: (Task.FINETUNE, Method.FULL),
    Job.LORA: (Task.FINETUNE, Method.LORA),
    Job.QLORA: (Task.FINETUNE, Method.QLORA),
    Job.UNSURE: (Task.FINETUNE, None),
    Job.PRETRAIN: (Task.PRETRAIN, Method.FULL),
}


class ChecklistAnswers(BaseModel):
    """What the user answered so far; `None` means not asked yet, skipped, or "no preference"."""

    model_config = ConfigDict(extra="forbid")

    job: Job | None = None
    model: str | None = None
    params_b: float | None = Field(default=None, gt=0)
    precision: Precision | None = None
    seq: int | None = Field(default=None, ge=1)
    batch: int | None = Field(default=None, ge=1)
    tokens: float | None = Field(default=None, gt=0)
    requests_per_day: float | None = Field(default=None, gt=0)
    budget: float | None = Field(default=None, gt=0)
    budget_per_hour: bool | None = None
    currency: Currency | None = None
    card: str | None = None
    gpus: int | None = Field(default=None, ge=1, le=4096)
    skipped: list[Step] = Field(default_factory=list)

    @property
    def task(self) -> Task:
        return _JOB_TASK[self.job or Job.INFERENCE][0]

    @property
    def method(self) -> Method | None:
        return _JOB_TASK[self.job or Job.INFERENCE][1]

    @property
    def serving(self) -> bool:
        return self.task is Task.INFERENCE


class ChecklistState(BaseModel):
    """One user's place in the checklist: the step index (``DONE`` once finished) and the answers."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    step: int = Field(default=0, ge=0, le=DONE)
    lang: str = "en"
    answers: ChecklistAnswers = Field(default_factory=ChecklistAnswers)
    prompt_message_id: int | None = None

    @property
    def done(self) -> bool:
        return self.step >= DONE

    @property
    def current(self) -> Step | None:
        return None if self.done else STEPS[self.step]


class StepError(BaseModel):
    """Why an answer was not taken: a code the templates word, and names the user may have meant."""

    model_config = ConfigDict(frozen=True)

    code: str
    suggestions: list[str] = Field(default_factory=list)


# -- the machine ------------------------------------------------------------------------------------------


def start(lang: str = "en") -> ChecklistState:
    return ChecklistState(lang=lang)


def answer_step(state: ChecklistState, text: str) -> tuple[ChecklistState, StepError | None]:
    """Take a button choice id or free text for the current step; on an error the state is unchanged."""
    step = state.current
    if step is None:
        return state, StepError(code="finished")
    text = text.strip()
    if not text:
        return state, StepError(code="empty")
    outcome = _READERS[step](state.answers, text, state.lang)
    if isinstance(outcome, StepError):
        return state, outcome
    skipped = [s for s in outcome.skipped if s is not step]
    answers = outcome.model_copy(update={"skipped": skipped})
    return state.model_copy(update={"answers": answers, "step": state.step + 1}), None


def skip(state: ChecklistState) -> ChecklistState:
    """Take the stated default for the current step and move on."""
    step = state.current
    if step is None:
        return state
    answers = _apply_default(state.answers, step, state.lang)
    skipped = [*[s for s in answers.skipped if s is not step], step]
    answers = answers.model_copy(update={"skipped": skipped})
    return state.model_copy(update={"answers": answers, "step": state.step + 1})


def back(state: ChecklistState) -> ChecklistState:
    """One step back; the earlier answer stays until the user answers again."""
    return state.model_copy(update={"step": max(0, state.step - 1)})


def restart(state: ChecklistState) -> ChecklistState:
    return start(state.lang)


def _apply_default(answers: ChecklistAnswers, step: Step, lang: str) -> ChecklistAnswers:
    updates: dict[str, object]
    if step is Step.JOB:
        updates = {"job": Job.INFERENCE}
    elif step is Step.MODEL:
        updates = {"model": None, "params_b": DEFAULT_PARAMS_B}
    elif step is Step.PRECISION:
        updates = {"precision": None}
    elif step is Step.SHAPE:
        updates = {"seq": None, "batch": None}
    elif step is Step.WORKLOAD:
        updates = {"tokens": None, "requests_per_day": None}
    elif step is Step.BUDGET:
        updates = {"budget": None, "budget_per_hour": None, "currency": default_currency(lang)}
    else:
        updates = {"card": None, "gpus": None}
    return answers.model_copy(update=updates)


def default_currency(lang: str) -> Currency:
    return Currency.CNY if lang == "zh" else Currency.USD


def defaults(state: ChecklistState) -> dict[str, object]:
    """What /skip would take at the current step, for the prompt to state."""
    answers = state.answers
    step = state.current
    if step is Step.JOB:
        return {"job": Job.INFERENCE.value}
    if step is Step.MODEL:
        return {"params_b": DEFAULT_PARAMS_B}
    if step is Step.PRECISION:
        filled = Query(task=answers.task, method=answers.method).with_defaults()
        return {"precision": filled.precision.value if filled.precision else None}
    if step is Step.SHAPE:
        return {"seq": DEFAULT_SEQ, "batch": DEFAULT_USERS if answers.serving else DEFAULT_BATCH}
    if step is Step.BUDGET:
        return {"currency": default_currency(state.lang).value}
    return {}


# -- buttons ----------------------------------------------------------------------------------------------

_MODEL_CHOICES = (
    "m:qwen2.5-7b",
    "m:llama-3.1-8b",
    "m:qwen2.5-14b",
    "m:qwen2.5-32b",
    "m:llama-3.1-70b",
    "m:qwen2.5-72b",
)
_SHAPE_CHOICES_SERVING = ("s:4096:1", "s:8192:8", "s:8192:32", "s:32768:8", "s:131072:1")
_SHAPE_CHOICES_TRAINING = ("s:512:8", "s:2048:4", "s:4096:2", "s:8192:1", "s:32768:1")
_WORKLOAD_SERVING = ("r:1000", "r:10000", "r:100000", "r:1000000")
_WORKLOAD_FINETUNE = ("t:10000000", "t:100000000", "t:1000000000", "t:10000000000")
_WORKLOAD_PRETRAIN = ("t:10000000000", "t:100000000000", "t:1000000000000", "t:10000000000000")
_BUDGET_CHOICES = {
    "zh": (
        "b:none",
        "b:h:CNY:5",
        "b:h:CNY:20",
        "b:h:CNY:100",
        "b:t:CNY:1000",
        "b:t:CNY:10000",
        "b:t:CNY:100000",
    ),
    "en": ("b:none", "b:h:USD:1", "b:h:USD:5", "b:h:USD:20", "b:t:USD:200", "b:t:USD:2000", "b:t:USD:20000"),
}
_CARD_CHOICES = (
    "c:rec",
    "c:rtx-4090:1",
    "c:rtx-4090:2",
    "c:rtx-5090:1",
    "c:l40s:1",
    "c:a100-80gb-sxm:1",
    "c:h20:1",
    "c:h100-sxm:1",
    "c:h100-sxm:8",
)


def choices(step: Step, lang: str, answers: ChecklistAnswers | None = None) -> list[str]:
    """Button choice ids for a step (≤ 40 ASCII bytes each, so they fit in callback data)."""
    answers = answers or ChecklistAnswers()
    if step is Step.JOB:
        return [job.value for job in Job]
    if step is Step.MODEL:
        return ["p:7", "p:14", "p:32", "p:70", *_MODEL_CHOICES]
    if step is Step.PRECISION:
        if answers.job is Job.QLORA:
            return ["nf4", "int4"]
        if answers.task is not Task.INFERENCE and answers.job is not Job.LORA:
            return ["bf16", "fp16", "fp32"]
        return ["bf16", "fp16", "fp8", "int8", "int4"]
    if step is Step.SHAPE:
        return list(_SHAPE_CHOICES_SERVING if answers.serving else _SHAPE_CHOICES_TRAINING)
    if step is Step.WORKLOAD:
        if answers.serving:
            return list(_WORKLOAD_SERVING)
        return list(_WORKLOAD_PRETRAIN if answers.task is Task.PRETRAIN else _WORKLOAD_FINETUNE)
    if step is Step.BUDGET:
        return list(_BUDGET_CHOICES["zh" if lang == "zh" else "en"])
    return list(_CARD_CHOICES)


def choice_data(choice: str) -> dict[str, object]:
    """What a choice id means, for templates that label buttons (numbers, names, currency)."""
    kind, _, rest = choice.partition(":")
    parts = rest.split(":") if rest else []
    if kind == "p" and parts:
        return {"kind": "size", "params_b": float(parts[0])}
    if kind == "m" and parts:
        model = load_registry().by_id.get(parts[0])
        return {"kind": "model", "id": parts[0], "name": model.name if model else parts[0]}
    if kind == "s" and len(parts) == 2:
        return {"kind": "shape", "seq": int(parts[0]), "batch": int(parts[1])}
    if kind == "r" and parts:
        return {"kind": "requests", "per_day": float(parts[0])}
    if kind == "t" and parts:
        return {"kind": "tokens", "tokens": float(parts[0])}
    if kind == "b" and parts == ["none"]:
        return {"kind": "no_budget"}
    if kind == "b" and len(parts) == 3:
        return {
            "kind": "budget",
            "per_hour": parts[0] == "h",
            "currency": parts[1],
            "amount": float(parts[2]),
        }
    if kind == "c" and parts == ["rec"]:
        return {"kind": "recommend"}
    if kind == "c" and len(parts) == 2:
        card = load_catalog().by_id.get(parts[0])
        return {
            "kind": "card",
            "id": parts[0],
            "name": card.name if card else parts[0],
            "gpus": int(parts[1]),
        }
    return {"kind": "plain", "id": choice}


# -- reading answers --------------------------------------------------------------------------------------


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


_READERS = {
    Step.JOB: _read_job,
    Step.MODEL: _read_model,
    Step.PRECISION: _read_precision,
    Step.SHAPE: _read_shape,
    Step.WORKLOAD: _read_workload,
    Step.BUDGET: _read_budget,
    Step.CARD: _read_card,
}


# -- numbers people type ----------------------------------------------------------------------------------


class Number(BaseModel):
    """A number found in free text, with the multiplier its suffix gave (k, 万, 亿, B ...)."""

    model_config = ConfigDict(frozen=True)

    value: float
    multiplier: float = 1.0
    suffix: str = ""
    start: int
    end: int

    @property
    def total(self) -> float:
        return self.value * self.multiplier

    def tokens(self) -> int:
        """Context lengths: '32k' is 32,768 tokens (binary k), '3.2万' is 32,000."""
        if self.suffix.lower() == "k" and float(self.value).is_integer():
            return int(self.value) * 1024
        return int(self.total)


_SUFFIXES: dict[str, float] = {
    "万亿": 1e12,
    "千万": 1e7,
    "百万": 1e6,
    "亿": 1e8,
    "万": 1e4,
    "千": 1e3,
    "k": 1e3,
    "w": 1e4,
    "m": 1e6,
    "mn": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "g": 1e9,
    "t": 1e12,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
    "thousand": 1e3,
}
_NUMBER = re.compile(
    r"(?P<cn>[零〇一二两三四五六七八九十百千万亿]+)"
    r"|(?P<num>\d+(?:,\d{3})*(?:\.\d+)?)\s*"
    r"(?P<suffix>万亿|千万|百万|亿|万|千|million|billion|trillion|thousand|mn|bn|[kwmbgt](?![a-z]))?",
    re.IGNORECASE,
)
_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_BIG_UNITS = {"万": 10_000, "亿": 100_000_000}


def chinese_number(text: str) -> float | None:
    """'七十' → 70, '两' → 2, '一百二十八' → 128, '七十亿' → 7e9; None if it is not one."""
    total = 0.0
    section = 0.0
    digit: float | None = None
    for char in text:
        if char in _CN_DIGITS:
            digit = _CN_DIGITS[char]
        elif char in _CN_SMALL_UNITS:
            section += (digit if digit is not None else 1) * _CN_SMALL_UNITS[char]
            digit = None
        elif char in _CN_BIG_UNITS:
            section += digit or 0
            total = (
                (total + section) * _CN_BIG_UNITS[char]
                if char == "亿"
                else total + section * _CN_BIG_UNITS[char]
            )
            section = 0
            digit = None
        else:
            return None
    result = total + section + (digit or 0)
    return result if result > 0 else None


def find_numbers(text: str) -> list[Number]:
    """Every number in an answer, in order: '70亿' → 7e9, 'about 32k' → 32 × k, '两张' → 2, '5,000' → 5000."""
    found: list[Number] = []
    for match in _NUMBER.finditer(text):
        if match.group("cn"):
            value = chinese_number(match.group("cn"))
            if value is not None:
                found.append(Number(value=value, start=match.start(), end=match.end()))
            continue
        value = float(match.group("num").replace(",", ""))
        suffix = match.group("suffix") or ""
        multiplier = _SUFFIXES.get(suffix.lower(), 1.0)
        found.append(
            Number(value=value, multiplier=multiplier, suffix=suffix, start=match.start(), end=match.end())
        )
    return found


_SIZE_WORDS = re.compile(
    r"params?|parameters?|billion|million|model|size|about|around|roughly|approx\w*|dense"
    r"|参数量?|的|模型|大概|左右|大约|约|规模",
    re.IGNORECASE,
)


def params_b_from_text(text: str) -> float | None:
    """A model size: '7B', '70亿', '7', '500M', '1.5b parameters' → billions; None if no number."""
    numbers = find_numbers(text)
    if len(numbers) != 1:
        return None
    number = numbers[0]
    rest = _SIZE_WORDS.sub(" ", text[: number.start] + " " + text[number.end :])
    if re.search(r"[A-Za-z\u4e00-\u9fff]{2,}", rest):
        return None  # a name around the number ("llama-9000-ultra") is not a bare size
    if number.multiplier == 1.0:
        return number.value if number.value < 1e5 else number.value / 1e9  # a bare "7" means 7B
    if number.suffix.lower() in ("k", "千", "w", "万") and number.total < 1e6:
        return None  # "32k" is a context, not a model
    return number.total / 1e9


# -- the query and the result -----------------------------------------------------------------------------


def to_query(state: ChecklistState) -> Query:
    """The fit question the answers make (not-said fields stay None for `with_defaults` to fill)."""
    answers = state.answers
    params_b = answers.params_b
    if answers.model is None and params_b is None:
        params_b = DEFAULT_PARAMS_B
    return Query(
        task=answers.task,
        method=answers.method,
        model=answers.model,
        params_b=params_b if answers.model is None else None,
        card=answers.card,
        gpus=answers.gpus,
        precision=answers.precision,
        batch=answers.batch,
        seq=answers.seq,
        tokens=answers.tokens if not answers.serving else None,
        budget=answers.budget,
        budget_per_hour=answers.budget_per_hour,
        currency=answers.currency or default_currency(state.lang),
    )


# Days a serving deployment runs in the month the result prices (a calendar month, rounded).
DAYS_PER_MONTH = 30
HOURS_PER_DAY = 24
SAFETY_MARGIN = 1.2  # the article's redundancy factor on top of the estimate
PLAN_LIMIT = 6
MIN_SHOWN_SHARE = 0.001  # breakdown components below 0.1% of the total are left out of the sheet
CARD_PLAN_LIMIT = 3


class ProviderQuestion(BaseModel):
    """One question to ask the provider before paying; `cards` names the cards it is about."""

    model_config = ConfigDict(frozen=True)

    code: str
    cards: list[str] = Field(default_factory=list)


class CardCheck(BaseModel):
    """The preferred card against the need: one card's memory, all cards' memory, and the verdict."""

    model_config = ConfigDict(frozen=True)

    card: str
    card_name: str
    count: int
    count_said: bool
    card_bytes: int
    total_card_bytes: int
    need_per_card_bytes: int
    need_with_margin_bytes: int
    job_total_bytes: int
    verdict: Fit | None
    nvlink: bool
    consumer: bool


class ChecklistResult(BaseModel):
    """Everything the result sheet shows, as data; templates word it."""

    model_config = ConfigDict(frozen=True)

    lang: str
    answers: ChecklistAnswers
    query: Query
    estimate: Estimate
    model_name: str
    need_per_card_bytes: int
    need_with_margin_bytes: int
    margin: float = SAFETY_MARGIN
    check: CardCheck | None = None
    plans: list[Plan] = Field(default_factory=list)
    card_plans: list[Plan] = Field(default_factory=list)
    over_budget: bool = False
    fixes: list[Fix] = Field(default_factory=list)
    questions: list[ProviderQuestion] = Field(default_factory=list)
    currency: Currency
    requests_per_day: float | None = None
    hours_per_day: int = HOURS_PER_DAY
    days_per_month: int = DAYS_PER_MONTH


def result(state: ChecklistState) -> ChecklistResult:
    """The memory each card needs, the plans that fit and their cost, fixes for the preferred card, questions.

    Raises ValueError (UnknownModelError/UnknownCardError) only for names that left the data since the answer.
    """
    answers = state.answers
    asked = to_query(state)
    currency = asked.currency or default_currency(state.lang)
    card = load_catalog().by_id.get(asked.card) if asked.card else None

    general = asked.model_copy(update={"card": None, "gpus": None})
    found = plans(general, limit=PLAN_LIMIT, currency=currency)
    over_budget = False
    if not found and asked.budget is not None:
        found = plans(general.model_copy(update={"budget": None}), limit=PLAN_LIMIT, currency=currency)
        over_budget = bool(found)

    card_plans: list[Plan] = []
    count = asked.gpus
    if card is not None:
        card_plans = plans(
            asked.model_copy(update={"budget": None}), limit=CARD_PLAN_LIMIT, currency=currency
        )
        if count is None:
            count = card_plans[0].count if card_plans else 1
    est = estimate(asked.model_copy(update={"gpus": count}) if card is not None else asked)
    need = est.total_bytes
    check = _card_check(est, card, count or 1, answers.gpus is not None) if card is not None else None
    fix_list: list[Fix] = []
    if check is not None and check.verdict is not Fit.FITS:
        fix_list = fixes(asked.model_copy(update={"gpus": count}), currency=currency)
    return ChecklistResult(
        lang=state.lang,
        answers=answers,
        query=est.query,
        estimate=est,
        model_name=est.model_name,
        need_per_card_bytes=need,
        need_with_margin_bytes=int(need * SAFETY_MARGIN),
        check=check,
        plans=found,
        card_plans=card_plans,
        over_budget=over_budget,
        fixes=fix_list,
        questions=provider_questions(card, count or 1, found),
        currency=currency,
        requests_per_day=answers.requests_per_day if answers.serving else None,
    )


def _card_check(est: Estimate, card: Card, count: int, count_said: bool) -> CardCheck:
    verdict = next((v for v in est.verdicts if v.count == count), None)
    need = verdict.need_bytes if verdict else est.total_bytes
    return CardCheck(
        card=card.id,
        card_name=card.name,
        count=count,
        count_said=count_said,
        card_bytes=card.memory_bytes,
        total_card_bytes=card.memory_bytes * count,
        need_per_card_bytes=need,
        need_with_margin_bytes=int(need * SAFETY_MARGIN),
        job_total_bytes=need * count,
        verdict=verdict.fits if verdict else None,
        nvlink=card.has_nvlink,
        consumer=card.segment is Segment.CONSUMER,
    )


def provider_questions(card: Card | None, count: int, found: list[Plan]) -> list[ProviderQuestion]:
    """What to ask before renting, most decisive first; card-specific ones name the cards concerned."""
    catalog = load_catalog()
    considered = (
        [card] if card is not None else [catalog.by_id[p.card] for p in found[:3] if p.card in catalog.by_id]
    )
    names = list(dict.fromkeys(c.name for c in considered))
    multi = count > 1 or any(p.count > 1 for p in found[:3])
    pcie_only = [c.name for c in considered if not c.has_nvlink]
    consumer = [c.name for c in considered if c.segment is not Segment.DATACENTER]
    no_ecc = [c.name for c in considered if not c.ecc]
    questions = [
        ProviderQuestion(code="vram_fixed", cards=names),
        ProviderQuestion(code="driver_cuda", cards=names),
        ProviderQuestion(code="interconnect_multi" if multi else "interconnect", cards=pcie_only),
        ProviderQuestion(code="ecc", cards=no_ecc),
    ]
    if consumer:
        questions.append(ProviderQuestion(code="throttling", cards=list(dict.fromkeys(consumer))))
    questions += [ProviderQuestion(code="storage_bandwidth"), ProviderQuestion(code="billing")]
    return questions


# -- views for the templates ------------------------------------------------------------------------------


def short_card_name(card: Card) -> str:
    """'NVIDIA GeForce RTX 4090 24GB' → 'RTX 4090 24GB' (for buttons)."""
    return re.sub(r"^(NVIDIA\s+)?(GeForce\s+)?(AMD\s+)?(Instinct\s+)?", "", card.name).strip() or card.name


def answers_view(state: ChecklistState) -> dict[str, Any]:
    """The answers with names resolved and defaults filled, for prompts, the summary and the export."""
    answers = state.answers
    filled = to_query(state).with_defaults()
    model = load_registry().by_id.get(answers.model) if answers.model else None
    card = load_catalog().by_id.get(answers.card) if answers.card else None
    return {
        "answers": answers,
        "filled": filled,
        "model_name": model.name if model else None,
        "card_name": card.name if card else None,
        "serving": answers.serving,
        "training": not answers.serving,
        "currency": (answers.currency or default_currency(state.lang)).value,
        "steps": [step.value for step in STEPS],
        "defaults": defaults(state),
    }


def step_view(state: ChecklistState) -> dict[str, Any]:
    """Data for the current step's prompt."""
    step = state.current
    assert step is not None
    view = answers_view(state)
    current = _has_answer(state.answers, step)
    return {
        "step": step.value,
        "index": state.step + 1,
        "total": len(STEPS),
        "view": view,
        "serving": view["serving"],
        "training": view["training"],
        "current": current,
    }


def _has_answer(answers: ChecklistAnswers, step: Step) -> bool:
    if step in answers.skipped:
        return False
    fields = {
        Step.JOB: ("job",),
        Step.MODEL: ("model", "params_b"),
        Step.PRECISION: ("precision",),
        Step.SHAPE: ("seq", "batch"),
        Step.WORKLOAD: ("tokens", "requests_per_day"),
        Step.BUDGET: ("budget", "currency"),
        Step.CARD: ("card",),
    }[step]
    return any(getattr(answers, name) is not None for name in fields)


def choice_views(step: Step, lang: str, answers: ChecklistAnswers) -> list[dict[str, Any]]:
    """Every button of a step with what its label needs."""
    views: list[dict[str, Any]] = []
    for choice in choices(step, lang, answers):
        data = choice_data(choice) | {"id": choice}
        if data["kind"] == "card":
            card = load_catalog().by_id.get(str(data["id"]).split(":")[1])
            data["short"] = short_card_name(card) if card else data["name"]
        views.append(data)
    return views


def result_view(found: ChecklistResult, state: ChecklistState) -> dict[str, Any]:
    """Data for the result sheet and the export."""
    est = found.estimate
    catalog = load_catalog()
    view = answers_view(state)
    view["model_name"] = found.model_name
    view["filled"] = found.query
    shown = est.breakdown.total * MIN_SHOWN_SHARE
    rows = [
        {"name": name, "bytes": value} for name, value in est.breakdown.as_dict().items() if value > shown
    ]
    fix_cards = {f.card: catalog.by_id[f.card].name for f in found.fixes if f.card in catalog.by_id}
    return view | {
        "result": found,
        "rows": rows,
        "count": found.check.count if found.check else (found.query.gpus or 1),
        "bytes_per_weight": est.folk.weights_bytes / max(est.params, 1),
        "fix_cards": fix_cards,
    }
