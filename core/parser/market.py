"""What a renter's question says about the market: the platform named, the billing kind asked about, how many
hours a day the card is used, and the serving traffic (requests per day or second, prompt and response
lengths, latency targets). Read before the generic number readers, whose spans it masks: "输入1000 token"
is a prompt length, not an amount of training data, and "每天用8小时" no duration of a job.
"""

from __future__ import annotations

import re
from functools import cache

from core.parser.card_names import mask
from core.parser.numbers import magnitude
from core.platforms import load_platforms
from core.regex_screen import AnyOf, TextPattern, gated

MARKET_MARK = "\ue004"  # stands in for what was read here


def _c(pattern: str) -> TextPattern:
    return gated(pattern)  # no search where the strings every match holds are missing (regex_screen)


@cache
def _platform_pattern() -> tuple[TextPattern, dict[str, str]]:
    by_alias: dict[str, str] = {}
    for platform in load_platforms().values():
        for alias in (platform.id, platform.name.lower(), *platform.aliases):
            by_alias.setdefault(alias.lower(), platform.id)
    body = "|".join(re.escape(a).replace(r"\ ", r"\s*") for a in sorted(by_alias, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9])(?:{body})(?![a-z0-9])"), by_alias


def read_platform(text: str) -> tuple[str | None, str]:
    """The platform the message names (its id), and the text with it masked."""
    pattern, by_alias = _platform_pattern()
    match = pattern.search(text)
    if match is None:
        return None, text
    typed = re.sub(r"\s+", " ", match.group(0))
    platform_id = by_alias.get(typed) or by_alias.get(typed.replace(" ", ""))
    if platform_id is None:
        platform_id = next(
            (pid for alias, pid in by_alias.items() if re.sub(r"\s", "", alias) == re.sub(r"\s", "", typed)),
            None,
        )
    return platform_id, mask(text, [match.span()], MARKET_MARK)


# Billing kinds, most specific first: a question naming 包月 and 按小时 asks about the monthly rent.
_BILLING = (
    ("spot", _c(r"抢占|竞价|可中断|spot|interruptible|preemptible|pre-emptible")),
    (
        "reserved",
        _c(
            r"reserved|预留|包年|年租|按年(?:租|付)|capacity\s*blocks?|committed\s+use|savings\s+plan"
            r"|(?<![a-z])commit(?:ment|ted)(?![a-z])"
        ),
    ),
    (
        "monthly",
        # 'a monthly budget of $2,000' is a budget's period, not a billing kind
        _c(
            r"包月|按月(?:租|付|计费)?|月租|monthly(?!\s+budget)|by\s+the\s+month|per\s+month\s+(?:rent|plan|billing)"
        ),
    ),
    ("weekly", _c(r"包周|按周|weekly(?!\s+budget)|by\s+the\s+week")),
    ("daily", _c(r"包天|包日|按天|按日|by\s+the\s+day|daily\s+(?:rent|plan|billing)")),
    (
        "on-demand",
        _c(
            r"按量|按小时|按时(?:计费)?|按秒(?:计费)?|按需|on[\s-]*demand|pay[\s-]*as[\s-]*you[\s-]*go|hourly(?!\s+budget)"
            r"|per[\s-]*second\s+billing|billed\s+per\s+second"
        ),
    ),
)


def read_billing(text: str) -> str | None:
    """The billing kind the message asks about (spot / reserved / monthly / … / on-demand), or None."""
    for kind, pattern in _BILLING:
        if pattern.search(text):
            return kind
    return None


