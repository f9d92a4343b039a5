"""Everything a fit question can state, read from one normalized message.

Names (model, card) are found first and masked, so their digits are never read as counts or sizes;
then money, token counts and capacities are read and masked for the same reason; what is left is
read for counts, sizes, context, batch, precision and the switches. Every pattern is compiled once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.parser.card_names import CARD_MARK, CardMention, find_cards, mask
from core.parser.hub_ref import find_reference
from core.parser.jobs import read_jobs
from core.parser.market import (
    read_billing,
    read_deadline,
    read_hours_per_day,
    read_platform,
    read_rental_days,
    read_reserved_price,
    read_stated_prices,
    read_traffic,
)
from core.parser.model_names import MODEL_MARK, find_family_only, find_model
from core.parser.numbers import EN_NUMBERS, MAGNITUDE_RE, NUMBER_RE, context_tokens, magnitude
from core.parser.result import Rejected
from core.parser.unread import read_bad_numbers, read_unknown_cards
from core.query import Currency, KvCacheDtype, Method, Offload, Optimizer, Precision, Task
from core.regex_screen import AnyOf, TextPattern, gated
from core.registry import load_registry
from core.runtimes import load_runtimes
from core.units import GIB

CAP_MARK = "\ue001"
SIZE_MARK = "\ue003"
MONEY_MARK = "\ue004"
_MARKS = f"{CARD_MARK}{CAP_MARK}"


@dataclass
class Extraction:
    """Fields as the user stated them (Query field names), plus what the intent step needs."""

    fields: dict[str, object] = field(default_factory=dict)
    cards: list[CardMention] = field(default_factory=list)
    unknown_model: str | None = None
    family_only: str | None = None
    method_words: bool = False  # fine-tune said without a method
    gpus_added: int = 0  # 'one more card': relative to the previous count
    card_counts: dict[str, int] = field(default_factory=dict)  # '8张4090和2张A100': a count per card
    budget_per_month: bool = False  # '$3000 a month' (Query itself has per hour or total)
    residue: str = ""  # the text with names and quantities masked, for intent keywords
    rejected: list[Rejected] = field(default_factory=list)  # stated, but not usable as written

    @property
    def has_model(self) -> bool:
        return "model" in self.fields or "params_b" in self.fields


def _c(pattern: str) -> TextPattern:
    return gated(pattern)  # no search where the strings every match holds are missing (regex_screen)


# -- money -------------------------------------------------------------------------------------------
_PREFIX_CUR = r"(?P<pre>us\$|\$|¥|usd|rmb|cny)"
_SUFFIX_CUR = r"(?P<suf>块钱|块|元|rmb|人民币|cny|美元|美金|刀|dollars?|bucks|usd)"
_AMOUNT = rf"(?P<num>{NUMBER_RE})\s*(?P<mag>万|千|k|w)?"
_BUDGET_PERIOD = (
    r"(?:每\s*个?\s*月|(?:1|一)\s*个?\s*月|每\s*天|每日|一天|1天|每\s*小时|每\s*周|每\s*星期|per\s+(?:month|week|day|hour)"
    r"|a\s+(?:month|week|day)|an\s+hour|monthly|weekly|daily|hourly)"
)
_MONEY = (
    _c(rf"{_PREFIX_CUR}\s*{_AMOUNT}(?:\s*{_SUFFIX_CUR})?(?![a-z0-9])"),
    _c(rf"(?<![a-z0-9.]){_AMOUNT}\s*{_SUFFIX_CUR}(?!\s*(?:卡|显卡|gpu|[{_MARKS}]))"),
    _c(
        rf"(?P<kw>预算|budget|不超过|以内|under|below|less than|at most|最多|控制在|within|max|不高于|低于)"
        # the period may come between: '预算每月5000', 'budget per month 3000'
        rf"\s*(?:是|为|of|:|=|大概|大约|在|只有|就|有)?\s*{_BUDGET_PERIOD}?"
        rf"\s*(?:是|为|of|:|=|大概|大约|在|只有|就|有)?\s*(?<![a-z0-9.]){_AMOUNT}(?![a-z0-9.%])"
        # 'within 24 hours', '3 天以内' are times, not money
        rf"(?!\s*(?:个)?\s*(?:hours?|hrs?|h(?![a-z])|days?|weeks?|months?|minutes?|mins?|小时|钟头|天|日|周|星期|分钟|个月))"
    ),
    # '一个月5000预算', '5000的预算': the amount before the word
    _c(rf"(?<![a-z0-9.]){_AMOUNT}\s*(?:的)?\s*(?P<kw>预算)"),
)
_PER_HOUR = _c(
    r"/\s*(?:h|hr|hrs|hour|小时|时|卡时|gpu\s*h)(?![a-z])|per\s*(?:gpu[\s-]*)?h(?:ou)?r|an\s*hour|hourly|a\s*hour"
    r"|每\s*(?:个)?\s*(?:卡)?\s*(?:每)?\s*小时|1\s*小时|一小时|时租|按小时|/h|每卡时|每小时"
)
_PER_MONTH = _c(
    r"/\s*(?:mo|month)(?![a-z])|per\s*month|a\s*month|monthly|每\s*(?:个)?\s*月|(?:一|1)\s*个?\s*月|/月|月租|包月|月度?\s*预算"
)
_PER_DAY = _c(
    r"/\s*(?:day|天|日)(?![a-z])|per\s*day|a\s*day|daily|每\s*(?:一)?\s*天|一天|每日|/天|包天|[日天]\s*预算"
)
_PER_WEEK = _c(
    r"/\s*(?:wk|week|周)(?![a-z])|per\s*week|a\s*week|weekly|每\s*(?:个)?\s*(?:周|星期|礼拜)|(?:一|1)\s*周|/周|[周]\s*预算"
)
_BUDGET_CONTEXT = _c(
    r"预算|budget|以内|不超过|每小时|per|/|hour|小时|时租|钱|价|cost|price|spend|under|below|便宜"
)
_CUR_CNY = frozenset({"¥", "rmb", "cny", "元", "块", "块钱", "人民币"})


_BUDGET_WORD = _c(r"预算|budget")
# 'what would that cost at $2.5 per GPU-hour', '按 2 块一小时算': a rate the job is priced at, not a budget
_PRICED_AT = _c(
    r"(?:(?<![a-z])at|@|按|单价|价格|租的话|租金|租价|price\s*(?:is|of)?|costs?|paying|pay|rent(?:ing)?\s*(?:is|at|costs?)?)"
    r"\s*(?:about|around|约|大约|是|要)?\s*$"
)


def _read_market(text: str, ex: Extraction) -> str:
    """The platform, billing kind, hours a day and serving traffic (core/parser/market.py)."""
    platform_id, text = read_platform(text)
    if platform_id:
        ex.fields["platform"] = platform_id
    billing = read_billing(text)
    if billing:
        ex.fields["billing"] = billing
    # a rental's length ('训练3天' alone is a time), said with a billing kind or a budget ('总预算2万 跑两天')
    days = read_rental_days(text) if billing or _BUDGET_WORD.search(text) else None
    if days is not None:
        ex.fields["rental_days"] = days
    deadline = read_deadline(text)
    if deadline is not None:
        ex.fields["deadline_hours"] = deadline
    hours, text = read_hours_per_day(text)
    if hours is not None:
        ex.fields["hours_per_day"] = hours
    if billing:  # after the hours a day: '12h a day' is a use, not a price
        reserved, reserved_unit = None, None
        if billing == "reserved":
            reserved, reserved_unit, text = read_reserved_price(text)
        if reserved is not None:
            ex.fields["stated_reserved_price"] = reserved
        prices, unit, text = read_stated_prices(text)
        unit = unit or reserved_unit
        if "on-demand" in prices:
            ex.fields["stated_hourly_price"] = prices["on-demand"]
        if "monthly" in prices:
            ex.fields["stated_monthly_price"] = prices["monthly"]
        if "weekly" in prices:
            ex.fields["stated_weekly_price"] = prices["weekly"]
        if "daily" in prices:
            ex.fields["stated_daily_price"] = prices["daily"]
        if unit:
            ex.fields["currency"] = Currency.CNY if unit in _CUR_CNY else Currency.USD
    traffic, text = read_traffic(text)
    ex.fields.update(traffic)
    return text


def _read_money(text: str, ex: Extraction) -> str:
    spans: list[tuple[int, int]] = []
    for pattern in _MONEY:
        for match in pattern.finditer(text):
            if any(s < match.end() and match.start() < e for s, e in spans):
                continue
            groups = match.groupdict()
            suffix = groups.get("suf")
            start = max(0, match.start() - 12)
            words = list(_BUDGET_WORD.finditer(text[start : match.start()]))
            if words:  # 'Daily budget of $40', '每周的预算是 1000': the period said before the word budget
                start = max(0, start + words[-1].start() - 12)
            window = text[start : match.end() + 14]
            value = magnitude(match.group("num"), groups.get("mag"))
            if (
                suffix in ("块", "块钱")
                and suffix == "块"
                and value <= 16
                and not _BUDGET_CONTEXT.search(window)
            ):
                continue  # '4块' with no money around it counts cards
            if value <= 0:
                continue
            spans.append((match.start(), match.end()))
            per_hour = bool(_PER_HOUR.search(window))
            if (
                per_hour
                and "stated_hourly_price" not in ex.fields
                and _PRICED_AT.search(text[max(0, match.start() - 12) : match.start()])
                and not _BUDGET_WORD.search(window)
            ):
                ex.fields["stated_hourly_price"] = value
                currency = groups.get("pre") or suffix
                if currency and "currency" not in ex.fields:
                    ex.fields["currency"] = Currency.CNY if currency in _CUR_CNY else Currency.USD
                continue
            if "budget" in ex.fields:
                continue
            ex.fields["budget"] = value
            ex.budget_per_month = not per_hour and bool(_PER_MONTH.search(window))
            per_week = not per_hour and not ex.budget_per_month and bool(_PER_WEEK.search(window))
            per_day = not (per_hour or ex.budget_per_month or per_week) and bool(_PER_DAY.search(window))
            ex.fields["budget_period"] = (
                "hour"
                if per_hour
                else "month"
                if ex.budget_per_month
                else "week"
                if per_week
                else "day"
                if per_day
                else "total"
            )
            currency = groups.get("pre") or suffix
            if currency:
                ex.fields["currency"] = Currency.CNY if currency in _CUR_CNY else Currency.USD
    return mask(text, spans, MONEY_MARK) if spans else text


# -- tokens and capacity -----------------------------------------------------------------------------
_TOKENS = (
    _c(
        rf"(?<![a-z0-9.])(?P<num>{NUMBER_RE})\s*(?P<mag>{MAGNITUDE_RE})?\s*(?:个)?\s*(?:tokens?|词元)(?![a-z])"
    ),
    _c(
        rf"(?:tokens?|token数|token量|词元数?|训练数据量?|数据量)\s*(?:数|量)?\s*(?:=|:|为|是|约|大约|有|of|about)?\s*"
        rf"(?P<num>{NUMBER_RE})\s*(?P<mag>{MAGNITUDE_RE})(?![a-z0-9])"
    ),
)
_CAPACITY = _c(rf"(?<![a-z0-9.])(?P<num>{NUMBER_RE})\s*(?:gb|gib|g)(?![a-z0-9])")
_NOT_VRAM = _c(
    r"^\s*(?:的|of)?\s*(?:内存|ram|(?:system|host|cpu)\s+(?:ram|memory)|硬盘|disk|ssd|存储|数据|dataset|网络|带宽)"
    r"|(?:内存|(?<![a-z])ram|硬盘|disk)\s*$"
)  # 'ram' as a word: '16gb vram' is the card's memory; '16GB of system RAM' is not
# '显存12g 内存64g': the word before says it is the card's memory, whatever follows
_VRAM_BEFORE = _c(r"(?:显存|vram|gpu\s*memory|video\s*memory)\s*(?:是|有|为|:|=|只有|才)?\s*$")
# '14G对吗', 'needs ~14GB': an amount of memory the job uses, not the card's capacity.
_USAGE_BEFORE = _c(
    r"(?:占|占用|吃|用掉|消耗|needs?|requires?|uses?|takes?|consumes?|≈|~|约|大约|"
    r"(?<!what )(?<!how )about|around|roughly|approx\w*)"
    r"(?:\s*(?:about|around|roughly|大概|大约|约))?\s*$"
)
_USAGE_AFTER = _c(r"^\s*(?:对吗|对不对|左右|够不够用?吗|是吗|吧)")


_CONTEXT_AFTER = _c(r"\s*(?:的)?\s*(?:上下文|context|ctx(?![a-z])|窗口|window)")


def _read_tokens(text: str, ex: Extraction) -> str:
    spans: list[tuple[int, int]] = []
    for pattern in _TOKENS:
        for match in pattern.finditer(text):
            unit = match.group("mag")
            value = magnitude(match.group("num"), unit)
            spans.append((match.start(), match.end()))
            if _CONTEXT_AFTER.match(text, match.end()) and "seq" not in ex.fields:
                # '10 million token context', '1000万 token 上下文': a context length, however long
                ex.fields["seq"] = context_tokens(match.group("num"), unit) if value < 1e6 else int(value)
            elif value >= 1e6 and "tokens" not in ex.fields:
                ex.fields["tokens"] = value
            elif 0 < value < 1e6 and "seq" not in ex.fields:
                ex.fields["seq"] = context_tokens(match.group("num"), unit)
    return mask(text, spans, SIZE_MARK) if spans else text


# -- amounts of training data ---------------------------------------------------------------------------
_NUM_MAG = rf"(?<![a-z0-9.])(?P<num>{NUMBER_RE})\s*(?P<mag>{MAGNITUDE_RE})?"
_SAMPLES = _c(
    rf"{_NUM_MAG}\s*(?:个|份)?\s*(?:条(?:数据|样本|对话|指令|问答|训练数据|语料)?|样本|组数据|组对话|"
    r"(?:training\s+)?(?:samples?|examples?|rows?|records?|instructions?|conversations?|dialogues?|"
    r"qa\s*pairs?|pairs?|lines?|responses?|answers?|completions?|documents?|docs?|articles?|prompts?|"
    r"summar(?:y|ies))(?![a-z])|篇(?:文档|文章)?|份(?:文档|文件)|个(?:文档|文件|问题|回答)|次(?:调用|生成))"
)
_EPOCHS = (
    _c(rf"(?<![a-z0-9.])(?P<num>{NUMBER_RE})\s*(?:个)?\s*(?:epochs?|轮|遍|个?epoch)(?![a-z])"),
    _c(rf"epochs?\s*(?:=|:|为|是|of)?\s*(?P<num>{NUMBER_RE})(?![0-9])"),
)
_TEXT_SIZE = _c(
    rf"(?<![a-z0-9.])(?P<num>{NUMBER_RE})\s*(?P<unit>tb|t|gb|g|mb|m)(?![a-z0-9])\s*(?:of\s+)?(?:的)?\s*"
    r"(?P<lang>中文|英文|chinese|english)?\s*(?P<what>text|corpus|data(?:set)?|语料|文本|数据集?|训练数据|txt|jsonl?)"
)
# '每条大概2000字', '平均每篇3千字': a sample's length in Chinese characters (not 字节, bytes).
_SAMPLE_CHARS = _c(
    rf"(?:每|平均)\s*(?:一)?\s*(?:条|个|篇|份|段|组)?\s*(?:数据|样本|对话|文档|文章|问答)?\s*"
    rf"(?:大概|大约|约|平均|差不多|有|是|在)?\s*(?P<num>{NUMBER_RE})\s*(?P<mag>{MAGNITUDE_RE})?\s*(?:个)?\s*"
    r"(?:汉字|中文字符|字符|字)(?!节)"
)
_TEXT_UNITS = {"tb": 1e12, "t": 1e12, "gb": 1e9, "g": 1e9, "mb": 1e6, "m": 1e6}
_TEXT_LANG = (
    (_c(r"中文|chinese|汉语"), "zh"),
    (_c(r"英文|english|英语"), "en"),
)


def _read_data_amount(text: str, ex: Extraction) -> str:
    """Samples, their length in characters, epochs and a dataset's size ('1万条数据', '每条2000字',
    '50k rows', '3 epochs', '20GB 中文语料')."""
    spans: list[tuple[int, int]] = []
    size = _TEXT_SIZE.search(text)
    if size:
        ex.fields["text_bytes"] = int(float(size.group("num")) * _TEXT_UNITS[size.group("unit")])
        spans.append((size.start(), size.end()))
        for pattern, lang in _TEXT_LANG:
            if pattern.search(text):
                ex.fields["text_lang"] = lang
                break
    samples = _SAMPLES.search(text)
    if samples:
        value = magnitude(samples.group("num"), samples.group("mag"))
        if 1 <= value <= 1e12:
            ex.fields["samples"] = int(value)
            spans.append((samples.start(), samples.end()))
    chars = _SAMPLE_CHARS.search(text)
    if chars:
        value = magnitude(chars.group("num"), chars.group("mag"))
        if 1 <= value <= 1e7:
            ex.fields["sample_chars"] = int(value)
            spans.append((chars.start(), chars.end()))
    for pattern in _EPOCHS:
        epochs = pattern.search(text)
        if epochs and 0 < float(epochs.group("num")) <= 10_000:
            ex.fields["epochs"] = float(epochs.group("num"))
            spans.append((epochs.start(), epochs.end()))
            break
    return mask(text, spans, SIZE_MARK) if spans else text


def _read_capacity(text: str, ex: Extraction) -> str:
    spans: list[tuple[int, int]] = []
    for match in _CAPACITY.finditer(text):
        value = float(match.group("num"))
        before, after = text[max(0, match.start() - 16) : match.start()], text[match.end() : match.end() + 16]
        said_vram = _VRAM_BEFORE.search(before) is not None
        if not 1 <= value <= 2048 or (
            not said_vram and (_NOT_VRAM.search(after) or _NOT_VRAM.search(before))
        ):
            continue
        if _USAGE_BEFORE.search(before) or _USAGE_AFTER.search(after):
            spans.append((match.start(), match.end()))
            continue
        spans.append((match.start(), match.end()))
        if "card_memory_bytes" not in ex.fields:
            ex.fields["card_memory_bytes"] = int(value * GIB)
    return mask(text, spans, CAP_MARK) if spans else text


# -- bare sizes ---------------------------------------------------------------------------------------
_SIZES = (
    _c(rf"(?<![a-z0-9.])(?:(?P<n>\d+)\s*x)?(?P<num>{NUMBER_RE})\s*(?P<unit>b|bn|billion)(?![a-z0-9])"),
    _c(
        rf"(?<![a-z0-9.])(?P<num>{NUMBER_RE})\s*(?P<unit>万亿|千亿|百亿|亿)(?!\s*(?:元|块|美元|人民币|token|词元|条|张))"
    ),
    _c(
        rf"(?<![a-z0-9.])(?P<num>{NUMBER_RE})\s*(?P<unit>m|million)\s*"
        r"(?=(?:的)?\s*(?:参数|params?|parameters?|模型|model))"
    ),
    # '1T model', 'a 1.2-trillion-parameter model': trillions, where a model word follows
    _c(
        rf"(?<![a-z0-9.])(?P<num>{NUMBER_RE})\s*(?P<unit>t|tn|trillion)[\s-]*"
        r"(?=(?:的)?\s*(?:参数|params?|parameters?|模型|models?|moe|dense|llm)(?![a-z]))"
    ),
)
_UNIT_B = {"b": 1.0, "bn": 1.0, "billion": 1.0, "m": 1e-3, "million": 1e-3, "亿": 0.1, "百亿": 10.0}
_UNIT_B |= {"千亿": 100.0, "万亿": 1000.0, "t": 1000.0, "tn": 1000.0, "trillion": 1000.0}
_SMALLEST_B, _LARGEST_B = 0.001, 100_000.0  # from a million parameters to 100T


_MOE_TAIL = _c(r"[\s\-_]*(?:a\d+(?:\.\d+)?b|(?P<experts>\d+)e)(?![a-z0-9])")


def _moe_model(experts: str, size: str) -> str | None:
    label = f"{int(experts)}x{float(size):g}b"
    for model in load_registry().models:
        if model.id.endswith(label):
            return model.id
    return None


# the Hub-style name a size is glued to ('seed-oss-36b', 'my_model-7b'): letters first, joined by - or _
_NAME_BEFORE_SIZE = _c(r"(?<![a-z0-9.\-_])[a-z][a-z0-9.]*(?:[\-_][a-z0-9.]+)*[\-_]$")
# ... or a name of three hyphenated parts just before it ('longcat-flash-chat 560b'), never a phrase
_NAME_SPACED_BEFORE_SIZE = _c(r"(?<![a-z0-9.\-_])[a-z][a-z0-9.]*(?:[\-_][a-z0-9.]+){2,}\s+$")
_HYPHENATED_PHRASES = frozenset({"state-of-the-art", "off-the-shelf", "out-of-the-box", "up-to-date"})


def _read_sizes(text: str, ex: Extraction) -> str:
    spans: list[tuple[int, int]] = []
    for pattern in _SIZES:
        for match in pattern.finditer(text):
            spans.append((match.start(), match.end()))
            if ex.has_model:
                continue
            groups = match.groupdict()
            value = float(match.group("num")) * _UNIT_B[match.group("unit")]
            tail = _MOE_TAIL.match(text, match.end())
            if tail:  # '17B-16E': the active count of a MoE, not its total; '30B-A3B': the total
                spans[-1] = (match.start(), tail.end())
                if tail.group("experts"):
                    continue
            if groups.get("n"):
                moe = _moe_model(groups["n"], match.group("num"))
                if moe:
                    ex.fields["model"] = moe
                    continue
                value *= int(groups["n"])
            if _SMALLEST_B <= value <= _LARGEST_B:
                ex.fields["params_b"] = round(value, 6)
                named = _NAME_BEFORE_SIZE.search(text, 0, match.start())
                if named and ex.unknown_model is None:  # 'seed-oss-36b': a name the registry lacks, sized
                    ex.unknown_model = text[named.start() : spans[-1][1]].strip()
                spaced = None if named else _NAME_SPACED_BEFORE_SIZE.search(text, 0, match.start())
                if spaced and ex.unknown_model is None and spaced.group(0).strip() not in _HYPHENATED_PHRASES:
                    ex.unknown_model = spaced.group(0).strip()  # 'longcat-flash-chat (560b moe)': the name
            elif "params_b" not in ex.fields:  # '10000000B', '0B': said, but no model has that size
                reason = "not_positive" if value <= 0 else "too_large" if value > _LARGEST_B else "too_small"
                ex.rejected.append(Rejected(what="size", typed=match.group(0).strip(), reason=reason))
    return mask(text, spans, SIZE_MARK) if spans else text


# -- card counts --------------------------------------------------------------------------------------
_M = f"[{_MARKS}]"
_EN_NUM = "|".join(sorted((re.escape(k) for k in EN_NUMBERS), key=len, reverse=True))
_COUNTS = (
    _c(rf"(?<![a-z0-9.])(\d+)\s*(?:x|\*)\s*{_M}"),
    _c(rf"{_M}\s*(?:x|\*)\s*(\d+)(?![\d.]*\s*(?:g|k|b|t)(?![a-z]))"),
    _c(rf"(?<![a-z0-9.])(\d+)\s*(?:张|块|台|片|个)\s*(?:的)?\s*(?:{_M}|卡|显卡|gpu)"),
    _c(r"(?<![a-z0-9.])(\d+)\s*(?:张|块卡|片卡)"),
    _c(r"(?<![a-z0-9.])(\d+)\s*-?\s*(?:卡|gpus?|cards?|块gpu)(?![a-z])"),
    _c(
        r"(?:num[\s_-]*gpus|n[\s_-]*gpus|--gpus|gpus?|卡数|显卡数|gpu数量?|tp|tp[\s_-]*size|tensor[\s_-]*parallel"
        r"(?:[\s_-]*size)?)\s*(?:=|:|数|为|是|of)?\s*(\d+)(?![\d.]*\s*(?:g|k|b)(?![a-z]))"
    ),
    _c(rf"(?<![a-z0-9.])(\d+)\s+of\s+(?:them|those|these|{_M})"),
    _c(r"(?<![a-z0-9.])(\d+)\s*x(?![a-z0-9])"),
    _c(rf"{_M}\s*(\d+)\s*(?:张|块|台)"),
    _c(rf"(?<![a-z0-9.])(\d{{1,3}})\s+{_M}"),
    # a follow-up that is only a count: 'and with 8?', '那 4 呢', 'what about 2', '8呢' (a bare '8' is not
    # one: it may be a button number that no longer exists)
    _c(
        r"^\s*(?:and\s+|what\s+about\s+|how\s+about\s+|then\s+|那\s*|那么\s*|with\s+|on\s+|using\s+|用\s*|换成\s*|"
        r"改成\s*)+(\d{1,4})\s*(?:呢|吗|个|的话)?\s*[?？]?\s*$"
    ),
    _c(r"^\s*(\d{1,4})\s*(?:呢|的话)\s*[?？]?\s*$"),
)
_EN_COUNT = _c(rf"(?<![a-z])({_EN_NUM})\s+(?:x\s*)?(?:{_M}|gpus?|cards?|of them|of those)")
_TWO = _c(r"双卡|两卡|双路|dual|(?:a\s+)?pair\s+of|a couple of|俩卡")
_ONE = _c(
    rf"单卡|单张|单块|(?<![a-z])single|one\s+(?:card|gpu)|(?<![a-z0-9])a\s+(?:{_M}|card|gpu)\s*(?:alone|only)|一张卡|一块卡"
)


# 'recommend a card' asks for a card, it does not fix the count.
_NOT_A_COUNT = _c(
    r"(?:推荐|建议|recommend|suggest|选)\s*(?:1|一)\s*(?:张|块|个|款)|recommend\s+(?:a|one)\s+(?:card|gpu)"
)


_ADD_CARDS = _c(
    rf"(?:再|多)?加\s*(\d+)?\s*(?:张|块|个|台)|(?:add|plus)\s+(?:(\d+)|one|another|an?)\s*(?:more\s*)?(?:{_M}|cards?|gpus?)?"
    r"|one\s+more|another\s+(?:card|gpu|one)"
)


# '两台八卡', '2 nodes of 8x<card>': machines times cards per machine.
_NODES = _c(
    rf"(?<![a-z0-9.])(\d+|{_EN_NUM})\s*(?:台|机|nodes?|machines?|servers?|boxes)\s*(?:机器|服务器|节点)?\s*"
    rf"(?:的|of|with|x|\*|每台|每台机器|each\s+with|each\s+of|,)?\s*(?:with\s+)?"
    rf"(\d+)\s*(?:x|\*|张|块)?\s*(?:卡|gpus?|cards?|{_M})"
)
# '2x8 H100', '4×8 A100': nodes × cards per node, written as one product before the card
_NODES_PRODUCT = _c(rf"(?<![a-z0-9.])(\d{{1,4}})\s*[x×*]\s*(\d{{1,2}})\s*(?:x|×)?\s*(?:{_M}|gpus?|cards?)")
_NODE_WORD = r"(?:台|nodes?|machines?|servers?|boxes|hosts?)(?:\s*(?:机器|服务器|节点|主机))?(?![a-z])"
# 'two 8x4090 servers', 'two 8-GPU H100 nodes', '2x 8-gpu 4090 boxes': nodes, the cards in each, the word
_NODES_OF_CARDS = _c(
    rf"(?<![a-z0-9.])(\d{{1,4}}|{_EN_NUM})\s*(?:x|×|\*)?\s+(\d{{1,2}})\s*(?:-|x|×|\*)?\s*"
    rf"(?:gpus?|cards?|卡)?\s*-?\s*{_M}?\s*{_NODE_WORD}"
)
# A count of nodes said apart from the cards in each: '8卡4090 两台', '8张4090 两台机器', '8 H100s per node,
# 2 nodes', 'two DGX B200 nodes (16 GPUs)'
_NODE_COUNT = _c(rf"(?<![a-z0-9.])(\d{{1,4}}|{_EN_NUM})\s*(?:{_M}\s*)?{_NODE_WORD}")
# ... and the cards counted in all rather than per node: '16 H100 across 2 nodes', '两台机器共16张卡'
_CARDS_IN_ALL = _c(r"across|spread|in\s+total|total|altogether|共|总共|一共|合计|分布|分在|分到")
_PER_NODE = _c(r"每台|每个节点|每节点|各|each|per\s+(?:node|server|machine|box|host)")
# '共两台': two machines in all, not the cards in all
_ALL_BEFORE_NODES = _c(r"(?:共|总共|一共|合计|in\s+total|total)\s*$")


# The network between nodes, when the question names it: plain Ethernet ('100G Ethernet', '以太网', '万兆',
# 'no IB') or InfiniBand ('IB互联', 'with InfiniBand'); its speed per node when given ('100G', '万兆' = 10).
_ETHERNET = _c(
    r"ethernet|以太网|万兆|千兆|(?<![a-z])tcp(?![a-z])|(?:no|without|没有|没|无)\s*(?:ib|infiniband)(?![a-z])"
    r"|(?<![a-z0-9.])\d{1,4}\s*(?:gbe|gige)(?![a-z])"
)
_INFINIBAND = _c(r"infiniband|(?<![a-z])ib(?![a-z])")
_NETWORK_SPEED = _c(
    r"(?<![a-z0-9.])(\d{2,4})\s*(?:g|gb|gbe|gbit|gbps|gb/s|gbit/s)?\s*(?:ethernet|以太网|网卡|nic|ib|infiniband)"
    r"|(?<![a-z0-9.])(\d{2,4})\s*(?:gbe|gige)(?![a-z])"
)
_ZH_ETHERNET_SPEEDS = {"万兆": 10.0, "千兆": 1.0}  # 'ten-thousand-megabit' and 'thousand-megabit' Ethernet


def _read_network(text: str, ex: Extraction) -> str:
    """The text with the network's speed blanked: '400G IB' is no card of 400 GB."""
    if _ETHERNET.search(text):
        ex.fields["network"] = "ethernet"
        for word, gbit in _ZH_ETHERNET_SPEEDS.items():
            if word in text:
                ex.fields["network_gbit_s"] = gbit
    elif _INFINIBAND.search(text):
        ex.fields["network"] = "infiniband"
    else:
        return text
    speed = _NETWORK_SPEED.search(text)
    group = 1 if speed and speed.group(1) else 2
    if speed and 10 <= int(speed.group(group)) <= 3200:
        ex.fields["network_gbit_s"] = float(speed.group(group))
        start, end = speed.span(group)
        return text[:start] + " " * (end - start) + text[end:]
    return text


