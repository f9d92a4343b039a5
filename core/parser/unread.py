"""What a message states that the parser cannot use as written, found so the answer can say so.

A question is answered as asked or not at all: 'batch -4', 'on 0 GPUs', 'a 10000000B model', 'RTX 9999' and
'run Zorblax-9000' used to be dropped without a word (and the default, or the chat's previous model, took
their place). These readers find such values and names in the normalized, partly masked text and return
them as `Rejected` items (or the unknown model's name); `core.parser.pipeline` then asks back instead of
answering another question.
"""

from __future__ import annotations

import re
from functools import cache

from core.catalog import load_catalog
from core.parser.result import Rejected, RejectedWhat
from core.regex_screen import TextPattern, gated
from core.runtimes import load_runtimes
from core.vision.registry import load_vision_registry


def _c(pattern: str) -> TextPattern:
    return gated(pattern)  # no search where the strings every match holds are missing (regex_screen)


# A number that is no count, size or length: negative (ASCII or Unicode minus) or zero. An ASCII hyphen
# glued to the word before ('batch-1', 'a batch-64 decode', 'rank-8') joins a compound, as English writes
# it; a minus is spaced from the word or follows '=' / ':' ('batch -4', 'batch=-4').
_NOT_POSITIVE = r"(?P<v>(?:(?<![a-z])-|−)\s*\d+(?:\.\d+)?|0+(?:\.0+)?)(?![\d.])"
_SAID = r"\s*(?:=|:|of|为|是|设为|设成|取|用|to|at)?\s*"
_BATCH_KW = (
    r"(?:per[\s_-]*device[\s_-]*(?:train[\s_-]*)?batch[\s_-]*size|micro[\s_-]*batch(?:[\s_-]*size)?|"
    r"batch[\s_-]*size|batchsize|batch|bsz|(?<![a-z])bs|批大小|批量大小|批次大小|批量|批次)"
)
_SEQ_KW = (
    r"(?:上下文(?:长度|窗口)?|context(?:[\s_-]*(?:length|len|window|size))?|ctx(?:[\s_-]*len)?|"
    r"seq(?:uence)?(?:[\s_-]*len(?:gth)?)?|序列(?:长度)?|max[\s_-]*model[\s_-]*len|max[\s_-]*seq[\s_-]*len)"
)
_NUMBERS: tuple[tuple[RejectedWhat, TextPattern], ...] = (
    ("batch", _c(rf"{_BATCH_KW}{_SAID}{_NOT_POSITIVE}")),
    ("lora_rank", _c(rf"(?:lora[\s_-]*)?(?:rank|秩){_SAID}{_NOT_POSITIVE}")),
    ("lora_rank", _c(rf"lora[\s_-]*r\s*[=:]?\s*{_NOT_POSITIVE}")),
    ("seq", _c(rf"{_SEQ_KW}{_SAID}{_NOT_POSITIVE}")),
    (
        "gpus",
        _c(
            rf"(?<![a-z0-9._]){_NOT_POSITIVE}\s*(?:x\s*\ue000|(?:张|块|台|个)?\s*(?:卡|显卡|gpus?|cards?|\ue000))"
        ),
    ),
    ("gpus", _c(rf"(?:num[\s_-]*gpus|--gpus|(?<![a-z])gpus|卡数|显卡数|gpu数量?){_SAID}{_NOT_POSITIVE}")),
)


def read_bad_numbers(text: str) -> tuple[list[Rejected], str]:
    """Counts, batches, ranks and context lengths written as zero or negative; the text with them blanked
    (so '-2 GPUs' is never read as 2 GPUs)."""
    found: list[Rejected] = []
    spans: list[tuple[int, int]] = []
    for what, pattern in _NUMBERS:
        for match in pattern.finditer(text):
            if any(s < match.end("v") and match.start("v") < e for s, e in spans):
                continue
            typed = re.sub(r"\s+", "", match.group("v")).replace("−", "-")
            spans.append(match.span("v"))
            if all(r.what != what for r in found):
                value = abs(round(float(typed)))
                found.append(Rejected(what=what, typed=typed, reason="not_positive", fixed=value or None))
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + " " * (end - start) + text[end:]
    return found, text


