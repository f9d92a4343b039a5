"""Answer-quality follow-ups, each held through the answer service (`gpufit ask --json`'s path) in both
languages: what the answer says and the figure it says it with."""

from __future__ import annotations

from typing import Any

from test_answer_corpus import ask_json

from core.units import GIB


def answer_of(text: str) -> dict[str, Any]:
    data, _, _ = ask_json(text, None)
    answer: dict[str, Any] = data["answer"]
    return answer


# --- LMDeploy's KV cache is a share of what the weights leave, not of the card --------------------------
def test_lmdeploy_kv_cache_takes_its_share_of_the_memory_the_weights_leave() -> None:
    """TurboMind's cache_max_entry_count (0.8 since v0.2.1) is "the percentage of FREE GPU memory to be
    reserved for the k/v cache" (lmdeploy/messages.py TurbomindEngineConfig): Qwen2.5-72B AWQ with TP 2 on
    two 4090s loads ≈22.8 GiB a card and gives 0.8 of the ≈1.2 GiB left to the KV cache, so it runs with a
    short context (it was answered 0.7 GiB short under vLLM's 0.9 share of the whole card)."""
    for text, words in (
        (
            "lmdeploy 跑 qwen2.5-72b awq 两张4090 tp2 行不行",
            "剩下显存的 80% 给 KV cache：cache_max_entry_count",
        ),
        (
            "serve qwen2.5-72b awq with lmdeploy on 2x 4090 tp 2",
            "gives its KV cache 80% of the memory the weights and buffers leave: cache_max_entry_count",
        ),
    ):
        answer = answer_of(text)
        assert answer["runtime"] == "lmdeploy"
        assert answer["verdict"] in ("fits", "tight"), text
        serving = answer["serving"]
        assert serving["kv_share_of_free"] == 0.8
        verdict = next(v for v in answer["verdicts"] if v["count"] == 2)
        card = 24_564 * 2**20  # nvidia-smi's 24,564 MiB
        fixed = verdict["need_bytes"] - serving["kv_bytes_per_sequence"]
        assert abs(verdict["capacity_bytes"] - (fixed + 0.8 * (card - fixed))) < 2
        assert abs(serving["kv_pool_bytes"] - 0.8 * (card - fixed)) < 2
        held = serving["kv_pool_bytes"] // serving["kv_bytes_per_sequence"]
        assert serving["max_concurrent_sequences"] == held
        assert words in answer["text"], answer["text"]


def test_lmdeploy_share_said_in_the_question_is_the_one_used() -> None:
    answer = answer_of("lmdeploy qwen2.5-72b awq on 2x 4090 --cache-max-entry-count 0.5")
    assert answer["serving"]["kv_share_of_free"] == 0.5
    assert "50% of the memory the weights and buffers leave" in answer["text"]
    assert 0.5 * GIB < answer["serving"]["kv_pool_bytes"] < 0.7 * GIB  # half of the ≈1.3 GiB left


# --- a comparison holds the job fixed across cards --------------------------------------------------------
def test_serving_compared_at_the_same_concurrency_on_every_card() -> None:
    """Serving with no number of users said: vLLM on each card runs as many sequences as its KV pool holds
    (12 of Llama 3.1 70B on 2 × A100 80GB, 47 on 2 × H20), and tokens/s at 12 against tokens/s at 47 is not
    the same job. Every card is measured at the most all of them hold, said in the answer, with what the
    bigger pool could hold beside it."""
    for text, said in (
        ("A100 80GB vs H20 for serving Llama 3.1 70B", "Each serves 12 sequences at once"),
        ("A100 80GB和H20部署llama3.1 70b哪个好", "每种配置都按同时 12 路算"),
    ):
        answer = answer_of(text)
        compare = answer["compare"]
        assert compare["concurrency"] == 12, text
        rows = {row["card"]: row for row in compare["rows"]}
        assert rows["h20"]["holds"] == 47 and rows["a100-80gb-sxm"]["holds"] == 12
        assert said in answer["text"], answer["text"]
        assert ("47" in answer["text"]) and ("KV" in answer["text"])