def _read_counts(text: str, ex: Extraction) -> None:
    product = _NODES_PRODUCT.search(text)
    if product and 2 <= int(product.group(1)) <= 1024 and 2 <= int(product.group(2)) <= 16:
        ex.fields["gpus"] = int(product.group(1)) * int(product.group(2))
        ex.fields["nodes"] = int(product.group(1))
        return
    nodes = _NODES.search(text) or _NODES_OF_CARDS.search(text)
    if nodes and _set_nodes(ex, EN_NUMBERS.get(nodes.group(1)) or int(nodes.group(1)), int(nodes.group(2))):
        return
    apart = _NODE_COUNT.search(text)
    if apart:
        machines = EN_NUMBERS.get(apart.group(1)) or int(apart.group(1))
        rest = text[: apart.start()] + " " * (apart.end() - apart.start()) + text[apart.end() :]
        per_node = _first_count(rest) if machines > 1 else None
        of_nodes = _ALL_BEFORE_NODES.search(text[: apart.start()])
        total_said = rest[: of_nodes.start()] + rest[apart.start() :] if of_nodes else rest
        in_all = not _PER_NODE.search(text) and bool(_CARDS_IN_ALL.search(total_said))
        if per_node is not None and _set_nodes(ex, machines, per_node, in_all=in_all):
            return
    added = _ADD_CARDS.search(text)
    if added:
        ex.gpus_added = int(added.group(1) or added.group(2) or 1)
        text = text[: added.start()] + " " + text[added.end() :]
    count = _first_count(text)
    if count is not None:
        ex.fields["gpus"] = count


