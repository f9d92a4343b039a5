"""Questions and `gpufit estimate --model` about models the registry lacks go through the Hub lookup (the
loopback stand-in, tests/hub_server.py) into core, and the answers say where the figures came from."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hub_server import ANSWERING_TIMEOUT_S, HubServer, HubState

from bot.answer.service import answer_looking_up
from bot.cli import main
from bot.fake_telegram import FakeTelegram
from bot.hub.cache import SqliteModelCache
from bot.hub.lookup import HubLookup
from bot.hub.settings import HubSettings
from bot.render import html_to_terminal

AWQ = "Qwen/Qwen2.5-7B-Instruct-AWQ"


@pytest.fixture
def hub() -> Iterator[HubServer]:
    with HubServer() as server:
        yield server


def lookup_for(hub: HubServer, tmp_path: Path, **kw: object) -> HubLookup:
    settings = HubSettings(
        endpoint=hub.url,
        timeout_s=ANSWERING_TIMEOUT_S,
        hf_cache_dir=tmp_path / "hf",
        **kw,  # type: ignore[arg-type]
    )
    return HubLookup(settings, SqliteModelCache(tmp_path / "bot.sqlite3"))


def test_hub_id_in_a_question_is_looked_up_and_the_answer_says_so(hub: HubServer, tmp_path: Path) -> None:
    reply = answer_looking_up(f"can a 4090 run {AWQ}?", lookup=lookup_for(hub, tmp_path), lang="en")
    assert reply.kind == "fit" and reply.query is not None
    assert reply.query.model == AWQ.lower()
    text = html_to_terminal(reply.html)
    assert "config.json" in text and hub.url in text
    assert reply.facts["model_name"] == AWQ
    source: Any = reply.facts["model_source"]
    assert source["kind"] == "hub" and source["source"].startswith(hub.url)
    built_in: Any = answer_looking_up("can a 4090 run qwen2.5 7b", lookup=None, lang="en").facts
    assert built_in["model_source"]["kind"] == "registry"
    by_size: Any = answer_looking_up("can a 4090 run vicuna 13b", lookup=None, lang="en").facts
    assert by_size["model_source"]["kind"] == "name"


def test_question_in_chinese_through_a_mirror_endpoint(hub: HubServer, tmp_path: Path) -> None:
    """HF_ENDPOINT=https://hf-mirror.com as users in China set it: here the stand-in plays the mirror."""
    reply = answer_looking_up(f"{AWQ} 用 4090 推理够吗", lookup=lookup_for(hub, tmp_path), lang="zh")
    assert reply.query is not None and reply.query.model == AWQ.lower()
    assert "结构取自它的 config.json" in html_to_terminal(reply.html)


def test_gated_model_says_set_hf_token(tmp_path: Path) -> None:
    with HubServer(HubState(gated={AWQ: "hf_granted"})) as gated:
        reply = answer_looking_up(f"can a 4090 run {AWQ}", lookup=lookup_for(gated, tmp_path), lang="en")
        lookup: Any = reply.facts["hub_lookup"]
        assert "HF_TOKEN" in reply.html and lookup["status"] == "gated"
        zh = answer_looking_up(f"{AWQ} 4090 能跑吗", lookup=lookup_for(gated, tmp_path), lang="zh")
        assert "HF_TOKEN" in zh.html


def test_unrecognised_architecture_lists_what_was_not_computed(hub: HubServer, tmp_path: Path) -> None:
    reply = answer_looking_up(
        "state-spaces/mamba-2.8b-hf inference on a T4", lookup=lookup_for(hub, tmp_path), lang="en"
    )
    text = html_to_terminal(reply.html)
    assert "architecture not recognised" in text
    assert "KV cache not computed: unrecognised architecture (mamba)" in text
    question = "state-spaces/mamba-2.8b-hf 用 T4 推理"
    zh = answer_looking_up(question, lookup=lookup_for(hub, tmp_path), lang="zh")
    assert "KV 缓存未能计算：架构未识别" in html_to_terminal(zh.html)


def test_offline_without_cache_says_so_and_with_cache_answers(hub: HubServer, tmp_path: Path) -> None:
    question = f"{AWQ} on an RTX 4090"
    offline = answer_looking_up(question, lookup=lookup_for(hub, tmp_path, offline=True), lang="en")
    assert "HF_HUB_OFFLINE" in offline.html and not hub.state.requests
    answer_looking_up(question, lookup=lookup_for(hub, tmp_path), lang="en")
    cached = answer_looking_up(question, lookup=lookup_for(hub, tmp_path, offline=True), lang="en")
    assert cached.query is not None and cached.query.model == AWQ.lower()
    assert "config.json" in html_to_terminal(cached.html)  # the provenance line, with its date


