"""Follow-ups: a message in the same chat changes only what it says about the previous query."""

from __future__ import annotations

from core.parser import Intent, parse
from core.query import Method, Precision, Query, Task
from core.units import GIB

PREVIOUS = Query(task=Task.INFERENCE, model="llama-2-13b", card="rtx-4090", defaulted=[])


def test_new_card_keeps_the_rest() -> None:
    parsed = parse("what about an A100?", PREVIOUS)
    assert parsed.intent is Intent.FIT
    assert parsed.follow_up
    assert parsed.query is not None
    assert parsed.query.card == "a100-80gb-sxm"
    assert parsed.query.model == "llama-2-13b"
    assert parsed.query.task is Task.INFERENCE
    assert parsed.cards == ["a100-80gb-sxm"]
    assert parsed.ambiguous_card == "a100"


def test_count_of_the_previous_card() -> None:
    for text, gpus in (
        ("and 2 of them?", 2),
        ("4张呢", 4),
        ("双卡呢", 2),
        ("8卡的话", 8),
        ("three of them", 3),
    ):
        parsed = parse(text, PREVIOUS)
        assert parsed.query is not None, text
        assert (parsed.query.card, parsed.query.gpus) == ("rtx-4090", gpus), text


def test_one_more_card_counts_from_the_previous_count() -> None:
    two = PREVIOUS.model_copy(update={"gpus": 2})
    parsed = parse("再加一张呢", two)
    assert parsed.query is not None and parsed.query.gpus == 3
    parsed = parse("one more card?", PREVIOUS)
    assert parsed.query is not None and parsed.query.gpus == 2


def test_capacity_replaces_the_card_and_back() -> None:
    parsed = parse("how about a 16GB card", PREVIOUS)
    assert parsed.query is not None
    assert parsed.query.card is None
    assert parsed.query.card_memory_bytes == 16 * GIB
    again = parse("换成H20呢", parsed.query)
    assert again.query is not None
    assert again.query.card == "h20" and again.query.card_memory_bytes is None


def test_new_size_replaces_the_model() -> None:
    parsed = parse("what about 32b?", PREVIOUS)
    assert parsed.query is not None
    assert parsed.query.params_b == 32 and parsed.query.model is None
    assert parsed.query.card == "rtx-4090"


def test_method_switches_to_fine_tuning() -> None:
    parsed = parse("用QLoRA呢", PREVIOUS)
    assert parsed.query is not None
    assert parsed.query.task is Task.FINETUNE and parsed.query.method is Method.QLORA
    assert not parsed.compare_methods


def test_fine_tune_without_method_compares_methods() -> None:
    parsed = parse("微调呢", PREVIOUS)
    assert parsed.query is not None
    assert parsed.query.task is Task.FINETUNE and parsed.query.method is None
    assert parsed.compare_methods


def test_inference_instead_drops_the_method() -> None:
    lora = Query(task=Task.FINETUNE, method=Method.LORA, model="llama-3-8b", card="a10g", defaulted=[])
    parsed = parse("inference instead?", lora)
    assert parsed.query is not None
    assert parsed.query.task is Task.INFERENCE and parsed.query.method is None
    assert parsed.query.model == "llama-3-8b"


def test_unsaid_task_stays_unsaid_and_said_task_stays_said() -> None:
    unsaid = Query(model="qwen2.5-14b", card="l40s", defaulted=["task"])
    parsed = parse("fp8呢", unsaid)
    assert parsed.query is not None
    assert "task" in parsed.query.defaulted
    assert parsed.query.precision is Precision.FP8
    said = parse("fp8呢", PREVIOUS)
    assert said.query is not None and "task" not in said.query.defaulted


def test_defaults_filled_by_the_answer_are_not_carried_as_said() -> None:
    answered = PREVIOUS.with_defaults()
    parsed = parse("int4呢", answered)
    assert parsed.query is not None
    assert parsed.query.batch is None and parsed.query.seq is None and parsed.query.gpus is None
    assert parsed.query.precision is Precision.INT4
    assert tuple(parsed.query.defaulted) == ()


def test_a_new_full_question_is_not_a_follow_up() -> None:
    parsed = parse("llama 3 70b on 8 h100", PREVIOUS)
    assert not parsed.follow_up
    assert parsed.query is not None
    assert parsed.query.model == "llama-3-70b" and parsed.query.gpus == 8


def test_a_new_model_with_a_follow_up_word_keeps_the_card() -> None:
    parsed = parse("那qwen2.5 14b呢", PREVIOUS)
    assert parsed.follow_up
    assert parsed.query is not None
    assert parsed.query.model == "qwen2.5-14b" and parsed.query.card == "rtx-4090"


def test_card_facts_stay_card_facts_in_a_chat() -> None:
    parsed = parse("4090显存多大", PREVIOUS)
    assert parsed.intent is Intent.CARD_INFO
    assert not parsed.follow_up


def test_plan_follow_up() -> None:
    parsed = parse("最便宜的卡呢", Query(task=Task.INFERENCE, model="qwen2.5-14b", defaulted=[]))
    assert parsed.intent is Intent.PLAN
    assert parsed.follow_up
    assert parsed.query is not None and parsed.query.model == "qwen2.5-14b"


def test_without_previous_a_bare_change_asks_for_the_model() -> None:
    parsed = parse("换成H100呢")
    assert parsed.intent in (Intent.CLARIFY, Intent.CARD_INFO)
    parsed = parse("int4呢")
    assert parsed.intent is Intent.CLARIFY and parsed.clarify == "model"
    assert parsed.query is not None and parsed.query.precision is Precision.INT4


def test_a_network_alone_moves_the_cluster_to_it() -> None:
    """'what about with InfiniBand?' after an Ethernet cluster: the same job over IB, with no speed carried
    over from the Ethernet; a speed said with it ('400G IB') is the network's, not a card of 400 GB."""
    cluster = parse("pretrain llama 3.1 8b on 2x8 H100 over 100G ethernet, 10B tokens").query
    assert cluster is not None
    assert (cluster.network, cluster.network_gbit_s) == ("ethernet", 100.0)
    follow_ups = (("what about with InfiniBand?", None), ("那换成ib呢", None), ("what about 400G IB?", 400.0))
    for text, speed in follow_ups:
        parsed = parse(text, cluster)
        assert parsed.intent is Intent.FIT, text
        assert parsed.query is not None
        query = parsed.query
        assert (query.card, query.gpus, query.card_memory_bytes) == ("h100-sxm", 16, None), text
        assert (query.network, query.network_gbit_s) == ("infiniband", speed), text


def test_a_new_question_starting_with_yong_is_not_a_follow_up() -> None:
    """'用两张3090跑…' is how new Chinese questions begin: it must not inherit the last job's 50 streams."""
    previous = parse("serve qwen2.5-7b for 50 concurrent users on a 4090").query
    assert previous is not None and previous.batch == 50
    parsed = parse("用两张3090跑ollama qwen2.5 72b q4，内存128g", previous)
    assert not parsed.follow_up
    assert parsed.query is not None
    assert parsed.query.model == "qwen2.5-72b" and parsed.query.batch is None
    short = parse("用qwen2.5 14b", previous)  # a short one still changes only the model
    assert short.follow_up
    assert short.query is not None and short.query.batch == 50