def _first_count(text: str) -> int | None:
    """The first card count the text writes ('8卡', '2x', 'two 4090s', '双卡'), if any."""
    found: list[tuple[int, int]] = []
    for pattern in _COUNTS:
        for match in pattern.finditer(text):
            found.append((match.start(), int(match.group(1))))
    for match in _EN_COUNT.finditer(text):
        found.append((match.start(), EN_NUMBERS[match.group(1)]))
    for pattern, value in ((_TWO, 2), (_ONE, 1)):
        for match in pattern.finditer(text):
            found.append((match.start(), value))
    for _, value in sorted(found):
        if 1 <= value <= 4096:
            return value
    return None


def _set_nodes(ex: Extraction, machines: int, cards: int, *, in_all: bool = False) -> bool:
    """Machines and a card count as the cards and nodes asked: '两台八卡' is 2 × 8; '8机64卡' and '16 H100
    across 2 nodes' count the cards in all (a count past one node, divisible by the machines, or said as a
    total). False when the two make no cluster gpufit can answer."""
    if in_all or (cards > 8 and cards % machines == 0 and cards // machines <= 8):
        total = cards
    else:
        total = machines * cards
    if not (1 <= total <= 4096 and 1 <= machines <= 1024 and machines <= total):
        return False
    ex.fields["gpus"] = total
    if machines > 1:
        ex.fields["nodes"] = machines
    return True


# -- context, batch, rank ------------------------------------------------------------------------------
_SEQ_KW = (
    r"(?:上下文(?:长度|窗口)?|context(?:[\s_-]*(?:length|len|window|size))?|ctx(?:[\s_-]*len)?|"
    r"seq(?:uence)?(?:[\s_-]*len(?:gth)?)?|序列(?:长度)?|max[\s_-]*model[\s_-]*len|"
    r"max[\s_-]*seq(?:uence)?[\s_-]*len(?:gth)?|max[\s_-]*(?:length|len|tokens)|cutoff[\s_-]*len|"
    r"model[\s_-]*max[\s_-]*length|输入长度|文本长度|长度|窗口|prompt[\s_-]*len(?:gth)?)"
)
_CTX_NUM = rf"(?P<num>{NUMBER_RE})\s*(?P<unit>k|m|w|万|million)?(?![a-z0-9])"
_SEQ = (
    _c(
        rf"{_SEQ_KW}\s*(?:=|:|为|是|of|设为|设成|开到|到|用|at|要|需要|是)?\s*{_CTX_NUM}"
        r"(?!\s*(?:个|路|位|名)?\s*(?:人|并发|concurren|users?|用户|requests?|请求|qps|张|卡|gpus?|cards?))"
    ),
    _c(rf"(?<![a-z0-9.]){_CTX_NUM}\s*(?:的)?\s*(?:tokens?\s*)?{_SEQ_KW}"),
    # '8k-token requests', 'concurrent 8k requests' (requests of that length, not 8,000 of them)
    _c(rf"(?<![a-z0-9.]){_CTX_NUM}[\s-]*tokens?\s+(?:requests?|prompts?|sequences?|inputs?|conversations?)"),
    _c(rf"(?:concurrent|simultaneous|parallel)\s+{_CTX_NUM}(?<=k)\s+(?:requests?|prompts?|sequences?)"),
    _c(
        r"(?<![a-z0-9.$¥])(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>k)(?![a-z0-9])"
        r"(?!\s*(?:samples?|条|examples?|rows?|steps?|images?|张|users?|个|instructions?|conversations?|对话|数据|data|"
        r"iter|epochs?|次|docs?|documents?|pairs?|行|元|块|words?|样本|用户|请求|requests?|图|star|downloads?))"
    ),
)
_BATCH_KW = (
    r"(?:per[\s_-]*device[\s_-]*(?:train[\s_-]*)?batch[\s_-]*size|micro[\s_-]*batch(?:[\s_-]*size)?|"
    r"batch[\s_-]*size|batchsize|batch|bsz|(?<![a-z])bs|(?<![a-z])mbs|批大小|批量大小|批次大小|批处理大小|批量|批次|批)"
)
_NOT_UNIT = r"(?![\d.]*\s*[kgbmt](?![a-z]))"
_BATCH = (
    _c(rf"{_BATCH_KW}\s*(?:=|:|为|是|of|设为|设成|开到|用|取|要)?\s*(\d+){_NOT_UNIT}"),
    _c(
        r"(?<![a-z0-9.])(\d+)\s*(?:个|路|人)?\s*(?:并发|concurrent|simultaneous|parallel\s*requests|(?:个)?用户同时|人同时"
        r"|(?:users?|requests?|people|of\s+them)?\s*(?:at\s*once|at\s*the\s*same\s*time|concurrently|in\s*parallel)"
        r"|(?:人|用户)\s*(?:同时|在线)|concurrent\s+(?:users|people)(?![a-z]))"
    ),
    _c(
        r"(?:并发(?:数|量)?|concurrency|concurrent(?:\s*(?:users|requests|sessions))?|同时(?:在线)?(?:请求|用户)?(?:数)?"
        r"|qps|在线人数|parallel\s*requests|simultaneous(?:\s*(?:users|requests))?"
        # a checklist's field: 'users at once: 10', 'at the same time: 10'
        r"|(?:users?|people|requests?|sessions?)?\s*(?:at\s*once|at\s*the\s*same\s*time))"
        rf"\s*(?:=|:|为|是|of|about|大概|约|有|达到|要|会有|在)?\s*(\d+){_NOT_UNIT}"
    ),
    _c(r"(?<![a-z0-9.])(\d+)\s*(?:的)?\s*(?:batch|bs)(?![a-z])"),
    # '25 people chatting at once', '40 people use it at the same time': a headcount said to be at once
    _c(
        r"(?<![a-z0-9.])(\d+)\s*(?:users?|people|persons?)\s+(?:[a-z']+\s+){0,3}?"
        r"(?:at\s*once|at\s*the\s*same\s*time|concurrently|simultaneously|in\s*parallel)"
    ),
)
_SHARE_AT_ONCE = _c(
    r"(?<![\d.])(?P<pct>\d+(?:\.\d+)?)\s*%\s*(?:的)?\s*(?:人|用户|users?|people|of\s+them)?\s*"
    r"(?:同时|at\s*once|at\s*the\s*same\s*time|concurrently|simultaneously)"
)
# A headcount ('200 人用', '50 users', 'a team of 40', '50人的团队', '120 engineers share it'): the people who
# use a deployment, not how many use it at once (core/advisor/traffic.py derives that: data/jobs.toml
# [traffic] active_share, stated)
_PEOPLE = (
    r"users|people|engineers|developers|devs|employees|staff|colleagues|members|researchers|analysts|students"
    r"|agents"
)
_HEADCOUNT = (
    _c(rf"(?<![a-z0-9.])(\d+)\s*(?:个|人)?\s*(?:(?:人|用户)\s*(?:用|使用|访问)|(?:{_PEOPLE})(?![a-z]))"),
    _c(
        r"(?<![a-z0-9.])(\d+)\s*(?:个|位|名)?\s*(?:员工|工程师|同事|开发者|开发人员|研发|研究员|分析师|学生|客服)"
    ),
    _c(r"(?:team|group|company|office|class)\s+of\s+(\d+)(?![\d.])"),
    _c(r"(?<![a-z0-9.])(\d+)\s*人\s*(?:的)?\s*(?:团队|公司|小组|部门)"),
    _c(r"(?<![a-z0-9.])(\d+)\s*(?:个|位|名)?\s*用户"),  # '100个用户', '服务20个用户'
)
_RANK = (
    _c(r"(?:lora[\s_-]*)?(?:rank|秩)\s*(?:=|:|为|是|of|设为|取)?\s*(\d+)"),
    _c(r"lora[\s_-]*r\s*(?:=|:)?\s*(\d+)"),
    _c(r"(?<![a-z])r\s*=\s*(\d+)"),
)


def _take_int(patterns: tuple[TextPattern, ...], text: str, low: int, high: int) -> tuple[int | None, str]:
    """The first in-range value of the most specific pattern that matches, and the text with it masked."""
    for pattern in patterns:
        for match in pattern.finditer(text):
            value = int(match.group(1))
            if low <= value <= high:
                return value, mask(text, [match.span(1)], SIZE_MARK)
    return None, text


def _read_seq(text: str, ex: Extraction) -> str:
    for i, pattern in enumerate(_SEQ):
        for match in pattern.finditer(text):
            value = context_tokens(match.group("num"), match.group("unit"))
            if i == len(_SEQ) - 1 and not 512 <= value <= 4 * 1024 * 1024:
                continue
            if 16 <= value <= 10_000_000:
                ex.fields.setdefault("seq", value)
                return mask(text, [match.span("num")], SIZE_MARK)
    return text


# -- precision and switches ----------------------------------------------------------------------------
_OPT_8BIT = _c(r"(?:paged[\s_-]*)?adamw?[\s_-]*8[\s_-]*bit|8[\s_-]*bit[\s_-]*(?:adamw?|优化器|optimizer)")
_OPTIMIZERS = ((_OPT_8BIT, Optimizer.ADAMW_8BIT), (_c(r"(?<![a-z])sgd(?![a-z])"), Optimizer.SGD))
_B = r"(?<![a-z0-9])"
_E = r"(?![a-z0-9])"
_PRECISIONS: tuple[tuple[TextPattern, Precision], ...] = tuple(
    (_c(p), v)
    for p, v in (
        # EXL2's bits per weight ('4.0bpw', '6.5 bpw'): the nearest format of that width
        (rf"{_B}8(?:\.\d+)?[\s_-]*bpw{_E}", Precision.INT8),
        (rf"{_B}[67](?:\.\d+)?[\s_-]*bpw{_E}", Precision.Q6_K),
        (rf"{_B}5(?:\.\d+)?[\s_-]*bpw{_E}", Precision.Q5_K_M),
        (rf"{_B}[234](?:\.\d+)?[\s_-]*bpw{_E}", Precision.INT4),
        (rf"{_B}q8(?:_0)?{_E}", Precision.Q8_0),
        (rf"{_B}q6(?:_k)?{_E}", Precision.Q6_K),
        (rf"{_B}q5(?:_k(?:_[ms])?|_[01])?{_E}", Precision.Q5_K_M),
        # Q4_0 is its own format (one scale per 32 weights, 4.5 bits), not Q4_K_M (4.89 bits, K-quant blocks)
        (rf"{_B}q4_0{_E}", Precision.Q4_0),
        (rf"{_B}q4(?:_k(?:_[ms])?|_1)?{_E}", Precision.Q4_K_M),
        (rf"{_B}q3(?:_k(?:_[sml])?)?{_E}", Precision.Q3_K),
        (rf"{_B}q2(?:_k)?{_E}", Precision.Q2_K),
        (rf"{_B}nf4{_E}|bnb[\s_-]*4[\s_-]*bit|bitsandbytes[\s_-]*4", Precision.NF4),
        (rf"{_B}(?:fp32|float32|f32){_E}|全精度|单精度|full[\s-]*precision", Precision.FP32),
        (rf"{_B}(?:bf16|bfloat16|bfloat){_E}", Precision.BF16),
        (rf"{_B}(?:fp16|float16|f16|half){_E}|半精度|half[\s-]*precision", Precision.FP16),
        (rf"{_B}(?:fp8|float8|e4m3|w8a8[\s_-]*fp8){_E}", Precision.FP8),
        (rf"{_B}(?:int8|w8a8|int\s*8){_E}|{_B}8[\s_-]*bits?{_E}|8\s*位|8\s*比特|llm\.int8", Precision.INT8),
        (
            rf"{_B}(?:int4|int\s*4|awq|gptq|w4a16|exl2|fp4|mxfp4|nvfp4){_E}|{_B}4[\s_-]*bits?{_E}|4\s*位|4\s*比特",
            Precision.INT4,
        ),
        (rf"{_B}gguf{_E}|llama\.cpp|ollama", Precision.Q4_K_M),
    )
)
_QUANTIZED = _c(r"(?<!向)量化|quantiz|quantis|(?<![a-z])quant(?![a-z])")
_NOT_QUANTIZED = _c(
    r"不量化|不做量化|不用量化|不要量化|没量化|no\s*quant|without\s*quant|unquantized|non[\s-]*quantized"
)

_PRETRAIN = _c(
    r"(?:从零|从头|从0)开始(?=.{0,40}(?:训|train))|(?:训|train).{0,40}(?:从零|从头|从0)开始|预训练|pre[\s-]*train|从头训|从零训|从0训|从零开始训|from\s*scratch|继续训练基座|增量预训练|二次预训练|continued\s*pre|基座|foundation\s*model"
)
_FINETUNE = _c(
    r"微调|精调|调优|fine[\s-]*tun|finetun|(?<![a-z])ft(?![a-z])|(?<![a-z])sft(?![a-z])|lora|(?<![a-z])dpo(?![a-z])"
    r"|rlhf|(?<![a-z])ppo(?![a-z])|grpo|训练|(?<!培)训|(?<![a-z])train|全参|全量|冻结|freez|指令调|对齐训练|orpo|kto"
)
_TRAIN_ONLY = _c(r"训|(?<![a-z])train")
_TUNE = _c(r"微调|精调|fine[\s-]*tun|finetun|(?<![a-z])s?ft(?![a-z])|lora|dpo|rlhf|指令")
_INFERENCE = _c(
    r"推理|部署|跑|运行|serve|serving|deploy|inference|infer(?![a-z])|(?<![a-z])run|(?<![a-z])host|加载|(?<![a-z])load|上线|对话|聊天"
    r"|(?<![a-z])chat(?![a-z])|生成|调用|服务(?!器)|vllm|ollama|llama\.cpp|量化版|api|tokens?/s|吞吐|decode|预测"
)
_QLORA = _c(r"q[\s-]*lora")
_LORA = _c(r"lora|adapter|适配器")
_FULL = _c(
    r"全参|全量|fully|full[\s-]*(?:param(?:eter)?s?|fine[\s-]*tun\w*|ft|finetun\w*|sft|train\w*|weights?)|"
    r"(?<![a-z])full(?![a-z\s-]*precision)(?=\s*(?:$|[^a-z]|ft|sft|fine|tun|train|lora))|all\s*param"
)
_FREEZE = _c(r"freez|冻结|frozen")
_GC_ON = _c(
    r"gradient[\s_-]*checkpoint|grad[\s_-]*(?:ckpt|checkpoint)|activation[\s_-]*(?:checkpoint|recomput)"
    r"|梯度检查点|重计算|激活重算|(?<![a-z])gc(?![a-z])|checkpointing"
)
_GC_OFF = _c(
    r"(?:no|without|disable[ds]?|off|不开|不用|关闭|关掉|不使用|没开|不要|不)\s*(?:the\s*)?"
    r"(?:gradient|grad|梯度|gc|activation|重计算|checkpoint)|(?:gc|checkpointing)\s*(?:off|=\s*false|关)"
)
# Serving people (an API, users, concurrency) means a serving engine with tensor parallelism; a
# layer-by-layer Hugging Face pipeline only when asked for by name.
_SERVE = _c(
    r"(?<![a-z])serv(?:e|es|ing)(?![a-z])|deploy|部署|上线|线上服务|并发|concurren|"
    r"\d\s*(?:个|位|名)?\s*(?:users|用户|人(?:用|使用|同时|在线|访问))|(?:for|给|供)\s*(?:our\s+|the\s+)?(?:users|用户)|"
    r"(?<![a-z])qps(?![a-z])|api\s*服务|对外服务|推理服务|在线服务|production|生产环境|"
    r"how\s+many\s+(?:concurrent\s+|such\s+|of\s+these\s+)?(?:users|requests|chats|sessions|conversations|sequences|streams)"
    r"|at\s+once|同时|多少人|几个人|"
    r"并发几|几路|(?:team|group|company|office|class)\s+of\s+\d|\d\s*人\s*(?:的)?\s*(?:团队|公司|小组|部门)"
)
_ZERO = _c(r"zero[\s_-]*(?:stage)?[\s_-]*([0-3])(?!\d)")
_GPU_UTIL = _c(r"gpu[\s_-]*memory[\s_-]*utilization\s*(?:=|:)?\s*(0?\.\d+|1(?:\.0+)?)")


def _offload_meant(fields: dict[str, object]) -> Offload:
    """'offload' said without what: ZeRO-3 offloads parameters and optimizer, ZeRO-1/2 the optimizer, a
    training job without a stage the optimizer (ZeRO-Offload); inference offloads layers."""
    if fields.get("task") in (Task.FINETUNE, Task.PRETRAIN):
        return Offload.PARAMS if fields.get("zero_stage") == 3 else Offload.OPTIMIZER
    return Offload.LAYERS


# The KV cache's dtype, said apart from the weights': vLLM/SGLang "--kv-cache-dtype fp8", "fp8 KV", "KV cache
# in fp8", llama.cpp "-ctk q8_0" / "--cache-type-k q4_0". Read (and masked) before the weights' precision, so
# "fp8 KV" does not make the weights fp8.
_KV_DT = r"(fp8(?:_e4m3|_e5m2)?|float8|q8_0|q8|q4_0|q4|fp16|f16|bf16)(?![a-z0-9])"
_KV_WORD = r"kv[\s_-]*(?:cache|缓存)?"
_KV_DTYPE = (
    _c(rf"(?:--?kv[\s_-]*cache[\s_-]*dtype|kv_cache_dtype)\s*[=:]?\s*{_KV_DT}"),
    _c(rf"(?<![a-z])(?:-ctk|-ctv|--cache[\s_-]*type[\s_-]*[kv])\s*[=:]?\s*{_KV_DT}"),
    _c(rf"(?<![a-z0-9]){_KV_DT}\s*(?:的\s*)?{_KV_WORD}"),
    _c(
        rf"(?<![a-z]){_KV_WORD}\s*(?:也|都|就|还|too|also)?\s*"
        rf"(?:in|at|as|=|:|用|使用|采用|量化(?:到|为|成)?|设为|设置为|改成|换成|是|dtype)?\s*"
        rf"{_KV_DT}"
    ),
)
_KV_VALUES = {
    "fp8": KvCacheDtype.FP8,
    "float8": KvCacheDtype.FP8,
    "q8_0": KvCacheDtype.Q8_0,
    "q8": KvCacheDtype.Q8_0,
    "q4_0": KvCacheDtype.Q4_0,
    "q4": KvCacheDtype.Q4_0,
    "fp16": KvCacheDtype.FP16,
    "f16": KvCacheDtype.FP16,
    "bf16": KvCacheDtype.BF16,
}


def _read_kv_dtype(text: str, ex: Extraction) -> str:
    for pattern in _KV_DTYPE:
        match = pattern.search(text)
        if match:
            word = match.group(1).split("_e")[0]
            ex.fields["kv_cache_dtype"] = _KV_VALUES[word]
            return text[: match.start()] + " " + text[match.end() :]
    return text


# every pattern _read_precision reads: one scan says none can match
_BPW = _c(rf"{_B}(?P<bits>\d(?:\.\d+)?)[\s_-]*bpw{_E}")
_PRECISION_WORDS = AnyOf(_PRECISIONS, _QUANTIZED, _NOT_QUANTIZED, _BPW)


def _read_precision(text: str, ex: Extraction) -> None:
    if not _PRECISION_WORDS.holds(text):
        return  # no format, no quantization word: nothing to read (most messages)
    best: tuple[int, Precision] | None = None
    # The last pattern (gguf / llama.cpp / ollama: Q4_K_M, their default) only when no format is named:
    # "llama.cpp with q4_0" is Q4_0.
    *named, (generic, generic_value) = _PRECISIONS
    for pattern, value in named:
        match = pattern.search(text)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), value)
    model = load_registry().by_id.get(str(ex.fields.get("model", "")))
    released_4bit = model is not None and model.native_precision == "int4"  # gpt-oss's MXFP4 GGUF
    if best is None and not released_4bit and (found := generic.search(text)):
        best = (found.start(), generic_value)
    if best:
        ex.fields["precision"] = best[1]
        bpw = _BPW.search(text)
        if bpw and 1.5 <= float(bpw.group("bits")) <= 8.5:
            ex.fields["bits_per_weight"] = float(bpw.group("bits"))  # the weights' own size: N × bpw ÷ 8
    elif _QUANTIZED.search(text) and not _NOT_QUANTIZED.search(text):
        ex.fields["precision"] = Precision.INT4