# Card-looking names ('RTX 9999', 'GTX 1080', 'Radeon RX 7900 XTX', 'MI400', 'nvidia b300'), read after the
# catalog's own names were masked, so whatever is left is a card the catalog does not hold.
_CARD_LIKE = _c(
    r"(?<![a-z0-9])(?:(?:nvidia|geforce|amd|radeon|intel)\s*)*"
    r"(?:rtx|gtx|rx|titan|quadro|tesla|arc|instinct)\s*(?:pro\s*)?[a-z]?\d{2,5}[a-z]?"
    r"(?:\s*(?:ti|super|xtx|xt))?(?![a-z0-9])"
    # the brand without the series: 'radeon 7900xtx', 'geforce 5060 ti'
    r"|(?<![a-z0-9])(?:radeon|geforce)\s*(?:pro\s*)?\d{3,5}[a-z]?(?:\s*(?:ti|super|xtx|xt))?(?![a-z0-9])"
    r"|(?<![a-z0-9])(?:nvidia|amd)\s+[a-z]{1,2}\d{2,4}[a-z]?(?![a-z0-9])"
    r"|(?<![a-z0-9])(?:mi\d{3}[a-z]?|ascend\s*\d{3}[a-z]?\d?)(?![a-z0-9])"
    # a data-centre style name ('H300', 'A200', 'B300') where a card is expected: 'on a B300', '用H300',
    # '2张A200', 'B300 GPU'
    r"|(?:(?<=on )|(?<=an )|(?<=a )|(?<=用)|(?<=张)|(?<=块)|(?<=台)|(?<=x ))[abhlv]\d{2,3}[a-z]?(?![a-z0-9])"
    r"|(?<![a-z0-9])[abhlv]\d{2,3}[a-z]?(?=\s*(?:gpus?|cards?|显卡|卡)(?![a-z]))"
    r"|(?<![a-z0-9])[abhlv]\d{2,3}[a-z]?(?=\s*(?:能|可以|够|行|适合|跑|上|呢|吗|vs|或|还是|和|与|跟))"
)


def read_unknown_cards(text: str) -> tuple[list[Rejected], list[tuple[int, int]]]:
    """Card names the catalog lacks, with the catalog's closest names, and their spans (to be masked)."""
    catalog = load_catalog()
    found: list[Rejected] = []
    spans: list[tuple[int, int]] = []
    for match in _CARD_LIKE.finditer(text):
        typed = match.group(0).strip()
        if catalog.resolve(typed) is not None:
            continue
        spans.append(match.span())
        if all(r.typed != typed for r in found):
            found.append(
                Rejected(what="card", typed=typed, reason="unknown", suggestions=catalog.closest(typed))
            )
    return found, spans


# A model named where the job's model goes ('run Zorblax-9000', '微调zorblax-9000'), when no registry name,
# family or size was found: a name with letters and digits.
_MODEL_SLOT = _c(
    r"(?:(?<![a-z])(?:run|running|serve|serving|deploy|deploying|host|hosting|load|loading|fine[\s-]*tune|"
    r"fine[\s-]*tuning|finetune|finetuning|train|training|pretrain|lora|qlora|infer)\s+"
    r"(?:(?:a|an|the|my|our|this|that|model)\s+)?|(?:what|how)\s+about\s+(?:(?:a|an|the)\s+)?|跑|部署|运行|微调|训练|推理|加载|用|换成|改成)\s*"
    r"(?P<name>[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*)(?![a-z0-9])"
)
# Names that fill that slot but are not models: formats, switches and units.
_NOT_A_NAME = _c(
    r"(?:int|fp|bf|nf|q|w\d+a|fp8|mxfp|nvfp)\d+(?:_k(?:_[ms])?|_[01])?|\d*bits?|gguf|awq|gptq|exl2|x\d+"
    r"|v\d+|r\d+|k\d+|sm\d+|cuda\d*(?:\.\d+)*|zero\d?|step\d+|epoch\d+|top\d+"
)


