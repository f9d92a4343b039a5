"""What kind of answer a message gets: one enum shared by the parser, the query, the bot and the JSON, and
the one table of what decides it.

The parser decides the kind (`Parsed.intent`); a `Query` keeps it (`Query.kind`) when the answer can be
rebuilt from the query alone, so a stored question, a button or a follow-up rebuilds the same kind of
answer. `DECIDED_BY` below is every way a message selects a kind, in the order they are weighed: a kind
asked for by its words ('最大能跑多大的模型', 'is a T4 OK for fine-tuning?') is an `AskedBy` row, beside its
value; a kind decided by what the message names (a FAQ wording, a budget, a vision job, a model the registry
lacks, several cards, a model's job, a card) is a `NamedBy` row naming its `Reading` (read by
core/parser/readings.py) and the kinds it answers with. The parser (core/parser/pipeline.py) walks the
table and has no branch per kind. What the bot does with each kind (its advisor, view, templates, whether
it is recomputable, whether it depends on the currency) is one table too, `bot/answer/kinds_table.py`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum


class AnswerKind(StrEnum):
    """Values are the public `answer.kind` of `gpufit ask --json`."""

    FIT = "fit"
    PLAN = "plan"
    CARD_INFO = "card"
    COMPARE = "compare"
    FAQ = "faq"
    SCENARIO = "scenario"
    HELP = "help"
    CLARIFY = "clarify"
    ERROR = "error"
    CARDS_NEEDED = "cards_needed"
    LARGEST_MODEL = "largest_model"
    CARD_ADVICE = "card_advice"
    OUT_OF_SCOPE = "out_of_scope"
    BUDGET = "budget"  # what a budget buys ("预算每月5000元 能跑什么")
    BILLING = "billing"  # which billing kind to rent a card on ("包月还是按小时")
    CARDS_WITH_MEMORY = "cards_with_memory"  # which cards are sold with a memory size ("哪些卡有48G显存")


# The kinds a `Query` can carry: their answer is a function of the query (and the price book) alone.
QUERY_KINDS = frozenset(
    {
        AnswerKind.FIT,
        AnswerKind.PLAN,
        AnswerKind.CARDS_NEEDED,
        AnswerKind.LARGEST_MODEL,
        AnswerKind.CARD_ADVICE,
        AnswerKind.BUDGET,
        AnswerKind.BILLING,
        AnswerKind.CARDS_WITH_MEMORY,
    }
)


class Reading(StrEnum):
    """What a message names that decides its kind, where no words of one kind do: each is read by one reader
    in core/parser/readings.py (`READERS`), and a row of `DECIDED_BY` says which kinds it selects and where
    it is weighed."""

    FAQ_WORDING = "faq_wording"  # a frequently asked question's wording ('为什么显存大的卡更贵')
    BUDGET_FOLLOWED_UP = "budget_followed_up"  # after a budget's answer, a short change ('那微调呢')
    BILLING_KIND = "billing_kind"  # a billing kind, a card and no model ('autodl 4090 包月还是按小时')
    # after a job, a budget said short ('预算 500 块够吗' after a GRPO question): that job held to it
    BUDGET_ON_THE_CHATS_JOB = "budget_on_the_chats_job"
    BUDGET = "budget"  # a budget without a model ('预算每月5000元 能跑什么')
    VISION_JOB = "vision_job"  # an image, video, vision, speech or embedding job (or a follow-up of one)
    SMALL_TALK = "small_talk"  # a greeting or something outside gpufit's job, with nothing named
    UNKNOWN_MODEL = "unknown_model"  # a model the registry lacks is asked about
    SEVERAL_CARDS = "several_cards"  # two cards or more
    A_MODEL = "a_model"  # a job of a model named: fit, plans, cards needed
    SCENARIO_WORDING = "scenario_wording"  # a scenario of the article ('学习用什么卡'), no card named
    THE_CHATS_JOB_ASKED = "the_chats_job_asked"  # the chat's job on a card named, or its speed or cost
    A_CARD = "a_card"  # one card's facts or prices ('autodl 5090 多少钱')
    THE_CHATS_JOB_CHANGED = "the_chats_job_changed"  # a field of the chat's job stated, or cards added
    A_JOB_WITHOUT_ITS_MODEL = "a_job_without_its_model"  # a job's fields or a card, no model: which model?
    GIBBERISH = "gibberish"  # nothing readable
    ANYTHING = "anything"  # the rest: outside gpufit's job


@dataclass(frozen=True)
class NamedBy:
    """A row deciding by what a message names (`reading`): the kinds its reader answers with."""

    reading: Reading
    kinds: tuple[AnswerKind, ...]


@dataclass(frozen=True)
class AskedBy:
    """How a message asks for one kind of answer by its words.

    A message asks for the kind when every pattern of `words` is found (in the normalized message, or in its
    `residue`: what is left once cards, models and amounts are read), it states every Query field of
    `states`, it names between `cards[0]` and `cards[1]` cards, and it names no one model (its job would be
    a fit question), a class of sizes ('7B models') aside where `sizes_in_general`. A kind a `Query`
    carries is also followed up: after an answer of the kind, a message that names no model and states
    anything (a field, cards added) changes that question; asked anew, it keeps the previous setup unless it
    names cards or a memory size.
    """

    kind: AnswerKind
    words: tuple[re.Pattern[str], ...]
    in_residue: bool = False
    cards: tuple[int, int] = (0, 1_000)
    sizes_in_general: bool = False
    states: tuple[str, ...] = ()
    # after a job of a model, a follow-up ('what about 80GB cards?') moves that job unless these words are
    # found ('那有哪些80G的卡'): the listing is asked for anew
    job_follow_up_unless: re.Pattern[str] | None = None

    @property
    def kinds(self) -> tuple[AnswerKind, ...]:
        return (self.kind,)

    def asked(self, norm: str, residue: str, stated: Collection[str]) -> bool:
        text = residue if self.in_residue else norm
        return all(field in stated for field in self.states) and all(p.search(text) for p in self.words)


# What a model's job is answered as: the kind its query carries (a fit, ranked plans, how many cards), or
# which model, when none is read.
_A_JOB = (AnswerKind.FIT, AnswerKind.PLAN, AnswerKind.CARDS_NEEDED, AnswerKind.CLARIFY)


def _words(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern) for pattern in patterns)


# How a message decides its kind: every row, in the order the parser weighs them (the first that answers
# decides). A kind asked for by its words is an `AskedBy` row; a kind decided by what the message names is a
# `NamedBy` row whose reader is core/parser/readings.py's. `\ue000` stands where a card's name was read
# (core/parser/entities.py).
DECIDED_BY: tuple[AskedBy | NamedBy, ...] = (
    NamedBy(Reading.FAQ_WORDING, (AnswerKind.FAQ,)),
    AskedBy(
        AnswerKind.HELP,
        _words(
            r"^\s*/?(?:help|start|menu|帮助|菜单)(?:@\w+)?\s*$|怎么用|如何使用|怎么使用|使用方法|使用说明|用法|你能做什么|"
            r"你会什么|你能干什么|能干嘛|能做什么|有什么功能|有啥功能|功能介绍|what\s+can\s+you\s+do|"
            r"how\s+(?:do\s+i|to|can\s+i)\s+use|what\s+do\s+you\s+do|what\s+are\s+you|who\s+are\s+you|你是谁|"
            r"commands|^\s*/?help\b|instructions|教程|怎么问"
        ),
        cards=(0, 0),
    ),
    NamedBy(Reading.BUDGET_FOLLOWED_UP, (AnswerKind.BUDGET,)),
    NamedBy(Reading.BILLING_KIND, (AnswerKind.BILLING, AnswerKind.CLARIFY)),
    NamedBy(Reading.BUDGET_ON_THE_CHATS_JOB, _A_JOB),
    NamedBy(Reading.BUDGET, (AnswerKind.BUDGET,)),
    NamedBy(Reading.VISION_JOB, (AnswerKind.FIT, AnswerKind.SCENARIO)),
    NamedBy(Reading.SMALL_TALK, (AnswerKind.OUT_OF_SCOPE,)),
    # "The largest model": a size asked for, on the cards the user has ('两张3090最大能LoRA多大的模型')
    AskedBy(
        AnswerKind.LARGEST_MODEL,
        _words(
            r"(?:最大|多大|多少\s*b)(?:的|能|可以|能够|可|参数)?.{0,12}(?:模型|model|llm)|"
            r"(?:模型|model).{0,6}(?:最大|多大)|最大.{0,10}(?:多大|多少\s*b|多少参数)|能(?:跑|训|推理|微调|部署)多大|"
            r"(?:biggest|largest|max(?:imum)?|how\s+(?:big|large))\s+(?:\w+\s+){0,2}(?:models?|llms?|size|params?)|"
            r"what\s+(?:size|sizes)\s+(?:of\s+)?(?:models?|llms?)|(?:models?|llms?)\s+size\s+(?:can|could|for|on)|"
            r"what\s+(?:models?|llms?)\s+can\s+i\s+(?:run|serve|fit|train|fine[\s-]*tune|lora|qlora)|"
            r"what\s+can\s+i\s+(?:run|serve|fit|train|fine[\s-]*tune)\s+on|最大能|能跑的最大"
        ),
    ),
    # "Is card X good for Y": an opinion asked about one card for a kind of job ('H20适合训练吗')
    AskedBy(
        AnswerKind.CARD_ADVICE,
        _words(
            r"适合|适不适合|合适|怎么样|如何|好不好|行不行|值得|够不够|够用|值不值|靠谱|推荐吗|能用吗|可以吗|"
            r"good\s+(?:for|enough|choice|idea|option|card|at)|any\s+good|ok(?:ay)?\s+(?:for|to)|suitable|"
            r"reasonable|worth\s+it|worth\s+(?:buying|renting|using)|enough\s+for|decent|viable|sensible|"
            r"how\s+(?:good|well)|is\s+(?:it|an?|the)\s+\ue000\s+(?:good|ok|fine|enough)",
            r"训练|微调|推理|部署|服务|跑大模型|跑模型|大模型|lora|qlora|training|train|fine[\s-]*tun|inference|"
            r"serv(?:e|ing)|deploy|llms?|language\s+models?|running\s+(?:llms?|models?)|跑",
        ),
        in_residue=True,
        cards=(1, 1),
        sizes_in_general=True,
    ),
    # Which cards are sold with a memory size: a listing asked for, the size stated, no card or model named
    AskedBy(
        AnswerKind.CARDS_WITH_MEMORY,
        _words(
            r"(?:which|what|list|show(?:\s+me)?|are\s+there|any)\b.{0,30}?\b(?:cards?|gpus?)\b|"
            r"(?:cards?|gpus?)\s+(?:are\s+there\s+)?(?:with|have|has|come\s+with)\b|"
            r"哪些|哪几(?:张|款|种|个)|有什么(?:卡|显卡|gpu)|有啥(?:卡|显卡)|都有什么|列出|列一下"
        ),
        in_residue=True,
        cards=(0, 0),
        states=("card_memory_bytes",),
        job_follow_up_unless=re.compile(
            r"\b(?:which|list|show)\b|哪些|哪几|有什么|有啥|都有什么|列出|列一下"
        ),
    ),
    NamedBy(Reading.UNKNOWN_MODEL, (AnswerKind.CLARIFY,)),
    NamedBy(Reading.SEVERAL_CARDS, (AnswerKind.COMPARE,)),
    NamedBy(Reading.A_MODEL, _A_JOB),
    NamedBy(Reading.SCENARIO_WORDING, (AnswerKind.SCENARIO,)),
    NamedBy(Reading.THE_CHATS_JOB_ASKED, _A_JOB),
    NamedBy(Reading.A_CARD, (AnswerKind.CARD_INFO,)),
    NamedBy(Reading.THE_CHATS_JOB_CHANGED, _A_JOB),
    NamedBy(Reading.A_JOB_WITHOUT_ITS_MODEL, (AnswerKind.CLARIFY,)),
    NamedBy(Reading.GIBBERISH, (AnswerKind.CLARIFY,)),
    NamedBy(Reading.ANYTHING, (AnswerKind.OUT_OF_SCOPE,)),
)

# The kinds asked for by their words (the `AskedBy` rows, in their order).
ASKED_BY_WORDS: tuple[AskedBy, ...] = tuple(row for row in DECIDED_BY if isinstance(row, AskedBy))
