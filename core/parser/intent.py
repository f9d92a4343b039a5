"""What kind of question a message is, from its wording (the fields come from entities.py).

Each detector is a few compiled keyword patterns over the normalized text; the order of the rows of
core/answer_kind.py `DECIDED_BY` that consult them (through core/parser/readings.py) is what resolves
overlaps (a FAQ wording beats a card mention, etc.).
"""

from __future__ import annotations

import re

from core.regex_screen import TextPattern, gated


def _c(pattern: str) -> TextPattern:
    return gated(pattern)  # no search where the strings every match holds are missing (regex_screen)


_WHY = r"(?:为什么|为啥|为何|why|咋|怎么会|how\s+come|原因|reason)"
_VRAM = r"(?:显存|vram|gpu\s*memory|memory|mem(?![a-z]))"
_FAQ: tuple[tuple[str, TextPattern, TextPattern | None], ...] = (
    (
        "vram_upgrade",
        _c(
            rf"(?:升级|扩容|扩展|加大|增加|加|扩|upgrad\w*|add(?:\s+more)?|expand|increase|bump)\s*(?:一下|下)?\s*{_VRAM}|"
            rf"{_VRAM}.{{0,16}}(?:升级|扩容|upgrad\w*|加显存|扩显存|后续加|后期加|后面加|换大)|"
            rf"{_VRAM}\s*(?:不够|不足|爆了|满了|满|oom|用完).{{0,12}}(?:能不能|可以|能否|怎么办|咋办|升级|加|扩|can\s+i|later)"
            r"|upgrad\w*.{0,24}(?:to|into)\s*\d+\s*(?:gb|g)(?![a-z])|(?:升级|扩|加|改)\w{0,2}.{0,12}(?:到|成)\s*\d+\s*(?:gb|g)(?![a-z])|"
            # modding one's own card is an upgrade question; a modded card named ("4090 48G魔改版") is not
            r"(?:能|可以|能不能|可不可以|can\s+i|could\s+i|how\s+to)\s*(?:自己)?\s*(?:魔改|mod(?![a-z]))"
            r"|mod\s+(?:to|with)\s*\d+\s*g"
        ),
        None,
    ),
    (
        "vram_price",
        _c(
            r"(?:显存|vram|memory|大显存|更多显存|\d+\s*g(?:b)?(?![a-z])).{0,40}(?:贵|expensive|cost\s+more|pricier|price|"
            r"价格高|价高|价格差|差价|贵多少|rents?\s+for\s+(?:twice|double|more|\d+\s*(?:x|times))|(?:twice|double)\s+(?:as\s+much|the\s+price))|"
            r"(?:贵|more\s+expensive|pricier|cost(?:s)?\s+more).{0,40}(?:\d+\s*g(?:b)?(?![a-z])|显存|vram|memory|same\s+chip|"
            r"同一(?:个|款)?(?:芯片|核心))"
        ),
        _c(rf"{_WHY}|大的|越大|bigger|larger|more\s+vram|more\s+memory|值不值|值得吗|worth\s+it"),
    ),
    (
        "card_vs_vram",
        _c(
            rf"{_VRAM}.{{0,32}}(?:卡型|型号|算力|架构|card\s*(?:model|type)|gpu\s*(?:model|type)|compute|chip|the\s+card)|"
            rf"(?:卡型|型号|算力|架构|card\s*(?:model|type)|gpu\s*(?:model|type)|compute|chip)\s*.{{0,32}}{_VRAM}"
        ),
        _c(
            r"哪个|哪一个|更重要|重要|优先|先看|先考虑|matters?\s+more|more\s+important|priorit|which|or\b|vs|还是"
        ),
    ),
    (
        "bandwidth",
        _c(r"带宽|bandwidth"),
        _c(
            rf"{_WHY}|重要|matter|作用|影响|有什么用|有啥用|意义|关键|what\s+does|why|affect|impact|重不重要|有用吗|用处"
        ),
    ),
    (
        "folk_rule",
        _c(
            rf"(?:估算|估计|预估|计算|算出|怎么算|如何算|estimate|calculate|figure\s+out|rule\s+of\s+thumb|经验公式|"
            rf"公式|formula|how\s+much\s+{_VRAM}\s+(?:per|for\s+each)|每\s*(?:10亿|1b|billion)).{{0,24}}{_VRAM}?|"
            rf"{_VRAM}.{{0,10}}(?:怎么算|如何算|怎么估|如何估|估算|计算|estimate|calculat)|估\s*{_VRAM}|"
            r"(?:参数量?|params?|parameters?).{0,12}(?:乘以?|×|x|\*|times)\s*(?:2|two)|"
            r"(?:×|x|\*|乘以?|times)\s*(?:2|two)\s*(?:bytes?|字节).{0,24}(?:rule|准|对|right|correct|accurate|吗|\?)"
        ),
        _c(rf"{_VRAM}|显存|参数量|params|parameters"),
    ),
)
_FAQ_NEEDS_NO_CARD: frozenset[str] = frozenset()
_FAQ_NEEDS_NO_MODEL = frozenset({"bandwidth", "folk_rule", "card_vs_vram"})

