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


# --- offload: a MoE layer kept in RAM costs its routed experts per token, not all of them -----------------
def test_moe_layers_in_ram_read_only_their_routed_experts() -> None:
    """-ngl 30 of Qwen3-30B-A3B's 48 layers on a 3060: the 18 layers in RAM hold 6.7 GiB, but a token reads
    their attention and 8 of 128 experts (ggml's MUL_MAT_ID multiplies only the experts picked), ≈0.6 GB at
    DDR5 speed, not the whole 6.7 GiB (it was answered 7.1 tokens/s)."""
    for text in (
        "llama.cpp -ngl 30 跑 qwen3-30b-a3b q4_k_m 3060 12g 速度",
        "llama.cpp -ngl 30 qwen3-30b-a3b q4_k_m on a 3060 12gb, how fast?",
    ):
        answer = answer_of(text)
        offload = answer["offload"]
        assert (offload["mode"], offload["gpu_layers"], offload["layers"]) == ("layers", 30, 48)
        assert offload["host_bytes"] > 6 * GIB  # what RAM holds is still the whole 18 layers
        assert 20 <= offload["decode_tokens_per_s"] <= 80, offload


def test_a_dense_model_split_by_layers_is_unchanged_by_the_moe_term() -> None:
    answer = answer_of("用 llama.cpp -ngl 30 跑 qwen2.5 32b q4_k_m 4060ti 16g")
    offload = answer["offload"]
    assert (offload["gpu_layers"], offload["layers"]) == (30, 64)
    assert 1 <= offload["decode_tokens_per_s"] <= 6  # 34 dense layers (≈10 GB) read from RAM per token


def test_ollama_before_030_split_whole_layers() -> None:
    """Ollama ≥ 0.30 runs llama-server's --fit (a MoE's experts in RAM first); before 0.30 its own scheduler
    (llm/server.go assignLayers) gave the card whole layers and kept the output layer off it, which users
    saw as ~10 tokens/s for gpt-oss-20b on a 4070 (ollama#11688). Both are said."""
    for text, said in (
        ("RTX 4070 12GB, gpt-oss-20b in Ollama?", "Ollama before 0.30 split whole layers instead"),
        ("4070 12g 用ollama跑gpt-oss-20b 速度多少", "Ollama 0.30 之前是按整层切分"),
    ):
        answer = answer_of(text)
        offload = answer["offload"]
        assert offload["mode"] == "experts"
        older = offload["layer_split"]
        assert older is not None and offload["layer_split_before"] == "0.30"
        assert older["mode"] == "layers" and older["gpu_layers"] < older["layers"] == 24
        assert older["host_bytes"] > GIB  # the output layer (201k × 2,880) and three layers
        assert older["decode_tokens_per_s"] < offload["decode_tokens_per_s"]
        assert said in answer["text"], answer["text"]


# --- traffic: copies that cannot keep up at their share run more at once -------------------------------
def test_traffic_copies_are_sized_on_what_a_loaded_copy_generates() -> None:
    """10 requests/s × 500 tokens of Qwen3-30B-A3B on H20s: a copy behind on its share queues until it runs
    as many at once as its pool holds, so copies are counted on that throughput (SGLang: ≈1,850 tokens/s a
    card at 156 at once → 3 cards, not 6 counted at the 46 the traffic would have on one card running freely),
    and the answer says how many each copy runs at the peak, at what speed per stream, together covering the
    ≈5,000 tokens/s. Under vLLM an H20 runs this model's MoE layers at SGLang's fitted costs (vLLM's own are
    fitted to DeepSeek-V3 / R1 only: data/speed.toml moe_kernels_from): 3 cards too."""
    for text, cards, said in (
        (
            "10 requests per second, ~500 output tokens each, qwen3-30b-a3b on H20 with sglang, how many?",
            3,
            "To keep up, each copy then runs ≈",
        ),
        ("每分钟大概600个请求 平均输出500token qwen3-30b-a3b 用h20要几张", 3, "高峰时每份要同时跑约"),
    ):
        answer = answer_of(text)
        needed = answer["cards_needed"]
        assert needed["count"] == cards, (text, needed)
        assert answer["traffic"]["output_tokens_per_s"] == 5000
        assert said in answer["text"], answer["text"]