def _runtime_jobs(ex: Extraction) -> tuple[str, ...]:
    """The language-model jobs of the runtime named (data/runtimes.toml `jobs`), () when none is named."""
    runtime = ex.fields.get("runtime")
    if not isinstance(runtime, str):
        return ()
    return tuple(job for job in load_runtimes().by_id[runtime].jobs if job in ("inference", "training"))


def _read_task(text: str, ex: Extraction) -> None:
    if _QLORA.search(text):
        ex.fields["method"] = Method.QLORA
    elif _FREEZE.search(text):
        ex.fields["method"] = Method.FREEZE
    elif _FULL.search(text) and (_FINETUNE.search(text) or _PRETRAIN.search(text)):
        ex.fields["method"] = Method.FULL
    elif _LORA.search(text):
        ex.fields["method"] = Method.LORA
    if _PRETRAIN.search(text) or (
        # 'train a 10b on 300B tokens' is pretraining even without the word
        _TRAIN_ONLY.search(text) and not _TUNE.search(text) and float(str(ex.fields.get("tokens", 0))) >= 1e10
    ):
        ex.fields["task"] = Task.PRETRAIN
    elif "method" in ex.fields or _FINETUNE.search(text):
        ex.fields["task"] = Task.FINETUNE
    elif _INFERENCE.search(text) or _runtime_jobs(ex) == ("inference",):
        ex.fields["task"] = Task.INFERENCE
    elif _runtime_jobs(ex) == ("training",):
        ex.fields["task"] = (
            Task.FINETUNE
        )  # 'unsloth qwen3 14b', '用unsloth呢': a trainer named is a fine-tune
    if ex.fields.get("task") is Task.FINETUNE and "method" not in ex.fields:
        ex.method_words = True
    if ex.fields.get("method") is Method.QLORA and ex.fields.get("precision") is Precision.INT4:
        ex.fields["precision"] = Precision.NF4