# A price the question states for a billing kind: '包月950', '按量1.58一小时', 'monthly ~$1500', '$2.5/h
# on-demand'. Read only in a billing question (a money amount elsewhere is a budget). Normalized text has
# '一个月' as '1个月'.
_PRICE_CUR = r"(?P<pre>us\$|\$|¥|usd|rmb)?"
_PRICE_NUM = r"(?P<num>\d+(?:\.\d+)?)\s*(?P<mag>k|千|万)?"
_PRICE_SUF = r"(?:\s*(?P<suf>块钱|块|元|rmb|usd|dollars?|bucks|刀|美元))?"
_PRICE = rf"{_PRICE_CUR}\s*{_PRICE_NUM}{_PRICE_SUF}"
_PRICE_PERIOD = {
    "weekly": r"(?:\s*(?:/\s*(?:wk|week|周)(?![a-z])|每周|a\s+week|per\s+week))",
    "daily": r"(?:\s*(?:/\s*(?:day|天)(?![a-z])|a\s+day|per\s+day))",
    "monthly": r"(?:\s*(?:/\s*(?:mo|month|月)(?![a-z])|(?:1|一)\s*个?\s*月|每个?月"
    r"|a\s+month|per\s+month))",
    "on-demand": r"(?:\s*(?:/\s*(?:h|hr|hour|小时|时)(?![a-z])|(?:1|一)\s*个?\s*小时|每小时"
    r"|an?\s+hour|per\s+hour))",
}
_PRICE_WORDS = {
    "monthly": r"(?:包月|月租|按月(?:租|付|计费)?|monthly|by\s+the\s+month)",
    "weekly": r"(?:包周|周租|按周(?:租|付|计费)?|weekly|by\s+the\s+week)",
    "daily": r"(?:包天|包日|日租|按天(?:租|付|计费)?|by\s+the\s+day)",
    "on-demand": r"(?:按量(?:计费)?|按小时|按时(?:计费)?|按需|on[\s-]*demand|hourly"
    r"|pay[\s-]*as[\s-]*you[\s-]*go)",
}
# right after the kind's word ('包月950', 'hourly is 2.5'): a few words, and the amount no count of another
# thing
_NEAR = r"(?:\s*(?:价格?|价钱|是|要|为|大概|大约|约|才|只要|只|is|at|about|around|~|≈|=|:|of))*\s*"
_NOT_A_PRICE = r"(?!\d|\.\d|%)(?!\s*(?:个|天|日|周|星期|小时|h(?![a-z])|张|卡|台|g(?![a-z])|gb|b(?![a-z])))"
# further on ('monthly h100 rental is ~$1500'): only an amount that says it is money or a price for the period
_FAR = (
    r"(?:(?!\$|¥|(?<![a-z0-9])\d|还是|或者|或|和|跟"
    r"|(?<![a-z])(?:or|vs|versus|and)(?![a-z]))[^,;、])"
)
_PERIOD_FIRST = {
    "weekly": r"(?:(?:1|一)\s*周|每周|a\s+week|per\s+week)",
    "daily": r"(?!)",  # '每天' / '一天' first is how long a day's use is, not a price's period
    "monthly": r"(?:(?:1|一)\s*个?\s*月|每\s*个?\s*月|a\s+month|per\s+month)",
    "on-demand": r"(?:(?:1|一)\s*个?\s*小时|每\s*小时|an?\s+hour|per\s+hour)",
}
_NOT_A_COUNT = (
    r"(?!\d|\.\d|%)(?!\s*(?:个|次|天|日|周|星期|小时|h(?![a-z])|张|卡|台|人|g(?![a-z])|gb|b(?![a-z])"
    r"|requests?|calls?|queries|tokens?|users?))"
)
_STATED_PRICES = {
    kind: (
        (
            _c(
                rf"{_PRICE_WORDS[kind]}{_NEAR}(?<![a-z0-9.]){_PRICE}"
                rf"(?P<per>{_PRICE_PERIOD[kind]})?{_NOT_A_PRICE}"
            ),
            False,
        ),
        (
            _c(
                rf"{_PRICE_WORDS[kind]}{_FAR}{{0,32}}?(?<![a-z0-9.]){_PRICE}(?P<per>{_PRICE_PERIOD[kind]})?(?!\d|\.\d|%)"
            ),
            True,
        ),
        # the amount with its period: '$2.5/h on-demand', '950元/月'
        (_c(rf"(?<![a-z0-9.]){_PRICE}(?P<per>{_PRICE_PERIOD[kind]})"), False),
        # the period first: '包月 h20 一个月 1.2万', '按量 每小时 25块'; an hourly amount says it is money
        # ('per hour 3600' counts requests)
        (_c(rf"{_PERIOD_FIRST[kind]}{_NEAR}(?<![a-z0-9.]){_PRICE}{_NOT_A_COUNT}"), kind == "on-demand"),
    )
    for kind in ("monthly", "on-demand", "weekly", "daily")
}