def test_a_shipped_model_typed_as_its_repo_id_needs_no_lookup(hub: HubServer, tmp_path: Path) -> None:
    reply = answer_looking_up("zai-org/GLM-4.5-Air on 4 H100", lookup=lookup_for(hub, tmp_path), lang="en")
    assert reply.query is not None and reply.query.model == "glm-4.5-air"
    assert hub.state.requests == []


def test_unknown_name_is_searched_on_the_hub(hub: HubServer, tmp_path: Path) -> None:
    ref = lookup_for(hub, tmp_path).search("mamba 2.8b")
    assert ref is not None and ref.repo_id == "state-spaces/mamba-2.8b-hf"


def test_cli_estimate_takes_a_hub_id(
    hub: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert main(["estimate", "--model", f"https://huggingface.co/{AWQ}", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    weights = (
        found["breakdown"]["weights"] if "breakdown" in found else found["memory"]["breakdown"]["weights"]
    )
    assert 4.5e9 < weights < 6.5e9  # AWQ int4 linears + fp16 embeddings, not 15 GB of bf16
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    count = len(hub.state.requests)
    assert main(["estimate", "--model", AWQ, "--json"]) == 0  # offline: from the user's cache directory
    assert len(hub.state.requests) == count


def test_cli_gradient_checkpointing_both_ways_and_lora_targets_as_shown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def run(*flags: str) -> dict:  # type: ignore[type-arg]
        argv = ["estimate", "--model", "llama-3.1-8b", "--task", "lora", "--seq", "4096", *flags, "--json"]
        assert main(argv) == 0
        return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]

    on, off = run("--grad-checkpointing"), run("--no-grad-checkpointing")
    assert on["query"]["grad_checkpointing"] is True and off["query"]["grad_checkpointing"] is False
    assert off["breakdown"]["activations"] > on["breakdown"]["activations"]
    for spelling in ("q,v", "qv", "q_proj,v_proj"):
        assert run("--lora-targets", spelling)["query"]["lora_targets"] == "q,v"
    assert run("--lora-targets", "attention")["query"]["lora_targets"] == "attention"
    with pytest.raises(SystemExit):
        main(["estimate", "--model", "llama-3.1-8b", "--lora-targets", "mlp"])


async def test_bot_looks_up_and_keeps_the_model_in_its_sqlite_store(
    hub: HubServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_telegram: FakeTelegram,
    db_path: Path,
) -> None:
    """The real Application (in-process transport): a Hub id in a chat message is looked up in a worker
    thread, answered with its provenance, and remembered in the bot's SQLite file (table hub_models)."""
    import sqlite3

    from botapi_server import ANN, InProcessBot, recording_errors

    from bot.app import build_application, running
    from bot.fake_telegram import FakeTelegramRequest
    from bot.settings import Settings

    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    fake, db = fake_telegram, db_path
    app = build_application(
        Settings(token=fake.token, db_path=db),
        request=FakeTelegramRequest(fake),
        get_updates_request=FakeTelegramRequest(fake),
    )
    errors = recording_errors(app)
    async with running(app, polling=False):
        bot = InProcessBot(app, fake, errors)
        fake.send_text(ANN, ANN, f"can a 4090 run {AWQ}?")
        await bot.process()
        reply = fake.bot_messages(ANN)[-1]
    assert "config.json" in reply.text and AWQ in reply.text
    assert errors == []
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, source FROM hub_models").fetchall()
    assert rows == [(f"hf:{AWQ}", hub.url)]


def test_models_looked_up_before_a_restart_are_known_again(hub: HubServer, tmp_path: Path) -> None:
    from bot.answer import answer_query
    from bot.answer.hub import learn_cached
    from core.query import Query
    from core.registry import load_registry

    lookup = lookup_for(hub, tmp_path)
    answer_looking_up("can a 4090 run state-spaces/mamba-2.8b-hf", lookup=lookup, lang="en")
    registry = load_registry()
    registry.by_id.pop("state-spaces/mamba-2.8b-hf")  # what a fresh process has
    assert isinstance(lookup.cache, SqliteModelCache)
    assert learn_cached(lookup.cache) >= 1
    reply = answer_query(Query(model="state-spaces/mamba-2.8b-hf", card="h100-sxm"), lang="en")
    assert reply.kind == "fit" and "architecture not recognised" in html_to_terminal(reply.html)


def test_cli_plan_takes_a_hub_id(
    hub: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert main(["plan", f"serve {AWQ} for 4 users", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["query"]["model"] == AWQ.lower() and found["plans"]