_UNDECIDED = _c(r"开不开|要不要|用不用|开没开|on\s+or\s+off|with\s+or\s+without")


def _read_switches(text: str, ex: Extraction) -> None:
    if _UNDECIDED.search(text):
        pass
    elif _GC_OFF.search(text):
        ex.fields["grad_checkpointing"] = False
    elif _GC_ON.search(text):
        ex.fields["grad_checkpointing"] = True
    runtimes = load_runtimes()
    named = runtimes.named_in(text)  # each profile's words (data/runtimes.toml)
    if "runtime" in ex.fields:
        pass  # named before the flags were masked (core/parser/jobs.py reads the same profile words)
    elif named is not None:
        ex.fields["runtime"] = named.id
    elif _SERVE.search(text) and not _FINETUNE.search(text) and not _PRETRAIN.search(text):
        ex.fields["runtime"] = runtimes.serving_default.id
    elif "samples" in ex.fields and not _FINETUNE.search(text) and not _PRETRAIN.search(text):
        # a batch of requests to get through runs on a serving engine
        ex.fields["runtime"] = runtimes.serving_default.id
    for pattern, optimizer in _OPTIMIZERS:
        if pattern.search(text):
            ex.fields["optimizer"] = optimizer
            break
    zero = _ZERO.search(text)
    if zero:
        ex.fields["zero_stage"] = int(zero.group(1))
    util = _GPU_UTIL.search(text)
    if util and 0 < float(util.group(1)) <= 1:
        ex.fields["gpu_memory_utilization"] = float(util.group(1))