# A reserved / committed price: a year's term ('包年 9000', '$9,000 a year') or an hourly rate committed to
# ('a 3-month commitment at $1.85/h', '预留 1.2 一小时'), as the hourly figure billed around the clock
HOURS_PER_YEAR = 8760
_YEAR_WORDS = r"(?:包年|年租|按年(?:租|付|计费)?|yearly|annual(?:ly)?)"
_PER_YEAR = r"(?:\s*(?:/\s*(?:yr|year|年)(?![a-z])|(?:1|一)\s*年|每年|a\s+year|per\s+year))"
_COMMIT_WORDS = r"(?:reserved|reservation|预留|(?<![a-z])commit(?:ment|ted)(?![a-z])|包年)"
_RESERVED_PRICES = (
    (_c(rf"{_YEAR_WORDS}{_NEAR}(?<![a-z0-9.]){_PRICE}(?:{_PER_YEAR})?{_NOT_A_PRICE}"), HOURS_PER_YEAR),
    (_c(rf"(?<![a-z0-9.]){_PRICE}{_PER_YEAR}"), HOURS_PER_YEAR),
    (_c(rf"{_COMMIT_WORDS}[^,;，；$¥\d]{{0,24}}?(?<![a-z0-9.]){_PRICE}{_PRICE_PERIOD['on-demand']}"), 1),
)


def read_reserved_price(text: str) -> tuple[float | None, str | None, str]:
    """A reserved price the question states, per hour of the commitment (a year's term ÷ 8,760 h), its
    currency as written, and the text with it masked."""
    for pattern, hours in _RESERVED_PRICES:
        match = pattern.search(text)
        if match is None:
            continue
        value = magnitude(match.group("num"), match.group("mag"))
        if value > 0:
            currency = match.group("pre") or match.group("suf")
            return value / hours, currency, mask(text, [match.span()], MARKET_MARK)
    return None, None, text


# an hourly rate said per second ('$0.00069/s', '0.0005 元每秒'): × 3,600
_PER_SECOND_PRICE = _c(
    rf"(?<![a-z0-9.]){_PRICE}\s*(?:/\s*(?:s|sec|second)(?![a-z])|per\s+second|a\s+second|每秒|/秒)"
)


def read_stated_prices(text: str) -> tuple[dict[str, float], str | None, str]:
    """The prices a billing question states ({'monthly': 950.0, 'on-demand': 1.58}), the currency they are
    written in (a symbol or unit: '¥', '元', '$'; None when bare), and the text with them masked."""
    prices: dict[str, float] = {}
    currency: str | None = None
    spans: list[tuple[int, int]] = []
    if (second := _PER_SECOND_PRICE.search(text)) is not None:
        value = magnitude(second.group("num"), second.group("mag"))
        if value > 0 and (second.group("pre") or second.group("suf")):
            prices["on-demand"] = value * 3600
            currency = second.group("pre") or second.group("suf")
            spans.append(second.span())
    for kind, patterns in _STATED_PRICES.items():
        for pattern, said_as_money in patterns:
            match = next(
                (
                    m
                    for m in pattern.finditer(text)
                    if not any(s < m.end() and m.start() < e for s, e in spans)
                    and (not said_as_money or m.group("pre") or m.group("suf") or m.group("per"))
                ),
                None,
            )
            if match is None:
                continue
            value = magnitude(match.group("num"), match.group("mag"))
            if value <= 0:
                continue
            prices[kind] = value
            currency = currency or match.group("pre") or match.group("suf")
            spans.append(match.span())
            break
    return prices, currency, mask(text, spans, MARKET_MARK) if spans else text


_HOURS_PER_DAY = (
    _c(
        r"(?:每天|一天|每日|天天|白天|每个?工作日)\s*(?:就|只|大概|大约|约|会|要|能)?\s*(?:用|跑|开|使用|开机|训练|train)?\s*"
        r"(?P<h>\d+(?:\.\d+)?)\s*(?:个)?\s*(?:小时|h(?![a-z]))"
    ),
    _c(r"(?P<h>\d+(?:\.\d+)?)\s*(?:个)?\s*小时\s*(?:一天|每天|/天|每日)"),
    _c(r"(?P<h>\d+(?:\.\d+)?)\s*(?:hours?|hrs?|h)\s*(?:a|per|each|/)\s*day"),
    _c(r"(?P<h>24)\s*(?:个)?\s*小时\s*(?:不关机|不停|开着|运行|跑)"),
    _c(
        r"(?P<all>24\s*/\s*7|24x7|全天候|全天|around\s+the\s+clock|all\s+day|连续\s*(?:跑|训练|运行|用|开)|不间断|不停机"
        r"|non[\s-]*stop|continuously|without\s+a\s+break)"
    ),
)


