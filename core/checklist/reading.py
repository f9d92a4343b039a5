"""Free-text answers of each step, read with the parser's own readers (core/parser): one vocabulary, one
numeral table and one set of names for questions and checklist answers alike.

A step takes what it asks for; what else the answer states for a later step that has no answer yet is kept
there ("serve llama 3.1 70b for users" at the job step also answers the model step). Bare numbers mean what
the step asks: "7" at the model step is 7B, "16" at the precision step is 16-bit, "4096" at the shape step
is a context length. Button presses arrive as choice ids ("m:qwen2.5-7b", "b:h:USD:5").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from core.catalog import load_catalog
from core.checklist.model import (
    BATCH_RANGE,
    PARAMS_B_RANGE,
    SEQ_RANGE,
    STEPS,
    ChecklistAnswers,
    Job,
    Step,
    StepError,
    default_currency,
)
from core.data_amount import data_tokens
from core.parser.amounts import amounts, requests_per_day
from core.parser.entities import Extraction, extract
from core.parser.jobs import read_host_memory
from core.parser.normalize import normalize
from core.query import Currency, Method, Precision, Query, Task
from core.registry import load_registry

Updates = dict[str, Any]

# Answers that leave a choice to gpufit: "no limit" at the budget, "recommend" at the cards, "not sure" at
# the job. They are answers to the checklist's own questions, not facts of a job, so they live here.
_NO_PREFERENCE = re.compile(
    r"^\W*(?:no|none|n/a|nope|no\s+limit|unlimited|any|whatever|不限|没有|无|随便|都行|没预算|无所谓)\W*$"
)
_RECOMMEND = re.compile(
    r"recommend|suggest|you\s+(?:choose|pick|decide)|any|no\s+pref|don'?t\s+know|not\s+sure"
    r"|推荐|建议|不知道|随便|都行|帮我选|你选"
)
_NOT_SURE = re.compile(r"not\s+sure|don'?t\s+know|unsure|no\s+idea|不确定|不知道|不清楚|没想好")

_JOBS: dict[tuple[Task, Method | None], Job] = {
    (Task.INFERENCE, None): Job.INFERENCE,
    (Task.FINETUNE, Method.FULL): Job.FULL,
    (Task.FINETUNE, Method.LORA): Job.LORA,
    (Task.FINETUNE, Method.QLORA): Job.QLORA,
    (Task.FINETUNE, None): Job.UNSURE,
    (Task.PRETRAIN, None): Job.PRETRAIN,
    (Task.PRETRAIN, Method.FULL): Job.PRETRAIN,
}
_TRAINABLE_PRECISIONS = (Precision.FP32, Precision.BF16, Precision.FP16)
_BITS = {32: Precision.FP32, 16: Precision.FP16, 8: Precision.INT8, 4: Precision.INT4}


def read_answer(
    step: Step, answers: ChecklistAnswers, text: str, lang: str
) -> tuple[ChecklistAnswers, list[Step]] | StepError:
    """The answers with this step's answer, and the later steps the text also filled; or why not."""
    if _is_choice(step, text):
        outcome = _CHOICES[step](answers, text, lang)
        return outcome if isinstance(outcome, StepError) else (answers.model_copy(update=outcome), [])
    norm = normalize(text)
    ex = extract(norm)
    own = _READERS[step](answers, norm, ex, lang)
    if isinstance(own, StepError):
        return own
    updated = answers.model_copy(update=own)
    noted: list[Step] = []
    for later in STEPS[STEPS.index(step) + 1 :]:
        if updated.has(later):
            continue
        extra = _stated(later, updated, norm, ex, lang)
        if extra:
            updated = updated.model_copy(update=extra)
            noted.append(later)
    return updated, noted


# -- each step's own reading ----------------------------------------------------------------------------


def _job(answers: ChecklistAnswers, norm: str, ex: Extraction, lang: str) -> Updates | StepError:
    job = _job_of(ex)
    if job is None:
        # "full", "lora" alone name a fine-tuning method: read them as the parser reads "full fine-tune".
        method = extract(f"{norm} fine-tune").fields.get("method")
        if isinstance(method, Method) and method in (Method.FULL, Method.LORA, Method.QLORA):
            job = _JOBS[(Task.FINETUNE, method)]
        elif _NOT_SURE.search(norm):
            job = Job.UNSURE
    return {"job": job} if job is not None else StepError(code="job_unclear")


def _job_of(ex: Extraction) -> Job | None:
    task = ex.fields.get("task")
    method = ex.fields.get("method")
    if not isinstance(task, Task):
        return None
    return _JOBS.get((task, method if isinstance(method, Method) else None), _JOBS.get((task, None)))


