"""'50 users' is a headcount, not fifty at once: the concurrency is the share of them using it at the same
time (data/jobs.toml [traffic] active_share, stated in the answer), while "50 concurrent", "50并发",
"同时50人" and '25 people chatting at once' are the concurrency as said."""

from __future__ import annotations

import pytest
from test_cpu_only import answer_of

from core.jobs.constants import load_job_constants


@pytest.mark.parametrize(
    ("text", "users", "words"),
    [
        ("serve qwen2.5-7b on one L40S for 50 users", 50, "50 users → ≈10 at once. Assumed: ≈20% of"),
        ("4×4090 部署 qwen2.5-72b-awq，8k，50人用", 50, "50 人使用 → 约 10 人同时在用。假设：约 20%"),
        ("部署qwen2.5-32b给100个人用 要几张L20", 100, "100 人使用 → 约 20 人同时在用"),
        ("R1 on 8xH200 for a team of 40, 32k context — ok?", 40, "40 users → ≈8 at once"),
    ],
)
def test_a_headcount_is_sized_by_the_share_at_once_and_says_so(text: str, users: int, words: str) -> None:
    share = load_job_constants().traffic.active_share
    answer = answer_of(text)
    traffic = answer["traffic"]
    assert traffic["users"] == users and traffic["active_share"] == share
    assert traffic["concurrent"] == round(users * share)
    assert traffic["concurrent_said"] is False
    assert words in answer["text"], answer["text"]


@pytest.mark.parametrize(
    ("text", "concurrent"),
    [
        ("Best GPU on AutoDL for serving a 14B model to ~50 concurrent users?", 50),
        ("50并发 首字延迟500ms以内 qwen2.5-14b 用4090要几张", 50),
        ("同时50人用 qwen2.5-14b，4090要几张", 50),
        ("20 people chatting at once with Qwen2.5-14B on one L40S, 8k context each — enough?", 20),
        ("200个用户同时在线 每人32k上下文 qwen2.5-32b 需要几张H100", 200),
    ],
)
def test_a_number_said_at_once_is_the_concurrency(text: str, concurrent: int) -> None:
    traffic = answer_of(text)["traffic"]
    assert traffic["concurrent"] == concurrent and traffic["users"] is None and traffic["concurrent_said"]


def test_the_concurrency_said_beside_a_headcount_wins() -> None:
    text = "内部知识库 200 人用，同时在线大概 30 个，qwen2.5-72b int4，8k 上下文，两张 a800 够不够"
    traffic = answer_of(text)["traffic"]
    assert traffic["concurrent"] == 30 and traffic["active_share"] is None


def test_a_follow_up_headcount_replaces_the_concurrency() -> None:
    traffic = answer_of("qwen2.5-7b 部署在4090上 8k 30并发", "那100个用户呢")["traffic"]
    assert traffic["users"] == 100 and traffic["concurrent"] == 20


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("serve qwen2.5-7b for 50 users on a 4090", "At the full headcount, all 50 at once: the engine runs"),
        ("4090 部署 qwen2.5-7b，团队50人用", "按全部人数算，50 人同时用"),
    ],
)
def test_the_answer_says_what_the_full_headcount_at_once_means(text: str, words: str) -> None:
    answer = answer_of(text)
    serving = answer["serving"]
    assert serving["headcount"] == 50 and serving["capacity_sequences"] >= serving["max_concurrent_sequences"]
    assert serving["headcount_queued"] == max(0, 50 - serving["capacity_sequences"])
    assert words in answer["text"], answer["text"]