# The hours of a working day said by the clock: '9 点到 18 点', '早上9点到晚上6点', '9am to 6pm', '9-to-5'
_CLOCK_SPAN = _c(
    r"(?:早上|上午|白天)?\s*(?P<a>\d{1,2})\s*(?P<a_unit>点|:00|am|a\.m\.)?\s*(?:到|至|~|～|-|–|to|until|till)\s*"
    r"(?P<pm_word>下午|晚上|傍晚)?\s*(?P<b>\d{1,2})\s*(?P<b_unit>点|:00|pm|p\.m\.)"
)
_NINE_TO_FIVE = _c(r"(?<![\d.])9[\s-]*to[\s-]*5(?![\d.])|朝九晚五")


def _clock_hours(text: str) -> tuple[float, tuple[int, int]] | None:
    """The hours between two clock times ('9 点到 18 点' = 9), when the message gives a working day."""
    if (m := _NINE_TO_FIVE.search(text)) is not None:
        return 8.0, m.span()
    m = _CLOCK_SPAN.search(text)
    if m is None:
        return None
    start, end = int(m.group("a")), int(m.group("b"))
    pm = m.group("pm_word") or m.group("b_unit") in ("pm", "p.m.")
    if pm and end < 12:
        end += 12
    hours = end - start
    return (float(hours), m.span()) if 0 < hours <= 24 and start < 24 and end <= 24 else None


def read_hours_per_day(text: str) -> tuple[float | None, str]:
    if (clock := _clock_hours(text)) is not None:
        return clock[0], mask(text, [clock[1]], MARKET_MARK)
    for pattern in _HOURS_PER_DAY:
        match = pattern.search(text)
        if match is None:
            continue
        value = 24.0 if match.groupdict().get("all") else float(match.group("h"))
        if 0 < value <= 24:
            return value, mask(text, [match.span()], MARKET_MARK)
    return None, text


# counts as Chinese and English write them ('两周', 'two weeks', '半个月')
_ZH_COUNT: dict[str, float] = dict(
    zip("一两二三四五六七八九十半", (1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0.5), strict=True)
)
_EN_COUNT: dict[str, float] = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_EN_COUNT |= {"ten": 10, "a couple of": 2}
_DAYS_IN = {"天": 1, "日": 1, "周": 7, "星期": 7, "礼拜": 7, "月": 30, "day": 1, "week": 7, "month": 30}
# '连续跑两周', '租3天', 'for two weeks': how long the card is rented (never '一天10小时', a day's use)
_RENTAL_DAYS = (
    _c(
        r"(?:连续|持续|一共|总共|共|要|需要|打算|准备)?\s*(?:跑|租|用|训练|训|开)\s*(?:上)?\s*"
        r"(?P<n>\d+(?:\.\d+)?|[一两二三四五六七八九十半])\s*(?:个)?\s*(?P<u>天|日|周|星期|礼拜|月)"
        r"(?!\s*(?:就|只|大概|约|能)?\s*\d+(?:\.\d+)?\s*(?:个)?\s*(?:小时|h(?![a-z])))"
    ),
    _c(
        r"(?:for|over|lasting|takes?)\s+(?:about\s+)?"
        r"(?P<n>\d+(?:\.\d+)?|a couple of|a|one|two|three|four|five|six|ten)"
        r"\s+(?P<u>day|week|month)s?(?![a-z])"
    ),
)


def read_rental_days(text: str) -> float | None:
    """How many days the card is rented for, when the message says it ('连续跑两周训练' = 14)."""
    for pattern in _RENTAL_DAYS:
        match = pattern.search(text)
        if match is None:
            continue
        n = match.group("n")
        count = float(n) if n[0].isdigit() else float(_ZH_COUNT.get(n) or _EN_COUNT.get(n) or 0)
        days = count * _DAYS_IN[match.group("u")]
        if 0 < days <= 3650:
            return days
    return None