def test_users_said_are_the_job_compared() -> None:
    """With the users said the job is already fixed: no concurrency of the comparison's own."""
    answer = answer_of("A100 80GB vs H20 for serving Llama 3.1 70B to 30 users")
    assert answer["compare"]["concurrency"] is None
    assert all(row["holds"] is None for row in answer["compare"]["rows"])


# --- a card given only by its size gets the fixes a listed card gets --------------------------------------
def test_a_card_given_by_its_size_gets_what_to_do_instead() -> None:
    """ "my 16GB GPU" had no "what would make it fit": the fixes need a catalogue card. They are tried on the
    size said (the slowest consumer card of that size lending its features and speed, as the answer's own
    speed does), the same list a listed 16 GB card gets; more of the user's cards are named by their size."""
    listed = answer_of("can I fully fine-tune qwen2.5 7b on a 4060 ti 16gb?")
    for text, more in (
        ("can I fully fine-tune qwen2.5 7b on my 16GB GPU?", "16× 16 GB cards"),
        ("我的16g显卡能全参微调qwen2.5 7b吗", "16 张 16 GB 的卡"),
    ):
        answer = answer_of(text)
        assert answer["verdict"] == "no"
        kinds = [fix["kind"] for fix in answer["fixes"]]
        assert kinds == [fix["kind"] for fix in listed["fixes"]], (kinds, text)
        assert "qlora" in kinds and "bigger_card" in kinds
        more_cards = next(fix for fix in answer["fixes"] if fix["kind"] == "more_cards")
        assert more_cards["card"] == "16gb" and more_cards.get("cost_per_hour") is None
        assert more in answer["text"] and "16gb" not in answer["text"], answer["text"]


def test_an_unlisted_card_gets_fixes_without_a_speed_it_cannot_know() -> None:
    answer = answer_of("can I run qwen2.5 14b on my radeon 7900 xtx 24gb?")
    assert answer["verdict"] == "no"
    kinds = [fix["kind"] for fix in answer["fixes"]]
    assert "int4" in kinds and "more_cards" in kinds
    own = [fix for fix in answer["fixes"] if fix["kind"] != "bigger_card"]
    assert all(fix["speed_ratio"] is None for fix in own)


def test_a_vision_job_on_a_card_given_by_its_size_names_the_size() -> None:
    for text, words in (
        ("flux dev on a 16gb card?", "on a 16 GB card"),
        ("sdxl on a 8gb card", "on an 8 GB card"),
        ("我的12G显卡能跑flux dev吗", "12 GB 的卡"),
    ):
        answer = answer_of(text)
        assert words in answer["text"] and "gb:" not in answer["text"].lower(), answer["text"]
        assert "16gb" not in answer["text"] and "12gb" not in answer["text"]


# --- a day's traffic is sized for its busy hours -----------------------------------------------------------
def test_daily_traffic_is_sized_for_the_busy_hours() -> None:
    """100,000 requests a day average 1.16/s, but 80% of a day's requests come in 20% of its hours (the
    80/20 capacity rule, data/jobs.toml [traffic]): the busy hours run at 4× the average, and the concurrency,
    the generation needed and the cards are sized for them, said as an assumption."""
    for text, said in (
        ("how many 4090s to serve qwen2.5-7b for 100k requests a day", "≈4.6/s in the busy hours"),
        ("日活1万，每人一天聊10轮，qwen2.5-7b 用4090要几张", "高峰时段约每秒 4.6 个"),
    ):
        answer = answer_of(text)
        traffic = answer["traffic"]
        assert abs(traffic["requests_per_s"] - 100_000 / 86_400) < 0.01  # the average, as said
        assert traffic["peak_factor"] == 4.0
        assert abs(traffic["peak_requests_per_s"] - 4 * 100_000 / 86_400) < 0.01
        assert abs(traffic["output_tokens_per_s"] - traffic["peak_requests_per_s"] * 300) < 1
        assert said in answer["text"] and ("80/20" in answer["text"] or "二八原则" in answer["text"])


def test_a_rate_said_per_second_has_no_peak_factor() -> None:
    answer = answer_of("10 requests per second, 500 tokens out, serve qwen2.5-7b on a 4090, how many cards?")
    assert answer["traffic"]["requests_per_s"] == 10
    assert answer["traffic"]["peak_factor"] is None
    assert "80/20" not in answer["text"]