_SCENARIOS: tuple[tuple[str, TextPattern, TextPattern | None], ...] = (
    (
        "vision",
        _c(
            r"图像|视觉|图片|高分辨率|(?<![a-z])cv(?![a-z])|computer\s*vision|(?<![a-z])images?(?![a-z])|vision|stable\s*"
            r"diffusion|sdxl|(?<![a-z])sd(?![a-z])|yolo|目标检测|语义分割|分割|segmentation|detection|文生图|绘图|画图|"
            r"diffusion|high[\s-]*res|视频处理|图像处理|comfyui|flux"
        ),
        None,
    ),
    (
        "pretraining",
        _c(
            r"预训练|pre[\s-]*train|从头训|从零训|from\s*scratch|大规模训练|large[\s-]*scale\s*train|基座|foundation\s*model"
        ),
        None,
    ),
    (
        "production_inference",
        _c(
            r"生产|线上|上线|商用|高并发|企业|公司|production|(?<![a-z])prod(?![a-z])|customers?|用户量|大量用户|"
            r"high\s*(?:traffic|concurrency|throughput)|高吞吐|at\s+scale|对外服务|saas"
        ),
        _c(r"推理|部署|服务|inference|serving|serve|deploy|api|上线|线上|在线"),
    ),
    (
        "learning",
        _c(
            r"学生|(?<!机器|深度|强化)学习|入门|新手|练手|小白|初学|自学|课程|毕设|毕业设计|论文|实验室|student|"
            r"(?<!machine\s)(?<!deep\s)(?<!reinforcement\s)learn|beginner|hobby|newbie|"
            r"getting\s+started|course|homework|side\s+project|personal|个人|玩玩|试试|尝试|experiment|小模型|small\s+models?"
        ),
        None,
    ),
)
_CARD_QUESTION = _c(
    r"什么卡|哪张卡|哪个卡|哪款|哪种卡|啥卡|租什么|选什么|用什么|什么显卡|什么gpu|哪个gpu|选卡|多大显存|多少显存|显存多大|"
    r"which\s+(?:card|gpu)|what\s+(?:card|gpu|kind)|recommend|推荐|建议|suggest|需要|need|配置|setup|租|rent"
)

_PLAN = _c(
    r"最便宜|便宜|省钱|划算|性价比|cheap|best\s+value|cost[\s-]*effective|bang\s+for|recommend|推荐|建议|suggest|"
    r"fastest|最快|quickest|最省|affordable|lowest\s+cost|least\s+expensive|预算|budget|经济"
)
_INFO = _c(
    r"显存多大|多少显存|显存多少|几\s*g|多大显存|多大|带宽|bandwidth|规格|参数|specs?(?![a-z])|算力|tflops|flops|性能|"
    r"怎么样|如何|介绍|tell\s+me\s+about|what\s+is|what's|whats|info|how\s+much\s+(?:vram|memory)|how\s+fast|价格|"
    r"多少钱|price|cost|功耗|tdp|power|nvlink|支持|support|架构|architecture|memory|vram|显存|好不好|值得|靠谱|"
    r"适合|能跑什么|能干什么|能做什么|good\s+for|what\s+can|details?|about\s+(?:the\s+)?\ue000|是什么|啥|多快|速度|实际可用|可用多少|usable|nvidia-smi|标称"
)
_FOLLOW_MARK = _c(
    r"呢|what\s+about|how\s+about|instead|换成|换|改成|改用|改为|(?<![a-z])那|and\s+(?:for|with|on)|same\s+(?:for|with|on)|"
    r"then|如果|if\s+i|what\s+if"
)
# 'and with int4?', '用4090', '再加一张': a follow-up by its first word alone. New Chinese
# questions start with 用 too ('用两张3090跑ollama qwen2.5 72b'), so for a message that names
# its own model the first word counts only in a short one.
_FOLLOW_START = _c(r"^\s*(?:and|also|with|on|用|再)\b")
_GPU_CONTEXT = _c(
    r"卡|gpu|显存|vram|card|租|rent|算力|模型|model|推理|微调|训练|部署|llm|大模型|inference|fine|train|serve|deploy|"
    r"cuda|nvidia|memory|显卡|fit|run|跑|机器|服务器|server|instance|cloud|云"
)
_SPEED_OR_COST = _c(
    r"how\s+fast|speed|速度|多快|快不快|tok(?:en)?s?\s*/\s*s|tokens?\s+per\s+second|throughput|吞吐|how\s+long|多久|"
    r"多长时间|要多长|几个小时|几小时|几天|how\s+much|多少钱|cost|费用|价格|花多少|贵不贵|price|how\s+many\s+hours"
)
_MEANINGFUL = _c(r"[a-z0-9\u3400-\u9fff]")