# A time the job must finish within: '一周内', '3 天之内', '24小时内', '月底前（还有 10 天）',
# 'within 24 hours', 'in under 24 hours', 'done in 2 days', 'in 60 days', '12 hours from now'. Read for any
# message; only a training job with its data is sized by it (core/advisor/cluster.py).
_DEADLINE_HOURS_IN = {
    "小时": 1.0, "钟头": 1.0, "天": 24.0, "日": 24.0, "周": 168.0, "星期": 168.0, "礼拜": 168.0, "月": 720.0,
    "h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "day": 24.0, "week": 168.0, "month": 720.0,
}  # fmt: skip
_ZH_N = r"(?P<n>\d+(?:\.\d+)?|[一两二三四五六七八九十半])"
_EN_N = r"(?P<n>\d+(?:\.\d+)?|a|one|two|three|four|five|six|ten)"
_EN_UNIT = r"(?P<u>hours?|hrs?|h|days?|weeks?|months?)(?![a-z])"
_DEADLINE = (
    _c(rf"{_ZH_N}\s*(?:个)?\s*(?P<u>小时|钟头|天|日|周|星期|礼拜|月)\s*(?:之内|以内|内)(?!存)"),
    _c(
        rf"(?:截止|deadline|ddl|之前|前)\s*[(（]?\s*(?:还有|只剩|剩|只有)\s*{_ZH_N}\s*(?:个)?\s*(?P<u>小时|天|周|月)"
    ),
    _c(
        r"(?:within|in\s+under|in\s+less\s+than|in\s+no\s+more\s+than|done\s+in|finished\s+in|finish\s+in|"
        rf"completed?\s+in|ready\s+in)\s+(?:about\s+|roughly\s+|the\s+next\s+)?{_EN_N}\s*-?\s*{_EN_UNIT}"
    ),
    _c(rf"(?<![a-z]){_EN_N}\s*-?\s*{_EN_UNIT}\s+from\s+now"),
    _c(rf"(?<![a-z])in\s+{_EN_N}\s*-?\s*{_EN_UNIT}"),
)


def read_deadline(text: str) -> float | None:
    """The hours a job must finish within, when the message sets one ('一周内要训完' = 168)."""
    for pattern in _DEADLINE:
        match = pattern.search(text)
        if match is None:
            continue
        n = match.group("n")
        count = float(n) if n[0].isdigit() else float(_ZH_COUNT.get(n) or _EN_COUNT.get(n) or 0)
        unit = match.group("u")
        hours = count * _DEADLINE_HOURS_IN[unit if unit in _DEADLINE_HOURS_IN else unit.rstrip("s")]
        if 0 < hours <= 87_600:
            return hours
    return None