# Words that fill the model's slot in a follow-up without naming a model ('run it on an H100', 'serve with
# vllm', 'train on 8 cards', 'fine-tune instead?').
_SLOT_WORDS = frozenset(
    [
        "it",
        "this",
        "that",
        "these",
        "those",
        "them",
        "one",
        "ones",
        "something",
        "anything",
        "everything",
        "same",
        "other",
        "another",
        "both",
        "all",
        "inference",
        "training",
        "finetuning",
        "serving",
        "locally",
        "local",
        "fast",
        "faster",
        "quickly",
        "smoothly",
        "well",
        "fine",
        "ok",
        "okay",
        "on",
        "with",
        "in",
        "at",
        "for",
        "to",
        "of",
        "by",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "without",
        "within",
        "via",
        "using",
        "and",
        "or",
        "but",
        "then",
        "also",
        "only",
        "just",
        "even",
        "still",
        "instead",
        "again",
        "too",
        "here",
        "there",
        "now",
        "later",
        "first",
        "a",
        "an",
        "the",
        "my",
        "our",
        "your",
        "their",
        "his",
        "her",
        "its",
        "model",
        "models",
        "llm",
        "llms",
        "weights",
        "checkpoint",
        "checkpoints",
        "what",
        "which",
        "how",
        "any",
        "some",
        "multiple",
        "several",
        "many",
        "two",
        "three",
        "four",
        "big",
        "bigger",
        "large",
        "larger",
        "largest",
        "biggest",
        "small",
        "smaller",
        "tiny",
        "huge",
        "full",
        "lora",
        "qlora",
        "sft",
        "dpo",
        "rlhf",
        "ppo",
        "grpo",
        "pretraining",
        "pretrain",
        "transformers",
        "pytorch",
        "torch",
        "fsdp",
        "accelerate",
        "trt",
        "tensorrt",
        "llamacpp",
        "code",
        "python",
        "docker",
        "linux",
        "windows",
        "jobs",
        "job",
        "experiments",
        "experiment",
        "batch",
        "batches",
        "benchmarks",
        "evals",
        "eval",
        "chat",
        "chatbot",
        "agent",
        "agents",
        "rag",
        "api",
        "server",
        "service",
        "services",
        "app",
        "apps",
        "users",
        "requests",
        "people",
        "quantized",
        "quantised",
        "unquantized",
        "gguf",
        "awq",
        "gptq",
        "exl2",
        "onnx",
        "chinese",
        "english",
        "speed",
        "cost",
        "costs",
        "price",
        "prices",
        "time",
        "budget",
        "money",
        "cheaper",
        "cheapest",
        "fastest",
        "slower",
        "context",
        "memory",
        "vram",
        "precision",
        "quantization",
        "checkpointing",
        "offload",
        "offloading",
        "sharding",
        "zero",
        "cards",
        "card",
        "gpus",
        "gpu",
        "nodes",
        "node",
        "machines",
        "machine",
        "cloud",
        "rent",
        "renting",
        "tokens",
        "data",
        "dataset",
        "epochs",
        "plan",
        "plans",
        "options",
        "option",
        "alternatives",
        "please",
        "thanks",
    ]
)


@cache
def _runtime_words() -> frozenset[str]:
    """The serving engines' ids and names ('serve with sglang'), from data/runtimes (never spelled here)."""
    words: set[str] = set()
    for profile in load_runtimes().profiles:
        words |= set(re.findall(r"[a-z][a-z0-9.]*", f"{profile.id} {profile.name}".lower()))
    return frozenset(words)


def read_unknown_model(residue: str, *, follow_up: bool = False) -> str | None:
    """A model-looking name in the model's slot of a message where no model was found, or None. A name
    with letters and digits ('Zorblax-9000') always counts; a plain word ('Snarf') counts in a follow-up of
    a chat's question, where it would otherwise be answered with that question's model."""
    for match in _MODEL_SLOT.finditer(residue):
        name = match.group("name")
        if len(name) < 3 or _NOT_A_NAME.fullmatch(name):
            continue
        plain_word = name in _SLOT_WORDS or name in _runtime_words()
        if re.search(r"\d", name) or (follow_up and len(name) >= 4 and not plain_word):
            return name
    return None


def names_a_vision_family(name: str) -> bool:
    """'yolov8': a vision family without its variant (YOLOv8n … x)."""
    return any(m.startswith(name.lower()) for m in load_vision_registry().models)


def original_case(text: str, typed: str) -> str:
    """`typed` (found in normalized, lower-case text) as the user wrote it, where it can be found."""
    found = re.search(re.escape(typed), text, re.IGNORECASE)
    return found.group(0) if found else typed
