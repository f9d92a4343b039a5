"""'Fastest …' ranks plans by speed; everything else by cost."""

from __future__ import annotations

import pytest

from core.parser import parse


@pytest.mark.parametrize(
    "text",
    [
        "fastest card for qwen2.5 7b inference under $2/h",
        "跑llama 3.1 70b int4推理最快的卡",
        "quickest 4090 setup for 13b lora",
    ],
)
def test_fastest_sorts_by_speed(text: str) -> None:
    parsed = parse(text)
    assert parsed.query is not None and parsed.query.sort == "speed"


@pytest.mark.parametrize(
    "text", ["cheapest card for qwen2.5 7b", "最便宜能跑qwen2.5 7b推理的卡", "13b lora on 4090"]
)
def test_everything_else_sorts_by_cost(text: str) -> None:
    parsed = parse(text)
    assert parsed.query is not None and (parsed.query.sort or "cost") == "cost"