# -- traffic -----------------------------------------------------------------------------------------
_MAG = r"(?P<mag>万|千|k|w|m|million|亿)?"
_NUM = rf"(?P<num>\d+(?:\.\d+)?)\s*{_MAG}"
_REQ = r"(?:个|次)?\s*(?:请求|调用|requests?|calls?|queries|reqs?|conversations?|chats?|对话|次)"
_PER_DAY = r"(?:日均|平均每天|每天平均|一天|每天|每日|日|天|daily|per\s*day|a\s*day|/\s*day|/天)"
_PER_SECOND = r"(?:每秒|(?<![0-9.])(?:一|1)\s*秒|per\s*second|a\s*second|/\s*s(?:ec)?(?![a-z])|/秒)"
_REQUESTS_PER_DAY = (
    _c(rf"{_PER_DAY}\s*(?:大概|大约|约|有|会有|要处理)?\s*{_NUM}\s*{_REQ}"),
    _c(rf"(?<![a-z0-9.]){_NUM}\s*{_REQ}\s*(?:每天|一天|每日|a\s*day|per\s*day|/\s*day|daily|/天)"),
)
_PER_MINUTE = r"(?:每分钟|(?<![0-9.])(?:一|1)\s*分钟|per\s*minute|a\s*minute|/\s*min(?:ute)?(?![a-z])|/分钟)"
_PER_HOUR = (
    r"(?:每小时|(?<![0-9.])(?:一|1)\s*(?:个)?\s*小时|per\s*hour|an\s*hour|/\s*(?:h|hr|hour)(?![a-z])|/小时)"
)
# '每分钟600个请求', '600 requests per minute', '3600 calls an hour': a rate over a minute or an hour
_REQUESTS_PER_SPAN = (
    (_c(rf"{_PER_MINUTE}\s*(?:大概|大约|约|有)?\s*{_NUM}\s*{_REQ}"), 60),
    (_c(rf"(?<![a-z0-9.]){_NUM}\s*{_REQ}\s*{_PER_MINUTE}"), 60),
    (_c(rf"(?<![a-z0-9.]){_NUM}\s*rpm(?![a-z])"), 60),
    (_c(rf"{_PER_HOUR}\s*(?:大概|大约|约|有)?\s*{_NUM}\s*{_REQ}"), 3600),
    (_c(rf"(?<![a-z0-9.]){_NUM}\s*{_REQ}\s*{_PER_HOUR}"), 3600),
)
_REQUESTS_PER_SECOND = (
    _c(rf"{_PER_SECOND}\s*(?:大概|大约|约|有)?\s*{_NUM}\s*{_REQ}"),
    _c(rf"(?<![a-z0-9.]){_NUM}\s*{_REQ}\s*{_PER_SECOND}"),
    _c(rf"(?<![a-z0-9.]){_NUM}\s*(?:qps|rps)(?![a-z])"),
    _c(rf"(?:qps|rps)\s*(?:=|:|为|是|of|about|约|大概)?\s*{_NUM}"),
)
_DAU = (
    _c(
        rf"(?<![a-z0-9.]){_NUM}\s*(?:个)?\s*(?:日活|dau|daily\s+(?:active\s+)?users|日活用户|(?:active\s+)?users\s+(?:a|per)\s+day)"
    ),
    # the count after: '日活1万', 'DAU 10k', '日活用户大概5000'
    _c(
        rf"(?:日活(?:用户)?|dau)\s*(?:大概|大约|约|有|是|=|:|of|about|~)?\s*{_NUM}(?!\s*(?:%|个?小时|h(?![a-z])))"
    ),
)
# 'each asks 30 times', '每人每天问30次', and the count first: '~20 msgs each', '20 questions per user a day'
_PER_USER_DAY = (
    _c(
        rf"(?:每人|每个人|每个用户|每用户|each|per\s+user)\s*(?:每天|一天|a\s*day|per\s*day)?\s*"
        rf"(?:大概|大约|约|平均)?\s*(?:问|用|请求|调用|发|聊|对话|asks?|sends?|makes?)?"
        rf"\s*{_NUM}\s*(?:次|个问题|条|轮|句|requests?|questions?|times|messages?|msgs?|turns?)"
    ),
    _c(
        rf"(?<![a-z0-9.]){_NUM}\s*(?:messages?|msgs?|questions?|requests?|queries|chats?|times)\s*"
        rf"(?:a\s*day\s*|per\s*day\s*)?(?:each|per\s+(?:user|person|head))"
    ),
)
_TOK = r"(?:个)?\s*(?:tokens?|词元|字)?"
_PROMPT = (
    _c(
        rf"(?:输入|prompt|input|提示词?|问题长度)\s*(?:长度|length|长)?\s*(?:约|大概|大约|平均|is|of|=|:)?\s*{_NUM}\s*{_TOK}"
    ),
    # '$300 in total' is money
    _c(
        rf"(?<![a-z0-9.$¥]){_NUM}\s*{_TOK}\s*(?:的)?\s*(?:prompts?|inputs?|输入|in(?![a-z])(?!\s+(?:total|all)\b))"
    ),
)
_RESPONSE = (
    _c(
        rf"(?:输出|output|response|回复|回答|生成|completion)\s*(?:长度|length|长)?\s*(?:约|大概|大约|平均|is|of|=|:)?\s*{_NUM}\s*{_TOK}"
    ),
    _c(
        # '300 tokens out', '500 output tokens', '200 out' are lengths; '1 million responses' counts responses
        rf"(?<![a-z0-9.]){_NUM}\s*(?:个)?\s*(?:tokens?|词元|字)\s*(?:的)?\s*(?:outputs?|responses?|completions?|输出|回复|out(?![a-z]))"
    ),
    _c(rf"(?<![a-z0-9.]){_NUM}\s*(?:个)?\s*(?:的)?\s*(?:outputs?|输出|out(?![a-z]))"),
)
_TTFT = _c(
    r"(?:首字延迟|首字|首token延迟|首\s*token|ttft|time\s+to\s+first\s+token|first[\s-]+token\s+latency)\s*"
    r"(?:要|在|<|≤|<=|under|below|within|of|at\s+most|不超过|小于|低于)?\s*(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>ms|毫秒|s|秒)"
    r"(?:\s*(?:以内|以下|之内))?"
)
_USER_SPEED = (
    _c(
        r"(?:每个用户|每用户|每人|each\s+user|per\s+user)\s*(?:每秒|至少|要)?\s*(?P<num>\d+(?:\.\d+)?)\s*(?:个)?\s*(?:tokens?|tok)(?:\s*/\s*s)?"
    ),
    _c(r"(?P<num>\d+(?:\.\d+)?)\s*(?:tokens?|tok)\s*/\s*s\s*(?:per|each|for\s+each|/)\s*user"),
)


