"""Every kind of answer in one table: its advisor in core, its view builder, its templates, whether a stored
query rebuilds it and whether the chat's currency changes it.

Adding a kind of answer is its `AnswerKind` value and the words that ask for it (core/answer_kind.py), its
advisor in core/advisor/, one row here and its template (templates/<kind>.j2, with the Chinese of its
sentences in templates/locale/zh/LC_MESSAGES/gpufit.po). A kind whose template shows just its advisor's
typed result needs no view builder: `KindSpec.advised` renders the result as `v`, puts it in the JSON as
`<kind>` (or what its `facts=` makes of it), and its row declares its buttons (`buttons=`: rows of actions,
worded by the template's own `button` macro or by templates/_buttons.j2) and its chart (`chart=`: a spec of
a shape bot/charts draws): bot/answer/advised.py. The answer service (bot/answer/service.py), the
buttons, "Details ▸" and the stored follow-ups all read this table rather than testing kinds by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.answer.advised import ButtonRows, Chart, Facts, Rebuild, Result, advised_view
from bot.answer.cards import card_answer, compare_answer
from bot.answer.clarify import clarify_answer, error_answer
from bot.answer.fit import fit_answer, methods_answer, plan_answer
from bot.answer.how_many import cards_needed_answer
from bot.answer.info import faq_answer, help_answer, scenario_answer
from bot.answer.kinds import card_advice_answer, largest_model_answer, out_of_scope_answer
from bot.answer.market import billing_facts, budget_answer, platform_facts
from bot.answer.model import NOTHING_READ_IN, Answer, Lang, TypedNames
from core import advisor, billing
from core.advisor import budget, card_advice, cards_needed, cards_with_memory, largest_model, scenarios
from core.answer_kind import QUERY_KINDS, AnswerKind
from core.assessment import assess
from core.jobs.defaults import method_decided
from core.parser import Parsed
from core.query import Query, Task

# A view builder for a kind only the message itself answers (it needs the message's cards, FAQ id, …).
FromMessage = Callable[[Parsed, Lang], Answer]


@dataclass(frozen=True)
class KindSpec:
    """What one kind of answer is made of."""

    kind: AnswerKind
    advisor: Callable[..., object] | None  # the core function that decides its content (None: words only)
    templates: tuple[str, ...]  # templates/<lang>/<name>.j2 it renders
    rebuild: Rebuild | None = None  # set: a stored query rebuilds it (buttons, Details ▸, follow-ups)
    from_message: FromMessage | None = None  # set: answered from the parsed message
    needs: Callable[[Query], bool] = lambda query: True  # what a stored query must hold to rebuild it
    currency: bool = False  # the chat's currency (/settings currency) changes its figures
    chart: bool = False  # its answers carry a chart (bot/charts) and the "📊 Chart" button

    @property
    def recomputable(self) -> bool:
        return self.rebuild is not None

    @classmethod
    def advised(
        cls,
        kind: AnswerKind,
        advise: Callable[[Query], Result],
        *,
        needs: Callable[[Query], bool],
        currency: bool = False,
        facts: Facts[Result] | None = None,
        buttons: ButtonRows[Result] | None = None,
        chart: Chart[Result] | None = None,
    ) -> KindSpec:
        """A kind a stored query rebuilds whose view is its advisor's typed result: its template
        (templates/<kind>.j2) shows the result as `v`, and its JSON holds the result as `<kind>`, or what
        `facts` makes of it (result, query). `buttons` (result, query) gives its rows of button actions,
        worded by the template's `button(field, value)` macro where it has words for one, else by
        templates/_buttons.j2; `chart` (result, query, language) its chart spec (None: no chart for this
        answer), with the "📊 Chart" button. No view builder of its own; a card the query names that the
        catalog lacks (the advisor raises UnknownCardError) is answered as such by the service."""
        return cls(
            kind,
            advise,
            (kind.value,),
            rebuild=advised_view(kind, advise, currency=currency, facts=facts, buttons=buttons, chart=chart),
            needs=needs,
            currency=currency,
            chart=chart is not None,
        )


def _names_a_model(query: Query) -> bool:
    return bool(query.model or query.params_b)


def _fit(query: Query, lang: Lang, typed: TypedNames) -> Answer:
    """'Fine-tune' without a method: the methods side by side; otherwise the one job."""
    if query.task is Task.FINETUNE and query.method is None and not method_decided(query):
        return methods_answer(query, lang, typed)
    return fit_answer(query, lang, typed)


def _plan(query: Query, lang: Lang, typed: TypedNames) -> Answer:
    return plan_answer(query, lang)


def _cards_needed(query: Query, lang: Lang, typed: TypedNames) -> Answer:
    return cards_needed_answer(query, lang)


def _largest_model(query: Query, lang: Lang, typed: TypedNames) -> Answer:
    return largest_model_answer(query, lang)


def _card_advice(query: Query, lang: Lang, typed: TypedNames) -> Answer:
    assert query.card is not None  # `needs` holds it
    return card_advice_answer(lang, query.card, query)


def _budget(query: Query, lang: Lang, typed: TypedNames) -> Answer:
    return budget_answer(query, lang)


def _billing_facts(result: billing.BillingAnswer, query: Query) -> Mapping[str, object]:
    card = result.card.id
    return {"card": card, "billing": billing_facts(result.advice), "platform": platform_facts(query, card)}


def _card(parsed: Parsed, lang: Lang) -> Answer:
    if not parsed.cards:
        return clarify_answer(lang, "card", parsed.query)
    return card_answer(lang, parsed.cards[0], parsed.query)


def _compare(parsed: Parsed, lang: Lang) -> Answer:
    if len(parsed.cards) < 2:
        return _card(parsed, lang)
    return compare_answer(lang, parsed.cards, parsed.query, parsed.card_counts)


def _faq(parsed: Parsed, lang: Lang) -> Answer:
    if not parsed.faq:
        return clarify_answer(lang, "model", parsed.query)
    return faq_answer(lang, parsed.faq, parsed.query, parsed.cards, parsed.wanted_memory_bytes)


def _scenario(parsed: Parsed, lang: Lang) -> Answer:
    if not parsed.scenario:
        return clarify_answer(lang, "model", parsed.query)
    return scenario_answer(lang, parsed.scenario, parsed.query, parsed.vision)


def _help(parsed: Parsed, lang: Lang) -> Answer:
    return help_answer(lang)


def _out_of_scope(parsed: Parsed, lang: Lang) -> Answer:
    return out_of_scope_answer(lang, understood=parsed.clarify != "nonsense")


def _clarify(parsed: Parsed, lang: Lang) -> Answer:
    return clarify_answer(lang, parsed.clarify or "model", parsed.query)


def _error(parsed: Parsed, lang: Lang) -> Answer:
    return error_answer(lang, "internal", query=parsed.query)


KINDS: dict[AnswerKind, KindSpec] = {
    spec.kind: spec
    for spec in (
        KindSpec(
            AnswerKind.FIT,
            assess,
            ("fit", "fit_compact", "methods_side_by_side"),
            rebuild=_fit,
            needs=_names_a_model,
            currency=True,
            chart=True,
        ),
        KindSpec(
            AnswerKind.PLAN,
            advisor.plans,
            ("plan",),
            rebuild=_plan,
            needs=_names_a_model,
            currency=True,
            chart=True,
        ),
        KindSpec(
            AnswerKind.CARDS_NEEDED,
            cards_needed.cards_needed,
            ("cards_needed",),
            rebuild=_cards_needed,
            needs=_names_a_model,
            currency=True,
            chart=True,
        ),
        KindSpec(
            AnswerKind.LARGEST_MODEL,
            largest_model.largest_models,
            ("largest_model",),
            rebuild=_largest_model,
            chart=True,
        ),
        KindSpec(
            AnswerKind.CARD_ADVICE,
            card_advice.card_advice,
            ("card_advice",),
            rebuild=_card_advice,
            needs=lambda query: query.card is not None,
        ),
        KindSpec(
            AnswerKind.BUDGET,
            budget.what_budget_buys,
            ("budget",),
            rebuild=_budget,
            needs=lambda query: query.budget is not None,
            currency=True,
        ),
        KindSpec.advised(
            AnswerKind.BILLING,
            billing.billing_for,
            needs=lambda query: query.card is not None,
            currency=True,
            facts=_billing_facts,
        ),
        KindSpec.advised(
            AnswerKind.CARDS_WITH_MEMORY,
            cards_with_memory.cards_with_memory,
            needs=lambda query: query.card_memory_bytes is not None,
            currency=True,
        ),
        KindSpec(AnswerKind.CARD_INFO, advisor.card_price, ("card",), from_message=_card, currency=True),
        KindSpec(
            AnswerKind.COMPARE,
            advisor.compare_cards,
            ("compare",),
            from_message=_compare,
            currency=True,
            chart=True,
        ),
        KindSpec(
            AnswerKind.FAQ,
            None,
            ("faq_bandwidth", "faq_card_vs_vram", "faq_folk_rule", "faq_vram_price", "faq_vram_upgrade"),
            from_message=_faq,
            currency=True,
        ),
        KindSpec(
            AnswerKind.SCENARIO,
            scenarios.scenario,
            ("scenario_learning", "scenario_pretraining", "scenario_production_inference", "scenario_vision"),
            from_message=_scenario,
            currency=True,
        ),
        KindSpec(AnswerKind.HELP, None, ("help",), from_message=_help),
        KindSpec(AnswerKind.CLARIFY, None, ("clarify", "unknown_model"), from_message=_clarify),
        KindSpec(AnswerKind.OUT_OF_SCOPE, None, ("out_of_scope",), from_message=_out_of_scope),
        KindSpec(AnswerKind.ERROR, None, ("error",), from_message=_error),
    )
}

assert set(KINDS) == set(AnswerKind), "every answer kind has one row"
assert {k for k, spec in KINDS.items() if spec.recomputable} == QUERY_KINDS, "a query carries exactly these"


def spec_of(kind: AnswerKind | str) -> KindSpec:
    return KINDS[AnswerKind(kind)]


def rebuildable(query: Query | None, kind: AnswerKind | str) -> bool:
    """Whether a stored query rebuilds this kind of answer (so "Details ▸" can expand it)."""
    spec = spec_of(kind)
    return query is not None and spec.recomputable and query.answer_kind is spec.kind and spec.needs(query)


def rebuild(query: Query, lang: Lang, typed: TypedNames = NOTHING_READ_IN) -> Answer:
    """The answer a query stands for: its own kind (a plan stays a plan), or a fit."""
    spec = KINDS[query.answer_kind]
    if spec.rebuild is None or not spec.needs(query):
        spec = KINDS[AnswerKind.FIT]
        query = query.model_copy(update={"kind": None, "sort": None})
    if not spec.needs(query):
        return clarify_answer(lang, "model", query)
    assert spec.rebuild is not None
    return spec.rebuild(query, lang, typed)
