"""data/scenarios.toml: every figure and claim quotes the article's line it comes from, verbatim."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.advisor import SCENARIOS
from core.advisor.scenarios import ArticleLine, load_scenarios
from core.catalog import load_catalog

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "article_scenario_lines.txt"
ARTICLE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "000_aa0119c4cafec483.txt"
TABLE = load_scenarios()


def _fixture_lines() -> dict[int, str]:
    lines: dict[int, str] = {}
    for raw in FIXTURE.read_text(encoding="utf-8").splitlines():
        if raw.startswith("#"):
            continue
        number, text = raw.split("\t", 1)
        lines[int(number)] = text
    return lines


def _cited() -> list[tuple[str, ArticleLine]]:
    cited: list[tuple[str, ArticleLine]] = []
    for spec in TABLE.scenario:
        cited.append((spec.name, spec))
        cited += [(f"{spec.name}/{claim.label}", claim) for claim in spec.claims]
        if spec.plans:
            cited.append((f"{spec.name}/plans", spec.plans))
        if spec.cards:
            cited.append((f"{spec.name}/cards", spec.cards))
    return cited


def _gb(quote: str) -> set[float]:
    return {float(n) for n in re.findall(r"(\d+)GB", quote)}


def test_the_data_has_exactly_the_scenarios_the_parser_names() -> None:
    assert [spec.name for spec in TABLE.scenario] == list(SCENARIOS)


def test_every_quote_is_verbatim_on_its_line() -> None:
    lines = _fixture_lines()
    for where, cited in _cited():
        assert cited.line in lines, f"{where}: line {cited.line} is not in the fixture"
        assert cited.quote in lines[cited.line], f"{where}: {cited.quote!r} not on line {cited.line}"


def test_the_fixture_is_the_article() -> None:
    if not ARTICLE.exists():
        pytest.skip("shared/reference not beside the checkout")
    article = ARTICLE.read_text(encoding="utf-8").splitlines()
    for number, text in _fixture_lines().items():
        assert article[number - 1] == text, number


def test_memory_figures_are_the_ones_quoted() -> None:
    for spec in TABLE.scenario:
        quoted = _gb(spec.quote)
        assert spec.min_memory_gib in quoted, spec.name
        if spec.safer_memory_gib is not None:
            assert spec.safer_memory_gib in quoted, spec.name
        if spec.plans:
            assert spec.plans.min_memory_gib in _gb(spec.plans.quote), spec.name
        if spec.cards:
            assert set(spec.cards.memory_gib) <= _gb(spec.cards.quote), spec.name


def test_example_cards_are_the_cards_the_article_names() -> None:
    catalog = load_catalog()
    for spec in TABLE.scenario:
        match = catalog.resolve(spec.example_card_as_written)
        assert match is not None and match.card.id == spec.example_card, spec.name


def test_claims_name_real_cards_and_models() -> None:
    catalog = load_catalog()
    for spec in TABLE.scenario:
        for claim in spec.claims:
            assert claim.query.card in catalog.by_id, claim.label
            assert claim.query.model, claim.label