# "How many cards": a count of cards asked for, not stated.
_HOW_MANY = _c(
    r"几\s*(?:张|块|台|卡|个\s*(?:gpu|卡|显卡))(?!\s*(?:图|照片|图片|表|纸|票))|"
    r"多少\s*(?:张|块|台|个\s*(?:gpu|卡|显卡)|卡|gpu|显卡)(?!\s*(?:图|照片|图片|表|纸|票))|"
    r"how\s+many\s+(?:(?:more|extra|total|nvidia|rtx|geforce|of\s+the|of\s+those|80\s*gb|40\s*gb)\s+)?"
    r"(?:cards?|gpus?|\ue000s?|nodes?|of\s+them\s+(?:do|would|will|are|i\s+need))|"
    r"(?:min(?:imum)?|least|smallest)\s+(?:number|count|no\.?)\s+of\s+(?:cards?|gpus?|\ue000)|"
    r"(?:number|count)\s+of\s+(?:cards?|gpus?|\ue000s?)\s+(?:needed|required|i\s+need|to)|"
    r"(?:min(?:imum)?|最少|至少)\s*(?:\ue000s?|cards?|gpus?)\s*(?:needed|required|to|for)|"
    r"\ue000\s*(?:需要|要)?\s*(?:几|多少)\s*(?:张|块|台|个|卡)?\s*(?:才|就|够|呢|合适|[?？]|$)|"
    # 'Llama 3.1 8B on A10s — how many?': a card named, then a bare 'how many' that ends the message
    r"\ue000s?(?![a-z]).{0,40}how\s+many\s*(?:do\s+(?:i|we)\s+need|would\s+(?:i|we)\s+need|are\s+needed)?\s*[?？]*\s*$"
)
# Clearly about something else: weather, poems, jokes, stocks, food, films, translation, books, small talk.
_OFF_TOPIC = _c(
    r"天气|下雨|气温|写.{0,4}诗|诗歌|作诗|笑话|股票|股价|电影|电视剧|吃什么|菜谱|做饭|翻译|游戏|旅游|八卦|"
    r"weather|rain(?:ing)?\b|poem|haiku|poetry|limerick|joke|stock\s+(?:price|market)|recipe|cook|movie|film|"
    r"translate|cover\s+letter|world\s+cup|football|\bbored\b|talk\s+to\s+me|tell\s+me\s+a\s+story|"
    r"\bbooks?\b|\bnovels?\b|(?:推荐|有什么|有啥).{0,8}(?:书|书籍|小说)(?!签)"
)
_SMALL_TALK = _c(
    r"^\s*(?:hi|hello|hey|yo|hiya|howdy|你好|您好|在吗|在不在|哈喽|嗨|hello\s+there|早|早上好|晚上好|下午好|"
    r"thanks?|thank\s+you|thx|谢谢(?:你|您)?|多谢|好的|ok|okay|bye|再见|拜拜|good\s+(?:morning|evening|night))"
    r"[\s!！。.,，~]*$"
)
_KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "1234567890")


def is_empty(text: str) -> bool:
    return not _MEANINGFUL.search(text)


def asks_how_many_cards(text: str) -> bool:
    """'要几张 L20', 'how many H100s', 'minimum number of GPUs': the answer's headline is a count."""
    return bool(_HOW_MANY.search(text))


_SIZE_CLASS = _c(r"\bmodels\b|\bllms\b|这类模型|这种模型|级别的模型|级模型")
# Chinese has no plural: '适合部署7b模型吗' asks about 7B models as a class (as 'good for 7B models'
# does), while '适合跑个7b模型吗' (个: one model) stays a question about one model on the card.
_SIZE_CLASS_SUITABLE = _c(
    r"(?:适合|适不适合|合不合适|合适).{0,8}(?<![个一])\d+(?:\.\d+)?\s*b\s*(?:左右|级别|量级)?\s*的?\s*大?模型"
)


