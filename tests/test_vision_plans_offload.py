"""The vision plan list ("which card for Wan 2.2 14B 720p?") weighs each card as the job runs there: a card
too small for the whole pipeline is listed when the engine's own offload runs it (ComfyUI by itself, the
model's README flags or diffusers' model offload when no engine is named), ranked at its offloaded speed and
said to offload; a named diffusers offloads only when asked, so its list holds only cards the pipeline
fits."""

from __future__ import annotations

from typing import Any

from bot.answer import answer


def _json(question: str) -> dict[str, Any]:
    return dict(answer(question).to_json())


def test_a_card_that_runs_it_with_offload_is_listed_as_such() -> None:
    listed = _json("Wan 2.2 14B 720p video, which card?")["answer"]
    plans = listed["plans"]
    offloaded = [p for p in plans if p["offload"]]
    assert offloaded, [p["card"] for p in plans]
    for plan in offloaded:
        assert plan["need_bytes"] <= plan["capacity_bytes"] and plan["host_bytes"] > 0
        assert "offload" in plan["notes"]
    costs = [p["cost_per_thousand_items"] for p in plans]
    assert costs == sorted(costs)
    # the same figures as the answer for that card
    plan = offloaded[-1]
    on_card = _json(f"Wan 2.2 14B 720p video on {plan['card_name']}")["answer"]
    assert on_card["verdict"] == "offload" and on_card["offload"]["mode"] == plan["offload"]
    assert on_card["speed"]["seconds_per_item"] == plan["seconds_per_item"]


def test_the_text_says_which_cards_offload() -> None:
    for question, words in (
        ("Wan 2.2 14B 720p video, which card?", "🟡 with offload ("),
        ("万相2.2 14B 720p 视频 用什么卡", "🟡 要卸载到内存（"),
    ):
        listed = _json(question)["answer"]
        offloaded = [p for p in listed["plans"] if p["offload"]]
        marked = [line for line in listed["text"].splitlines() if line.startswith("• ") and words in line]
        assert offloaded and len(marked) == len(offloaded), listed["text"]


def test_a_named_diffusers_lists_only_cards_it_fits() -> None:
    plans = _json("Wan 2.2 14B 720p video with diffusers, which card?")["answer"]["plans"]
    assert plans and not any(p["offload"] for p in plans)
    assert all(p["need_bytes"] <= p["capacity_bytes"] for p in plans)