_COUNT_BEFORE = _c(r"(?<![a-z0-9.])(\d{1,4})\s*(?:张|块|台|片|个|x|×|\*)?\s*$")


def _counts_before_cards(text: str, cards: list[CardMention]) -> dict[str, int]:
    """The count written right before each card ('8张4090和2张A100'), when every card named has one."""
    counts: dict[str, int] = {}
    for mention in cards:
        match = _COUNT_BEFORE.search(text[max(0, mention.start - 8) : mention.start])
        if match is None or not 1 <= int(match.group(1)) <= 4096:
            return {}
        counts[mention.card_id] = int(match.group(1))
    return counts if len(counts) >= 2 else {}


_URL_CHAR = re.compile(r"[A-Za-z0-9._~:/#@%&=+-]")


def _read_repo_id(text: str, ex: Extraction) -> str:
    """A pasted Hub id or URL ('mistralai/Magistral-Small-2509') names exactly one model: the registry's
    when it has that repo, else an unknown model (looked up by the bot), never a registry model whose name
    happens to sit inside the id."""
    ref = find_reference(text)
    if ref is None:
        return text
    found = re.search(re.escape(ref.repo_id), text)
    if found is None:
        return text
    start, end = found.span()
    while start > 0 and _URL_CHAR.match(text[start - 1]):
        start -= 1  # the URL around the id
    while end < len(text) and _URL_CHAR.match(text[end]) and text[end] not in "?,":
        end += 1
    match = load_registry().resolve(ref.repo_id)
    if match is not None:
        ex.fields["model"] = match.model.id
    else:
        ex.unknown_model = ref.repo_id
    return mask(text, [(start, end)], MODEL_MARK)