# Words around a bare size that do not make it a name ("about 7 billion parameters", "70亿左右的模型").
_SIZE_WORDS = re.compile(
    r"params?|parameters?|billion|million|model|size|about|around|roughly|approx\w*|dense"
    r"|参数量?|的|模型|大概|左右|大约|约|规模"
)


def _model(answers: ChecklistAnswers, norm: str, ex: Extraction, lang: str) -> Updates | StepError:
    stated = _model_stated(ex) or _bare_size(norm)
    if stated is None:
        return StepError(code="model_unknown", suggestions=load_registry().closest(norm))
    size = stated.get("params_b")
    if isinstance(size, float) and not PARAMS_B_RANGE[0] <= size <= PARAMS_B_RANGE[1]:
        return StepError(code="model_size_range")
    return stated


def _bare_size(norm: str) -> Updates | None:
    """A size without "B": "7" is 7B (the step asks for billions), "500m" half a billion; "32k" is no size."""
    found = amounts(norm)
    if len(found) != 1:
        return None
    amount = found[0]
    rest = _SIZE_WORDS.sub(" ", norm[: amount.start] + " " + norm[amount.end :])
    if re.search(r"[a-z\u4e00-\u9fff]{2,}", rest) or amount.unit in ("k", "千", "w", "万"):
        return None
    value = amount.value
    return {"model": None, "params_b": value if not amount.unit and value < 1e5 else value / 1e9}


def _model_stated(ex: Extraction) -> Updates | None:
    if "model" in ex.fields:
        return {"model": ex.fields["model"], "params_b": None}
    if "params_b" in ex.fields:
        return {"model": None, "params_b": float(str(ex.fields["params_b"]))}
    return None


def _precision(answers: ChecklistAnswers, norm: str, ex: Extraction, lang: str) -> Updates | StepError:
    precision = ex.fields.get("precision")
    if not isinstance(precision, Precision):
        bare = amounts(norm)
        bits = int(bare[0].value) if len(bare) == 1 and not bare[0].unit else None
        precision = _BITS.get(bits) if bits is not None else None
    if precision is None:
        return StepError(code="precision_unclear")
    if answers.job in (Job.FULL, Job.PRETRAIN) and precision not in _TRAINABLE_PRECISIONS:
        return StepError(code="precision_not_trainable")
    return {"precision": precision}


def _shape(answers: ChecklistAnswers, norm: str, ex: Extraction, lang: str) -> Updates | StepError:
    seq = _int(ex.fields.get("seq"))
    batch = _int(ex.fields.get("batch"))
    if batch is None:
        # this step asks how many are served at once, so a bare '16 users' here answers that question
        # (in a free question it is a headcount: core/advisor/traffic.py sizes the share at once)
        batch = _int(ex.fields.get("users"))
    for amount in amounts(ex.residue):  # what the parser left: "4096, batch 8", "2k × 16", "32k, 4 at once"
        if seq is None and (amount.unit or amount.value >= 128):
            seq = amount.tokens
        elif batch is None and not amount.unit and amount.value >= 1:
            batch = int(amount.value)
    if seq is None and batch is None:
        return StepError(code="shape_unclear")
    if seq is not None and not SEQ_RANGE[0] <= seq <= SEQ_RANGE[1]:
        return StepError(code="seq_range")
    if batch is not None and not BATCH_RANGE[0] <= batch <= BATCH_RANGE[1]:
        return StepError(code="batch_range")
    return {
        "seq": seq if seq is not None else answers.seq,
        "batch": batch if batch is not None else answers.batch,
    }


def _int(value: object) -> int | None:
    return int(str(value)) if value is not None else None


def _workload(answers: ChecklistAnswers, norm: str, ex: Extraction, lang: str) -> Updates | StepError:
    if answers.serving:
        per_day = requests_per_day(norm)
        if per_day is None or per_day <= 0:
            return StepError(code="workload_unclear")
        return {"requests_per_day": per_day}
    data = {name: ex.fields[name] for name in _DATA_FIELDS if name in ex.fields}
    if not data.keys() & {"tokens", "samples", "text_bytes"}:
        bare = [a for a in amounts(ex.residue) if a.value > 0]
        if len(bare) != 1:
            return StepError(code="workload_unclear")
        data["tokens"] = bare[0].value  # the step asks for an amount of data: a bare "50m" is tokens
    counted = data_tokens(Query(task=answers.task, seq=answers.seq, **data))
    if counted is None or counted.tokens <= 0:
        return StepError(code="workload_unclear")
    return {
        "tokens": counted.tokens,
        "samples": counted.samples,
        "sample_tokens": counted.sample_tokens,
        "epochs": counted.epochs if counted.basis != "tokens" or not counted.epochs_assumed else None,
        "text_bytes": counted.text_bytes,
    }


