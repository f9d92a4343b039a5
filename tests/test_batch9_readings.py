"""What the ninth answer corpus (tests/corpus/answers_batch9.toml) found gpufit misreading or answering wrong,
each checked with sibling phrasings so the rule is tested, not the one sentence that exposed it."""

from __future__ import annotations

from typing import Any

import pytest

from core.parser import parse
from core.parser.normalize import normalize
from core.query import Offload


def _query(text: str) -> dict[str, Any]:
    parsed = parse(text)
    assert parsed.query is not None, text
    return parsed.query.model_dump(exclude_none=True)


# -- the full-width comma separates clauses; digit groups belong to numbers, never to names -----------------
@pytest.mark.parametrize(
    ("text", "card", "seq"),
    [
        ("用 vllm 部署 glm-4.5-air fp8 两张 h20，128k 上下文行吗", "h20", 131072),
        ("2x h20,128k context glm-4.5-air", "h20", 131072),
        ("两张h20，32k上下文 glm-4.5-air", "h20", 32768),
    ],
)
def test_a_card_before_a_comma_keeps_its_digits(text: str, card: str, seq: int) -> None:
    q = _query(text)
    assert q["card"] == card and q["seq"] == seq


@pytest.mark.parametrize(
    ("text", "grouped"), [("$1,500", "$1500"), ("20,000元", "20000元"), ("1,000,000", "1000000")]
)
def test_thousands_are_still_one_number(text: str, grouped: str) -> None:
    assert grouped in normalize(text)


# -- a name the registry lists with a precision suffix keeps the precision said ------------------------------
@pytest.mark.parametrize(
    ("text", "model"),
    [
        ("glm-4.6 fp8 4张h200 够不够", "glm-4.6"),
        ("GLM-4.5-FP8 on 4 h200", "glm-4.5"),
        ("llama-4-maverick-17b-128e-instruct-fp8 on 8x h100", "llama-4-maverick-17b-128e"),
    ],
)
def test_fp8_after_a_model_name_is_the_precision(text: str, model: str) -> None:
    q = _query(text)
    assert q["model"] == model and q["precision"] == "fp8"


# -- traffic said as daily users × turns, or per minute / hour ---------------------------------------------
@pytest.mark.parametrize(
    ("text", "per_s"),
    [
        ("日活1万，每人一天聊10轮，用 qwen3-8b，一张4090扛得住吗", 10_000 * 10 / 86_400),
        ("DAU 5000, each sends 20 messages a day, qwen3-8b on a 4090", 5000 * 20 / 86_400),
        ("每分钟大概600个请求 平均输出500token qwen3-30b-a3b 用h20要几张", 10.0),
        ("600 requests per minute on llama 3.1 8b l40s", 10.0),
        ("每小时3600次调用 qwen3-8b 4090", 1.0),
    ],
)
def test_traffic_over_other_spans(text: str, per_s: float) -> None:
    q = _query(text)
    assert q["requests_per_s"] == pytest.approx(per_s)
    assert "epochs" not in q  # '聊10轮' is turns of a chat, not training epochs


# -- prices a billing question states are compared, not replaced by the price list's -------------------------
@pytest.mark.parametrize(
    ("text", "hourly", "monthly"),
    [
        ("3090 包月950一个月，按量1.58一小时，我每天跑20小时 哪个划算", 1.58, 950.0),
        (
            "monthly H100 rental is ~$1,500 vs $2.5/h on-demand; I use it about 12h a day, which one?",
            2.5,
            1500.0,
        ),
        ("a100 hourly $1.2, monthly $700, 15 hours a day", 1.2, 700.0),
    ],
)
def test_stated_prices_are_read(text: str, hourly: float, monthly: float) -> None:
    q = _query(text)
    assert q["stated_hourly_price"] == hourly and q["stated_monthly_price"] == monthly
    assert "budget" not in q  # a price of the offer, not the user's money


@pytest.mark.parametrize(
    "text",
    [
        "autodl 4090 包月还是按量 每天24小时跑 连续跑一个月",
        "4090 包月还是按量划算？一天只用4小时",
        "包月 3个月 4090 划算吗 每天10小时",
    ],
)
def test_counts_and_hours_are_no_prices(text: str) -> None:
    q = _query(text)
    assert "stated_hourly_price" not in q and "stated_monthly_price" not in q