# People online at once and how often each sends a message: '在线用户 300 人，平均每人每分钟发一条',
# '300 users online, each sends a message a minute' (Little's law gives how many are in flight, not the 300)
_ONLINE_USERS = (
    _c(
        rf"(?:在线用户|在线人数|同时在线(?:用户|人数)?)\s*(?:大概|大约|约|有|是|为|:)?\s*{_NUM}\s*(?:个|人|位)?"
    ),
    _c(rf"(?<![a-z0-9.]){_NUM}\s*(?:个|位)?\s*(?:人|用户)\s*(?:同时)?在线"),
    _c(rf"(?<![a-z0-9.]){_NUM}\s*(?:users?|people)\s+(?:online|at\s+once|concurrently)"),
)
_ZH_ONE_TO_TEN = "一两二三四五六七八九十"
_ONE_NUM = rf"(?P<num>\d+(?:\.\d+)?|[{_ZH_ONE_TO_TEN}]|a|an|one|two|three)\s*{_MAG}"
_PER_USER_SPAN = (
    (
        _c(
            rf"(?:每人|每个人|每个用户|每用户|each|per\s+user)\s*(?:平均)?\s*{_PER_MINUTE}\s*(?:大概|大约|约|平均)?"
            rf"\s*(?:问|发|请求|调用|聊|sends?|asks?|makes?)?\s*{_ONE_NUM}\s*(?:次|条|个|轮|句|messages?|msgs?|requests?|"
            r"questions?|times)"
        ),
        60,
    ),
    (
        _c(
            rf"(?:每人|每个人|每个用户|每用户|each|per\s+user)\s*(?:平均)?\s*{_PER_HOUR}\s*(?:大概|大约|约|平均)?"
            rf"\s*(?:问|发|请求|调用|聊|sends?|asks?|makes?)?\s*{_ONE_NUM}\s*(?:次|条|个|轮|句|messages?|msgs?|requests?|"
            r"questions?|times)"
        ),
        3600,
    ),
    (
        _c(
            rf"(?:each|per\s+user)\s+(?:sends?|asks?|makes?|posts?)\s+{_ONE_NUM}\s*(?:messages?|msgs?|requests?|"
            rf"questions?|queries)\s*{_PER_MINUTE}"
        ),
        60,
    ),
    (
        _c(
            rf"(?:each|per\s+user)\s+(?:sends?|asks?|makes?|posts?)\s+{_ONE_NUM}\s*(?:messages?|msgs?|requests?|"
            rf"questions?|queries)\s*{_PER_HOUR}"
        ),
        3600,
    ),
)
_WORD_VALUES = (
    {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}
    | {c: i + 1 for i, c in enumerate("一二三四五六七八九十")}
    | {"两": 2}
)


def _online_users_rate(text: str) -> tuple[float, list[tuple[int, int]]] | None:
    """Requests per second from people online at once times each one's rate a minute or an hour."""
    users = next((m for p in _ONLINE_USERS if (m := p.search(text))), None)
    if users is None:
        return None
    for pattern, seconds in _PER_USER_SPAN:
        if (each := pattern.search(text)) is not None:
            num = each.group("num")
            value = _WORD_VALUES.get(num) or float(num) if not num[0].isdigit() else _count(each)
            return _count(users) * float(value) / seconds, [users.span(), each.span()]
    return None


# A peak said as a multiple of the rate given ('our peak is 3x the average of 2 requests/s', '峰值是平均的
# 3 倍'): the cards are sized for the peak, so the rate read is multiplied by it
_PEAK_MULTIPLE = (
    _c(
        r"peak\s+(?:traffic\s+|load\s+)?(?:is\s+|of\s+|at\s+)?(?:about\s+|around\s+|~)?(?P<k>\d+(?:\.\d+)?)\s*"
        r"(?:x|×|times)\s+(?:the\s+|our\s+|an?\s+)?(?:average|mean|normal)"
    ),
    _c(r"(?:峰值|高峰)\s*(?:是|为|约|大概)?\s*(?:平均(?:值|水平)?的?)\s*(?P<k>\d+(?:\.\d+)?)\s*倍"),
)


def _count(match: re.Match[str]) -> float:
    return magnitude(match.group("num"), match.group("mag"))