def sizes_in_general(text: str) -> bool:
    """'7B models', '适合部署7b模型吗' (a class of models) rather than one model of that size."""
    return bool(_SIZE_CLASS.search(text) or _SIZE_CLASS_SUITABLE.search(text))


def is_small_talk(text: str) -> bool:
    """A greeting or thanks with no question in it."""
    return bool(_SMALL_TALK.match(text))


def is_off_topic(text: str) -> bool:
    """Words that put the message outside gpufit's job (weather, poems, jokes…), whatever else it says."""
    return bool(_OFF_TOPIC.search(text))


def _mashed(token: str) -> bool:
    """A token typed without meaning: a run along one keyboard row ('asdf', 'qwer') or no vowel at all."""
    if len(token) >= 3 and any(token in row or token in row[::-1] for row in _KEYBOARD_ROWS):
        return True
    return token.isascii() and token.isalpha() and not any(ch in "aeiouy" for ch in token)


def is_gibberish(text: str) -> bool:
    """Nothing readable: no Chinese word (two characters or more) and every Latin token mashed or a
    single letter. Such messages get "I didn't understand that", not gpufit's introduction."""
    if re.search(r"[\u3400-\u9fff]{2,}", text):
        return False
    tokens = re.findall(r"[a-z0-9\u3400-\u9fff]+", text)
    return all(len(t) == 1 or _mashed(t) for t in tokens)


# 'VRAM is short, can part go to system RAM? … ollama qwen2.5 32b': a job with offload, not the upgrade FAQ.
_SYSTEM_RAM_JOB = _c(r"内存|(?<![a-z])ram(?![a-z])|offload|卸载|ollama|llama\.cpp|lm\s*studio|ktransformers")


# '内存加到 64g 呢': the system RAM changed, not the card's memory (which no one can upgrade)
_SYSTEM_RAM_WORD = _c(r"内存|(?<![a-z])ram(?![a-z])|(?:system|host|cpu)\s+memory")
_VRAM_WORD = _c(r"显存|显卡内存|vram|gpu\s*memory|video\s*memory")


def _about_system_ram(text: str, has_model: bool) -> bool:
    if _SYSTEM_RAM_WORD.search(text) and not _VRAM_WORD.search(text):
        return True
    return has_model and _SYSTEM_RAM_JOB.search(text) is not None


def faq(text: str, has_card: bool, has_model: bool) -> str | None:
    for faq_id, pattern, also in _FAQ:
        if faq_id == "vram_upgrade" and _about_system_ram(text, has_model):
            continue
        if faq_id in _FAQ_NEEDS_NO_CARD and has_card:
            continue
        if faq_id in _FAQ_NEEDS_NO_MODEL and has_model:
            continue
        if pattern.search(text) and (also is None or also.search(text)):
            return faq_id
    return None


def scenario(text: str) -> str | None:
    if not _CARD_QUESTION.search(text):
        return None
    for scenario_id, pattern, also in _SCENARIOS:
        if pattern.search(text) and (also is None or also.search(text)):
            return scenario_id
    return None


def wants_plan(text: str) -> bool:
    return bool(_PLAN.search(text))


_FASTEST = _c(r"fastest|quickest|最快|速度最|最高速|跑得最快")


def wants_fastest(text: str) -> bool:
    """Plans ranked by speed ('fastest under ¥10/hour') rather than by cost."""
    return bool(_FASTEST.search(text))


def asks_card_info(text: str) -> bool:
    return bool(_INFO.search(text))


def sounds_like_follow_up(text: str, *, by_first_word: bool = True) -> bool:
    return bool(_FOLLOW_MARK.search(text) or (by_first_word and _FOLLOW_START.search(text)))


def gpu_context(text: str) -> bool:
    return bool(_GPU_CONTEXT.search(text))


def asks_speed_or_cost(text: str) -> bool:
    """'how fast would that be?', '要多久', '多少钱': a figure of the chat's last job."""
    return bool(_SPEED_OR_COST.search(text))


_MEMORY_AMOUNT = _c(r"(?<![a-z0-9.])(\d{1,4})\s*(?:gb|gib|g)(?![a-z0-9])")


def wanted_memory_bytes(text: str) -> int | None:
    """The largest amount of memory a message names ('upgrade my 3090 to 48GB' → 48 GiB), if any."""
    amounts = [int(m.group(1)) for m in _MEMORY_AMOUNT.finditer(text) if 1 <= int(m.group(1)) <= 2048]
    return max(amounts) * 2**30 if amounts else None