# What the parser reads about an amount of training data (core/data_amount.py turns it into tokens).
_DATA_FIELDS = ("tokens", "samples", "epochs", "text_bytes", "text_lang")


def _budget(answers: ChecklistAnswers, norm: str, ex: Extraction, lang: str) -> Updates | StepError:
    if _NO_PREFERENCE.match(norm):
        return _no_budget(answers, lang)
    stated = _budget_stated(ex)
    if stated is not None:
        return stated
    bare = [a for a in amounts(norm) if a.value > 0]
    if not bare:
        return StepError(code="budget_unclear")
    return {
        "budget": bare[0].value,
        "budget_period": "total",
        "currency": answers.currency or default_currency(lang),
    }


def _no_budget(answers: ChecklistAnswers, lang: str) -> Updates:
    return {
        "budget": None,
        "budget_period": None,
        "currency": answers.currency or default_currency(lang),
    }


def _budget_stated(ex: Extraction) -> Updates | None:
    if "budget" not in ex.fields:
        return None
    amount = float(str(ex.fields["budget"]))
    period = ex.fields.get("budget_period")
    # a day's or a week's budget is held as its month (30 days), the checklist's unit for a running service
    per_month = {"day": 30.0, "week": 30.0 / 7.0}.get(str(period))
    if per_month is not None:
        amount, period = amount * per_month, "month"
    updates: Updates = {"budget": amount, "budget_period": period}
    if isinstance(ex.fields.get("currency"), Currency):
        updates["currency"] = ex.fields["currency"]
    return updates


def _card(answers: ChecklistAnswers, norm: str, ex: Extraction, lang: str) -> Updates | StepError:
    stated = _card_stated(ex)
    if stated is not None:
        gpus = stated.get("gpus")
        if isinstance(gpus, int) and not 1 <= gpus <= 4096:
            return StepError(code="gpus_range")
        return stated
    if _RECOMMEND.search(norm) or _NO_PREFERENCE.match(norm):
        return {"card": None, "gpus": None}
    return StepError(code="card_unknown", suggestions=load_catalog().closest(norm))


def _card_stated(ex: Extraction) -> Updates | None:
    if not ex.cards:
        return None
    gpus = ex.fields.get("gpus")
    return {"card": ex.cards[0].card_id, "gpus": int(str(gpus)) if gpus is not None else None}


_NO_HOST = re.compile(
    r"^(?:no|none|skip|不用|不要|不|没有|无|不放内存|no\s+offload)\b|^(?:不用|不要|没有|无)"
)


def _host(answers: ChecklistAnswers, norm: str, ex: Extraction, lang: str) -> Updates | StepError:
    read = read_host_memory(norm, bare_size=True)
    if "host_memory_bytes" in read:
        return {"host_memory_type": None, "host_memory_channels": None} | read
    if _NO_HOST.search(norm):
        return {"host_memory_bytes": None, "host_memory_type": None, "host_memory_channels": None}
    return StepError(code="host_unclear")


_READERS: dict[Step, Callable[[ChecklistAnswers, str, Extraction, str], Updates | StepError]] = {
    Step.JOB: _job,
    Step.MODEL: _model,
    Step.PRECISION: _precision,
    Step.SHAPE: _shape,
    Step.WORKLOAD: _workload,
    Step.BUDGET: _budget,
    Step.CARD: _card,
    Step.HOST: _host,
}


def _stated(step: Step, answers: ChecklistAnswers, norm: str, ex: Extraction, lang: str) -> Updates | None:
    """What an answer to another step says for `step`, only from what the parser found by name (a model, a
    precision, a context or batch, tokens, money, a card), never from a bare number."""
    if step is Step.MODEL:
        return _model_stated(ex)
    if step is Step.PRECISION:
        precision = ex.fields.get("precision")
        if not isinstance(precision, Precision):
            return None
        if answers.job in (Job.FULL, Job.PRETRAIN) and precision not in _TRAINABLE_PRECISIONS:
            return None
        return {"precision": precision}
    if step is Step.SHAPE:
        shape: Updates = {name: _int(ex.fields.get(name)) for name in ("seq", "batch") if name in ex.fields}
        return shape or None
    if step is Step.WORKLOAD and not answers.serving and "tokens" in ex.fields:
        return {"tokens": float(str(ex.fields["tokens"])), "samples": None, "epochs": None}
    if step is Step.BUDGET:
        return _budget_stated(ex)
    if step is Step.CARD:
        return _card_stated(ex)
    if step is Step.HOST and "host_memory_bytes" in ex.fields:
        return {k: v for k, v in ex.fields.items() if k.startswith("host_memory_")}
    return None