def _lengths(match: re.Match[str]) -> int:
    mag = (match.group("mag") or "").lower()
    value = float(match.group("num")) * (1000 if mag == "k" else 1)
    return int(value)


def _rate_over_span(text: str) -> tuple[float, tuple[int, int]] | None:
    """Requests per second from a rate said over a minute or an hour, and where it was said."""
    for pattern, seconds in _REQUESTS_PER_SPAN:
        if (m := pattern.search(text)) is not None:
            return _count(m) / seconds, m.span()
    return None


def _daily_users_and_requests(text: str) -> tuple[re.Match[str], re.Match[str]] | None:
    """The daily users and the requests each makes a day ('日活1万 每人每天问20次'), when both are said."""
    dau = next((d for p in _DAU if (d := p.search(text))), None)
    per_user = next((u for p in _PER_USER_DAY if (u := p.search(text))), None)
    return (dau, per_user) if dau is not None and per_user is not None else None


# every pattern read_traffic reads (with _rate_over_span and _daily_users_and_requests): one scan first
_TRAFFIC_WORDS = AnyOf(
    _REQUESTS_PER_SECOND, _REQUESTS_PER_SPAN, _DAU, _PER_USER_DAY, _REQUESTS_PER_DAY, _PROMPT, _RESPONSE,
    _TTFT, _USER_SPEED,
)  # fmt: skip


def read_traffic(text: str) -> tuple[dict[str, object], str]:
    """Serving traffic fields (Query names: requests_per_s, prompt_tokens, response_tokens, ttft_ms,
    user_tokens_per_s), and the text with them masked."""
    if not _TRAFFIC_WORDS.holds(text):
        return {}, text  # no rate, length, latency or speed said (most messages)
    fields: dict[str, object] = {}
    spans: list[tuple[int, int]] = []

    def first(patterns: tuple[TextPattern, ...]) -> re.Match[str] | None:
        for pattern in patterns:
            for match in pattern.finditer(text):
                if not any(s < match.end() and match.start() < e for s, e in spans):
                    return match
        return None

    if (m := first(_REQUESTS_PER_SECOND)) is not None:
        fields["requests_per_s"] = _count(m)
        fields["traffic_per_day"] = False  # (a follow-up's rate replaces a day's average)
        spans.append(m.span())
    elif (per_span := _rate_over_span(text)) is not None:
        fields["requests_per_s"] = per_span[0]
        fields["traffic_per_day"] = False
        spans.append(per_span[1])
    elif (online := _online_users_rate(text)) is not None:
        fields["requests_per_s"] = online[0]
        fields["traffic_per_day"] = False
        spans += online[1]
    elif (users := _daily_users_and_requests(text)) is not None:
        # before a day's total: '日活2000人，每人每天15次' says 15 a day per user, not 15 in all
        fields["requests_per_s"] = _count(users[0]) * _count(users[1]) / 86_400
        fields["traffic_per_day"] = True
        spans += [users[0].span(), users[1].span()]
    elif (m := first(_REQUESTS_PER_DAY)) is not None:
        fields["requests_per_s"] = _count(m) / 86_400
        fields["traffic_per_day"] = True
        spans.append(m.span())
    peak = next((m for p in _PEAK_MULTIPLE if (m := p.search(text))), None)
    rate = fields.get("requests_per_s")
    if peak is not None and isinstance(rate, float) and 1 < float(peak.group("k")) <= 100:
        fields["requests_per_s"] = rate * float(peak.group("k"))
        fields["traffic_per_day"] = False  # the peak said replaces the 80/20 rule's
        spans.append(peak.span())
    if (m := first(_PROMPT)) is not None and 1 <= _lengths(m) <= 10_000_000:
        fields["prompt_tokens"] = _lengths(m)
        spans.append(m.span())
    if (m := first(_RESPONSE)) is not None and 1 <= _lengths(m) <= 10_000_000:
        fields["response_tokens"] = _lengths(m)
        spans.append(m.span())
    if (m := _TTFT.search(text)) is not None:
        value = float(m.group("num"))
        fields["ttft_ms"] = value if m.group("unit") in ("ms", "毫秒") else value * 1000
        spans.append(m.span())
    if (m := first(_USER_SPEED)) is not None:
        fields["user_tokens_per_s"] = float(m.group("num"))
        spans.append(m.span())
    fields = {k: v for k, v in fields.items() if not isinstance(v, float) or v > 0}
    return fields, mask(text, spans, MARKET_MARK) if spans else text
