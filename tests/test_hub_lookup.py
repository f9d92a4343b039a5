"""Hub lookups against the loopback stand-in of the Hub's HTTP API (tests/hub_server.py): found, not found,
gated, timeout, a mirror endpoint, offline with and without cache, stale entries, ModelScope. No network."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hub_server import ANSWERING_TIMEOUT_S, HubServer, HubState

from bot.hub.cache import DirectoryCache, SqliteModelCache
from bot.hub.lookup import HubLookup, LookupResult, LookupStatus
from bot.hub.reference import HubRef, find_reference
from bot.hub.settings import HubSettings


@pytest.fixture
def hub() -> Iterator[HubServer]:
    with HubServer(HubState(gated={"meta-llama/Llama-4-Scout-17B-16E-Instruct": "hf_granted"})) as server:
        yield server


def settings(hub: HubServer, tmp_path: Path, **kw: object) -> HubSettings:
    base: dict[str, object] = {
        "endpoint": hub.url,
        "modelscope_endpoint": hub.url,
        "timeout_s": ANSWERING_TIMEOUT_S,
        "hf_cache_dir": tmp_path / "hf",
    }
    return HubSettings(**(base | kw))  # type: ignore[arg-type]


def ref(repo: str) -> HubRef:
    return HubRef("hf", repo)


def test_found_reads_config_and_exact_parameter_count(hub: HubServer, tmp_path: Path) -> None:
    lookup = HubLookup(settings(hub, tmp_path), DirectoryCache(tmp_path / "cache"))
    result = lookup.lookup(ref("Qwen/Qwen2.5-VL-7B-Instruct"))
    assert result.status is LookupStatus.FOUND and result.model is not None
    assert result.model.params_b == pytest.approx(8.292, abs=1e-3)  # from the safetensors summary
    assert result.model.vision_layers == 32 and result.model.origin == "hub"
    assert result.source == hub.url and result.fetched_at is not None
    paths = [path for _, path, _ in hub.state.requests]
    assert any(p.startswith("/api/models/Qwen/Qwen2.5-VL-7B-Instruct") for p in paths)
    assert any(p.endswith("/resolve/main/config.json") for p in paths)


def test_a_lookup_asks_only_the_endpoint_it_is_given(
    hub: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """huggingface_hub's telemetry fetched a list of agent harnesses from huggingface.co on a process's first
    request (inside the lookup's deadline, and to a host the privacy section does not name): it is off."""
    import socket

    from huggingface_hub.utils import _detect_agent

    monkeypatch.setattr(_detect_agent, "_registry", None)  # as in a process that has not asked yet
    resolved: list[str] = []
    real = socket.getaddrinfo

    def recording(host: str, *args: Any, **kwargs: Any) -> Any:
        resolved.append(host)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", recording)
    result = HubLookup(settings(hub, tmp_path)).lookup(ref("Qwen/Qwen2.5-VL-7B-Instruct"))
    assert result.status is LookupStatus.FOUND
    assert resolved and set(resolved) == {"127.0.0.1"}, resolved


def test_not_found(hub: HubServer, tmp_path: Path) -> None:
    result = HubLookup(settings(hub, tmp_path)).lookup(ref("nobody/no-such-model"))
    assert result.status is LookupStatus.NOT_FOUND and result.model is None


def test_gated_without_token_then_with_it(hub: HubServer, tmp_path: Path) -> None:
    repo = ref("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    refused = HubLookup(settings(hub, tmp_path)).lookup(repo)
    assert refused.status is LookupStatus.GATED
    granted = HubLookup(settings(hub, tmp_path, token="hf_granted")).lookup(repo)
    assert granted.status is LookupStatus.FOUND and granted.model is not None
    assert granted.model.experts == 16
    assert any(
        {k.lower(): v for k, v in h.items()}.get("authorization") == "Bearer hf_granted"
        for _, _, h in hub.state.requests
    )


def test_timeout_without_cache_says_so(hub: HubServer, tmp_path: Path) -> None:
    hub.state.slow.add("Qwen/Qwen2.5-VL-7B-Instruct")
    hub.state.delay_s = 2.0
    result = HubLookup(settings(hub, tmp_path, timeout_s=0.3)).lookup(ref("Qwen/Qwen2.5-VL-7B-Instruct"))
    assert result.status is LookupStatus.TIMEOUT


def test_timeout_falls_back_to_the_cache(hub: HubServer, tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path / "cache")
    repo = ref("huggyllama/llama-7b")
    assert HubLookup(settings(hub, tmp_path), cache).lookup(repo).status is LookupStatus.FOUND
    hub.state.slow.add(repo.repo_id)
    hub.state.delay_s = 2.0
    result = HubLookup(settings(hub, tmp_path, timeout_s=0.3), cache).fetch(repo)
    assert result.status is LookupStatus.CACHED and result.fallback and result.model is not None
    assert result.model.origin == "cache"


def test_a_failed_request_elsewhere_does_not_break_a_lookup_in_flight(hub: HubServer, tmp_path: Path) -> None:
    """huggingface_hub sends every request of a process through one shared HTTP client and closes it whenever
    a request fails to connect (its retry loop). Closing it tore down every other thread's request in flight:
    a lookup of a dead mirror, or a timed-out lookup still retrying in its abandoned thread, made another
    user's lookup fail as "unreachable" (a flaky test_answer_service test). Each lookup has its own."""
    import huggingface_hub

    repo = "Qwen/Qwen2.5-VL-7B-Instruct"
    hub.state.held.add(repo)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(HubLookup(settings(hub, tmp_path)).lookup, ref(repo))
        assert hub.state.arrived.wait(30), "the lookup never reached the stand-in"
        huggingface_hub.close_session()  # what a failed connect anywhere in the process does
        hub.state.release.set()
        result = pending.result(timeout=60)
    assert result.status is LookupStatus.FOUND and result.model is not None
    # still sent as huggingface_hub sends them (its request hook adds a request id to each)
    assert all("x-amzn-trace-id" in {k.lower() for k in headers} for _, _, headers in hub.state.requests)


def test_a_lookup_past_its_deadline_stops_asking(hub: HubServer, tmp_path: Path) -> None:
    """The answer stops waiting at the deadline; the call it abandoned used to go on retrying (a search of
    a Hub that answers 503, or of a dead endpoint, for 23 s of backoff), closing the shared client each time
    it failed to connect. Past the deadline its client is closed: its next try fails at once and it ends."""
    hub.state.down = True
    before = set(threading.enumerate())
    found = HubLookup(settings(hub, tmp_path, timeout_s=0.5)).search_or_failure("Zorblax-9000")
    assert isinstance(found, LookupResult) and found.status is LookupStatus.TIMEOUT
    abandoned = [t for t in threading.enumerate() if t not in before and t.name == "hub"]
    limit = time.monotonic() + 30
    while any(t.is_alive() for t in abandoned) and time.monotonic() < limit:
        time.sleep(0.05)
    assert not any(t.is_alive() for t in abandoned), "the abandoned search is still retrying"
    searches = [path for _, path, _ in hub.state.requests if path.startswith("/api/models?")]
    assert len(searches) == 1, searches


def test_mirror_endpoint_from_settings_and_from_a_url(hub: HubServer, tmp_path: Path) -> None:
    with HubServer() as mirror:
        lookup = HubLookup(settings(hub, tmp_path, endpoint=mirror.url))
        result = lookup.lookup(ref("huggyllama/llama-7b"))
        assert result.status is LookupStatus.FOUND and result.source == mirror.url
        assert mirror.state.requests and not hub.state.requests  # HF_ENDPOINT honoured
    pasted = find_reference("能跑 https://hf-mirror.com/Qwen/Qwen3-8B 吗")
    assert pasted == HubRef("hf", "Qwen/Qwen3-8B", "https://hf-mirror.com")


def test_offline_answers_from_the_cache_and_never_calls_the_hub(hub: HubServer, tmp_path: Path) -> None:
    cache = SqliteModelCache(tmp_path / "bot.sqlite3")
    repo = ref("zai-org/GLM-4.5-Air")
    offline = HubLookup(settings(hub, tmp_path, offline=True), cache)
    assert offline.lookup(repo).status is LookupStatus.OFFLINE
    assert hub.state.requests == []
    HubLookup(settings(hub, tmp_path), cache).lookup(repo)
    count = len(hub.state.requests)
    result = offline.lookup(repo)
    assert result.status is LookupStatus.CACHED and result.model is not None and result.model.experts == 128
    assert len(hub.state.requests) == count


def test_stale_entry_is_answered_at_once_and_refreshed(hub: HubServer, tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path / "cache")
    repo = ref("huggyllama/llama-7b")
    then = datetime(2026, 1, 1, tzinfo=UTC)
    HubLookup(settings(hub, tmp_path), cache, clock=lambda: then).lookup(repo)
    later = then + timedelta(days=30)
    lookup = HubLookup(settings(hub, tmp_path), cache, clock=lambda: later, background=False)
    result = lookup.lookup(repo)
    assert result.status is LookupStatus.CACHED and result.fetched_at == then
    refreshed = cache.get(repo.key)
    assert refreshed is not None and refreshed.fetched_at == later


def test_unrecognised_architecture_estimates_from_the_checkpoint(hub: HubServer, tmp_path: Path) -> None:
    result = HubLookup(settings(hub, tmp_path)).lookup(ref("state-spaces/mamba-2.8b-hf"))
    assert result.status is LookupStatus.FOUND and result.model is not None
    assert not result.model.verified
    assert any(t.startswith("kv_cache: unrecognised architecture") for t in result.model.unknown_terms)


def test_modelscope_found_and_down(hub: HubServer, tmp_path: Path) -> None:
    pasted = find_reference("https://modelscope.cn/models/Qwen/Qwen3-Next-80B-A3B-Instruct/summary")
    assert pasted == HubRef("modelscope", "Qwen/Qwen3-Next-80B-A3B-Instruct")
    lookup = HubLookup(settings(hub, tmp_path))
    found = lookup.lookup(pasted)
    assert found.status is LookupStatus.FOUND and found.model is not None
    assert found.model.linear_attention_layers == 36
    assert lookup.lookup(HubRef("modelscope", "nobody/nothing")).status is LookupStatus.NOT_FOUND
    hub.state.modelscope_down = True
    assert lookup.lookup(pasted).status is LookupStatus.MODELSCOPE_UNAVAILABLE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("can a 4090 run Qwen/Qwen3-8B?", HubRef("hf", "Qwen/Qwen3-8B")),
        (
            "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/tree/main",
            HubRef("hf", "meta-llama/Llama-3.1-8B-Instruct"),
        ),
        ("deepseek-ai/DeepSeek-V3.1 on 8 H200", HubRef("hf", "deepseek-ai/DeepSeek-V3.1")),
        ("7b on 2/4 cards", None),
        ("¥3/h budget", None),
        ("compare a100/h100 for qwen2.5 7b", None),
        ("fp16/bf16 on a 4090", None),
        ("lora/qlora for llama 3 8b", None),
        ("lora on data/train.jsonl with qwen2.5 7b", None),
        ("llama3/qwen2.5 which is better on a 4090", None),
        ("BAAI/bge-m3 embeddings on a T4", HubRef("hf", "BAAI/bge-m3")),
    ],
)
def test_references_as_users_paste_them(text: str, expected: HubRef | None) -> None:
    assert find_reference(text) == expected