# -- button presses ----------------------------------------------------------------------------------------

_CHOICE_PREFIX = {Step.MODEL: ("m:", "p:"), Step.SHAPE: ("s:",), Step.WORKLOAD: ("r:", "t:")}
_CHOICE_PREFIX |= {Step.BUDGET: ("b:",), Step.CARD: ("c:",), Step.HOST: ("h:",)}


def _is_choice(step: Step, text: str) -> bool:
    if step is Step.JOB:
        return text in {job.value for job in Job}
    if step is Step.PRECISION:
        return text in {p.value for p in Precision}
    return text.startswith(_CHOICE_PREFIX[step])


def _job_choice(answers: ChecklistAnswers, text: str, lang: str) -> Updates | StepError:
    return {"job": Job(text)}


def _model_choice(answers: ChecklistAnswers, text: str, lang: str) -> Updates | StepError:
    if text.startswith("m:") and text[2:] in load_registry().by_id:
        return {"model": text[2:], "params_b": None}
    try:
        size = float(text[2:])
    except ValueError:
        return StepError(code="model_unknown")
    if text.startswith("p:") and PARAMS_B_RANGE[0] <= size <= PARAMS_B_RANGE[1]:
        return {"model": None, "params_b": size}
    return StepError(code="model_unknown")


def _precision_choice(answers: ChecklistAnswers, text: str, lang: str) -> Updates | StepError:
    precision = Precision(text)
    if answers.job in (Job.FULL, Job.PRETRAIN) and precision not in _TRAINABLE_PRECISIONS:
        return StepError(code="precision_not_trainable")
    return {"precision": precision}


def _shape_choice(answers: ChecklistAnswers, text: str, lang: str) -> Updates | StepError:
    seq_text, _, batch_text = text[2:].partition(":")
    if seq_text.isdigit() and batch_text.isdigit():
        return {"seq": int(seq_text), "batch": int(batch_text)}
    return StepError(code="shape_unclear")


def _workload_choice(answers: ChecklistAnswers, text: str, lang: str) -> Updates | StepError:
    try:
        value = float(text[2:])
    except ValueError:
        return StepError(code="workload_unclear")
    if value <= 0:
        return StepError(code="workload_unclear")
    if text.startswith("r:"):
        return {"requests_per_day": value}
    return {"tokens": value, "samples": None, "sample_tokens": None, "epochs": None, "text_bytes": None}


def _budget_choice(answers: ChecklistAnswers, text: str, lang: str) -> Updates | StepError:
    if text == "b:none":
        return _no_budget(answers, lang)
    parts = text.split(":")
    if len(parts) == 4 and parts[1] in ("h", "t") and parts[2] in Currency.__members__:
        try:
            amount = float(parts[3])
        except ValueError:
            return StepError(code="budget_unclear")
        return {
            "budget": amount,
            "budget_period": "hour" if parts[1] == "h" else "total",
            "currency": Currency(parts[2]),
        }
    return StepError(code="budget_unclear")


def _card_choice(answers: ChecklistAnswers, text: str, lang: str) -> Updates | StepError:
    if text == "c:rec":
        return {"card": None, "gpus": None}
    card_id, _, count = text[2:].partition(":")
    if card_id in load_catalog().by_id and count.isdigit() and 1 <= int(count) <= 4096:
        return {"card": card_id, "gpus": int(count)}
    return StepError(code="card_unknown")


def _host_choice(answers: ChecklistAnswers, text: str, lang: str) -> Updates | StepError:
    if text == "h:none":
        return {"host_memory_bytes": None, "host_memory_type": None, "host_memory_channels": None}
    parts = text.split(":")
    if len(parts) == 4 and parts[1].isdigit() and parts[2] in ("ddr4", "ddr5") and parts[3].isdigit():
        return {
            "host_memory_bytes": int(parts[1]) * 10**9,
            "host_memory_type": parts[2],
            "host_memory_channels": int(parts[3]),
        }
    return StepError(code="host_unclear")


_CHOICES: dict[Step, Callable[[ChecklistAnswers, str, str], Updates | StepError]] = {
    Step.JOB: _job_choice,
    Step.MODEL: _model_choice,
    Step.PRECISION: _precision_choice,
    Step.SHAPE: _shape_choice,
    Step.WORKLOAD: _workload_choice,
    Step.BUDGET: _budget_choice,
    Step.CARD: _card_choice,
    Step.HOST: _host_choice,
}