_SIZED_CARD = re.compile(r"\d\s*(?:gb|gib|g)\s*$")
_VRAM_WORD_AFTER = re.compile(r"\s*显存")


def _with_vram_word(text: str, start: int, end: int) -> int:
    """The end of a card mention, with the '显存' right after a size it carries ('4090d 24g显存 64g内存': that
    显存 is the card's, so the 64g after it is system RAM, not the card's size)."""
    after = _VRAM_WORD_AFTER.match(text, end)
    return after.end() if after and _SIZED_CARD.search(text[start:end]) else end


# A memory size written beside a card name: 'rtx 5060 ti 16g', '5060ti 16gb显存', 'rtx 5060 ti (16 GB)',
# 'rtx 5060 ti with 16gb', '16GB RTX 5060 Ti'
_MEMORY_AFTER_CARD = _c(
    r"^\s*(?:with\s+|w/\s*|,\s*|，\s*|\(\s*|（\s*|-\s*)?\d{1,3}\s*(?:gb|gib|g)(?![a-z0-9])"
)
_MEMORY_BEFORE_CARD = _c(r"(?<![a-z0-9.])\d{1,3}\s*(?:gb|gib|g)\s*(?:的|显存的?)?\s*$")


def _unlisted_with_memory(
    text: str, unknown: list[Rejected], spans: list[tuple[int, int]]
) -> Rejected | None:
    """The one card the catalogue lacks that the message names with a memory size right beside it, if so:
    its memory is the question's card (the rejection is dropped once that memory is read)."""
    if len(unknown) != 1 or len(spans) != 1:
        return None
    start, end = spans[0]
    after, before = text[end : end + 16], text[max(0, start - 12) : start]
    return unknown[0] if _MEMORY_AFTER_CARD.search(after) or _MEMORY_BEFORE_CARD.search(before) else None