def test_the_stated_prices_decide_the_billing() -> None:
    from core.billing import billing_for

    query = parse("3090 包月950一个月，按量1.58一小时，我每天跑20小时 哪个划算").query
    assert query is not None
    advice = billing_for(query.model_copy(update={"currency": "CNY"})).advice
    assert advice is not None
    assert advice.break_even_hours_per_day == pytest.approx(950 / (30 * 1.58), abs=0.05)
    stated = {o.kind: o for o in advice.options if o.stated}
    assert stated["monthly"].price == 950 and stated["on-demand"].price == 1.58
    assert advice.best.kind == "on-demand"  # 20 h × 30 × 1.58 = 948 < 950


# -- another model of the family is not the plain one --------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("qwen3-omni-30b-a3b 单卡4090 bf16 能跑吗", "qwen3-omni-30b-a3b"),
        ("qwen2-audio-7b on a 4090", "qwen2-audio-7b"),
        ("LongCat-Flash-Chat (560B MoE) in FP8 on 8x H200?", "LongCat-Flash-Chat"),
    ],
)
def test_a_name_the_registry_lacks_is_named_not_swapped(text: str, named: str) -> None:
    parsed = parse(text)
    assert parsed.unknown_model == named
    assert parsed.query is not None and parsed.query.model is None


@pytest.mark.parametrize(
    ("text", "model"), [("qwen3-vl-30b-a3b on h100", "qwen3-vl-30b-a3b"), ("qwen3 30b a3b", "qwen3-30b-a3b")]
)
def test_the_registry_variants_still_resolve(text: str, model: str) -> None:
    assert _query(text)["model"] == model


def test_a_hyphenated_phrase_is_no_model_name() -> None:
    assert parse("a state-of-the-art 7b on a 4090").unknown_model is None


# -- the network said by its speed ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "gbit"),
    [
        ("2 nodes × 4 L40S over 25GbE, LoRA Qwen2.5-32B", 25.0),
        ("2 nodes x 8 h100 100gbe full finetune llama 3.1 8b", 100.0),
    ],
)
def test_gbe_is_ethernet_at_its_speed(text: str, gbit: float) -> None:
    q = _query(text)
    assert q["network"] == "ethernet" and q["network_gbit_s"] == gbit and q["nodes"] == 2


# -- '--n-cpu-moe' without its count: the plan picks it ------------------------------------------------------
def test_n_cpu_moe_without_a_count_fills_the_card_first() -> None:
    q = _query("llama.cpp 4060 8GB 16GB RAM qwen3-30b-a3b Q4_K_M with --n-cpu-moe")
    assert "offload" not in q
    assert _query("llama.cpp gpt-oss-120b on a 4090 --n-cpu-moe 36")["offload"] == Offload.EXPERTS
    assert _query("gpt-oss-120b llama.cpp -ot exps=CPU on a 3090")["offload"] == Offload.EXPERTS


# -- answers: the cluster a fit names, a total budget over the days said ----------------------------------
def _answer(text: str) -> dict[str, Any]:
    from bot.answer import answer

    data: dict[str, Any] = answer(text).to_json()["answer"]
    return data


def test_a_fit_on_named_nodes_says_the_cluster_and_its_network() -> None:
    a = _answer("4台机器 每台4张4090 万兆网 能训 qwen2.5-14b 全参吗")
    c = a["cluster"]
    assert (c["gpus"], c["nodes"], c["gpus_per_node"]) == (16, 4, 4)
    assert c["between_nodes"] == "ethernet" and c["network_gbit_s"] == 10 and c["hours"] is None
    assert "10 Gb/s" in a["text"] and "4 台" in a["text"]
    english = _answer("2 nodes × 4 L40S over 25GbE, LoRA Qwen2.5-32B — does it fit?")
    assert "Cluster: 8 × GPUs = 2 nodes × 4" in english["text"] and "25 Gb/s" in english["text"]


def test_one_node_without_data_is_no_cluster() -> None:
    assert _answer("8卡a100 80g 全参微调 qwen2.5-7b 够吗").get("cluster") is None


def test_a_total_budget_is_held_to_the_days_the_run_takes() -> None:
    budget = _answer("总预算2万块，想lora微调 qwen2.5-72b 大概跑两天，够吗")["budget"]
    assert budget["within"] is True and 0 < budget["cost"] <= 20000
    short = _answer("总预算500块，想lora微调 qwen2.5-72b 大概跑两天，够吗")["budget"]
    assert short["within"] is False


def test_a_total_budget_without_the_run_length_is_not_judged() -> None:
    budget = _answer("预算5000元 lora微调 qwen2.5-72b")["budget"]
    assert budget["within"] is None
