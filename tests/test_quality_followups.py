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