def _not_a_vision_job(text: str, ex: Extraction) -> bool:
    from core.parser.vision import find_vision_model

    return ex.has_model or find_vision_model(text) is None


def extract(text: str) -> Extraction:
    """All stated fields of one normalized message."""
    ex = Extraction()
    said = text
    text = _read_network(text, ex)  # before the sizes: '100G Ethernet' is the network's speed, no memory size
    text = _read_repo_id(text, ex)
    # runtime names are no model names ('llama-factory qwen2.5 32b' names Qwen2.5 32B, not a Llama)
    model = None if "model" in ex.fields or ex.unknown_model else find_model(load_runtimes().blanked(text))
    if model:
        if model.model_id:
            ex.fields["model"] = model.model_id
        else:
            ex.unknown_model = model.typed
            if model.params_b and 0.001 <= model.params_b <= 100_000:
                ex.fields["params_b"] = model.params_b
        text = mask(text, [(model.start, model.end)], MODEL_MARK)
    ex.cards = find_cards(text)
    ex.card_counts = _counts_before_cards(text, ex.cards)
    text = mask(text, [(c.start, _with_vram_word(text, c.start, c.end)) for c in ex.cards], CARD_MARK)
    unknown_cards, spans = read_unknown_cards(text)
    unlisted = _unlisted_with_memory(text, unknown_cards, spans) if not ex.cards else None
    ex.rejected += unknown_cards
    text = mask(text, spans, CARD_MARK)
    text = read_jobs(text, ex.fields)
    offload_said = bool(ex.fields.pop("offload_said", False))
    bad_numbers, text = read_bad_numbers(text)
    ex.rejected += bad_numbers
    text = _read_market(text, ex)
    text = _read_money(text, ex)
    text = _read_tokens(text, ex)
    text = _read_data_amount(text, ex)
    text = _read_capacity(text, ex)
    if ex.fields.get("cpu_only") and not ex.cards and "card_memory_bytes" in ex.fields:
        # 'no gpu, 512gb ddr5': with no GPU a memory size is the system RAM's, never a card's
        size = ex.fields.pop("card_memory_bytes")
        if isinstance(size, int):
            ex.fields.setdefault("host_memory_bytes", round(size / GIB) * 1000**3)
    if ex.cards:
        ex.fields.pop("card_memory_bytes", None)
        ex.fields["card"] = ex.cards[0].card_id
    elif unlisted is not None and "card_memory_bytes" in ex.fields and _not_a_vision_job(said, ex):
        # 'rtx 5060 ti 16g': a card the catalogue lacks, with its memory said: answered for that memory (a
        # language-model job; vision answers cannot name such a card yet, so there it stays rejected)
        ex.rejected.remove(unlisted)
        ex.fields["card_name"] = unlisted.typed
    text = _read_sizes(text, ex)
    if not ex.has_model:
        ex.family_only = find_family_only(text)
    rank, text = _take_int(_RANK, text, 1, 4096)
    if rank:
        ex.fields["lora_rank"] = rank
    if "seq" not in ex.fields:
        text = _read_seq(text, ex)
    batch, text = _take_int(_BATCH, text, 1, 1_000_000)
    if batch:
        share = _SHARE_AT_ONCE.search(text)
        if share and 0 < float(share.group("pct")) < 100:
            # '同时在线 1000 人，大概 5% 的人同时在等回复': the share of them waiting at once is the batch
            batch = max(1, round(batch * float(share.group("pct")) / 100))
        ex.fields["batch"] = batch
    users, text = _take_int(_HEADCOUNT, text, 1, 1_000_000_000)
    if users:
        ex.fields["users"] = users
    _read_counts(_NOT_A_COUNT.sub(" ", text), ex)
    opt_masked = _read_kv_dtype(_OPT_8BIT.sub(" ", text), ex)
    _read_precision(opt_masked, ex)
    _read_switches(text, ex)
    _read_task(opt_masked, ex)
    if offload_said:
        ex.fields["offload"] = _offload_meant(ex.fields)
    ex.residue = text
    return ex
