"""What kind of answer a message gets: one enum shared by the parser, the query, the bot and the JSON.

The parser decides the kind (`Parsed.intent`); a `Query` keeps it (`Query.kind`) when the answer can be
rebuilt from the query alone, so a stored question, a button or a follow-up rebuilds the same kind of
answer. What each kind needs (its advisor, view, templates, whether it is recomputable, whether it depends on
the currency) is registered in one table, `bot/answer/kinds_table.py`.
"""

from __future__ import annotations

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
    }
)
