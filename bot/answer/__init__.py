"""Questions in, answers out: parse → compute → words, for the bot, the console chat and `gpufit ask`.

The answer service (bot/answer/service.py) is the one way in; each kind of answer is one row of
bot/answer/kinds_table.py. The view builders shape core's typed results into typed views for the
templates (bot/answer/views.py; templates/<lang>/*.j2 hold every sentence) and pack the result as an
`Answer`: full HTML, a compact form for groups and inline results, buttons that change one thing of the
query, and the JSON contract, dumped from the same typed objects. Answers never
raise: any failure becomes a friendly error answer in the user's language, and the exception goes to the log.
"""

from __future__ import annotations

from pydantic import ValidationError

from bot.answer.cards import card_answer, compare_answer
from bot.answer.clarify import clarify_answer, error_answer, unknown_card_answer, unknown_model_answer
from bot.answer.estimate_view import estimate_view
from bot.answer.info import faq_answer, help_answer, scenario_answer
from bot.answer.model import CHART_ACTION, FAQ_IDS, SCENARIO_IDS, Answer, Button, Lang, query_json
from bot.answer.service import (
    ChatContext,
    answer,
    answer_looking_up,
    answer_message,
    answer_query,
    answer_stored,
)
from core.query import Method, Precision, Query, Task

__all__ = [
    "FAQ_IDS",
    "SCENARIO_IDS",
    "Answer",
    "Button",
    "ChatContext",
    "Lang",
    "answer",
    "answer_looking_up",
    "answer_message",
    "answer_query",
    "answer_stored",
    "apply_action",
    "card_answer",
    "clarify_answer",
    "compare_answer",
    "error_answer",
    "estimate_view",
    "faq_answer",
    "help_answer",
    "query_json",
    "scenario_answer",
    "unknown_card_answer",
    "unknown_model_answer",
]


def apply_action(query: Query, action: str) -> Query:
    """A button's action applied: 'method=qlora', 'precision=int4', 'seq=8192', 'card=<id>', 'gpus=2',
    'model=<id>', 'params_b=13', 'task=inference'. The changed field counts as stated. 'details', 'chart'
    and 'ask=…' leave the query as it is (the bot shows the full answer / sends its chart / asks the
    question)."""
    if action in ("details", CHART_ACTION) or action.startswith("ask="):
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
