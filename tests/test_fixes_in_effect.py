"""A fix changes the job: a saver the job already runs with (fine-tuning's gradient checkpointing by default,
Unsloth's chunked loss and offloaded checkpoints) is never offered as one, alone or in a chain, so a tight
QLoRA answer is not told "gradient checkpointing → the same GiB ⚠️" and Unsloth at 32k is not told to turn
on what it does by itself."""

from __future__ import annotations

from core.advisor import fixes
from core.parser import parse
from core.query import Query


def _query(*turns: str) -> Query:
    previous = None
    for turn in turns:
        previous = parse(turn, previous=previous).query or previous
    assert previous is not None
    return previous


def test_checkpointing_on_by_default_is_no_fix() -> None:
    found = fixes(_query("QLoRA qwen2.5-32b on a 4090, 20k samples of 1k tokens, 1 epoch, how long?"))
    assert found and not any("grad_checkpointing" in f.changes for f in found)
    assert all(f.saved_bytes > 0 or f.kind in ("more_cards", "bigger_card") for f in found)


def test_unslothes_own_savers_are_not_offered() -> None:
    found = fixes(_query("4090 lora 微调 llama3.1 8b 32k上下文", "用unsloth呢"))
    kinds = [f.changes for f in found]
    assert kinds and not any({"chunked_loss", "offloaded_checkpointing"} & set(c) for c in kinds), kinds
    assert any(c == ["qlora"] for c in kinds)
    # one fix per change: the chain that used to repeat QLoRA under another name is gone
    assert len({tuple(c) for c in kinds}) == len(kinds)
