"""The answer-quality gaps closed through the parser, advisor and templates, held through the real
Application (loopback Bot API stand-in over HTTP) where they are chat behaviours: nodes said apart from the
cards in each, the network echoed as said, a card the catalogue lacks named with its memory (and dropped when
a catalogue card is named next). The corpus (tests/corpus/answers_quality.toml) holds the JSON facts."""

from __future__ import annotations

from botapi_server import ANN, LI, BotHarness

from core.parser import parse


def test_nodes_said_apart_from_the_cards_in_each() -> None:
    """'8卡4090 两台' is 2 machines of 8 (16 cards), not 8; a total said as such stays the total; '共两台'
    counts the machines; a card count beside one card ('4090 2台') is still 2 cards."""
    for text, gpus, nodes in (
        ("8卡4090 万兆网 两台 预训练1b模型 100B token 要多久", 16, 2),
        ("8张4090 两台机器 训练1b", 16, 2),
        ("每台8张4090，共两台机器，预训练1b", 16, 2),
        ("8卡H100 三台 预训练7b 1T token", 24, 3),
        ("two 8x4090 servers over 10GbE, pretrain a 1b model", 16, 2),
        ("8 H100s per node, 2 nodes, pretrain 7b", 16, 2),
        ("two 8-GPU H100 nodes, pretrain 7b", 16, 2),
        ("16 H100 across 2 nodes, pretrain 7b", 16, 2),
        ("两台机器共16张卡 h100 预训练7b", 16, 2),
        ("4090 2台", 2, None),
    ):
        query = parse(text).query
        assert query is not None, text
        assert (query.gpus, query.nodes) == (gpus, nodes), text


def test_ethernet_speeds_as_typed() -> None:
    for text, gbit in (
        ("2台8卡4090 万兆网", 10.0),
        ("2台8卡4090 千兆网", 1.0),
        ("2 nodes x 8 H100, 25GbE", 25.0),
    ):
        query = parse(text + " 预训练1b 100B token").query
        assert query is not None and query.network == "ethernet" and query.network_gbit_s == gbit, text


async def test_a_stated_network_is_echoed_as_said(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(
        ANN, ANN, "2 nodes x 8 H100 with InfiniBand, pretrain llama 7b on 1T tokens"
    )
    assert "Between nodes: InfiniBand, as you said" in reply.text, reply.text
    assert "InfiniBand between nodes (the published MFU" not in reply.text
    [zh] = await running_bot.say(LI, LI, "8卡4090 万兆网 两台 预训练1b模型 100B token 要多久")
    assert "16 张卡 = 2 台" in zh.text, zh.text
    assert "机间网络：以太网（按你说的），每台 10 Gb/s" in zh.text, zh.text


async def test_an_unlisted_card_with_its_memory_then_a_catalogue_card(running_bot: BotHarness) -> None:
    [first] = await running_bot.say(LI, LI, "rtx 5060 ti 16g 能跑 qwen2.5 7b 吗")
    assert "“rtx 5060 ti”（16 GB）" in first.text, first.text
    assert "目录里没有“rtx 5060 ti”：这里按你给的 16 GB 显存计算" in first.text
    assert "5070" not in first.text and "4060" not in first.text  # no card swapped in
    [second] = await running_bot.say(LI, LI, "那4090呢")
    assert "RTX 4090" in second.text and "rtx 5060 ti" not in second.text, second.text
    [en] = await running_bot.say(ANN, ANN, "can I run llama 3.1 8b in 4-bit on an rtx 5060 ti 16gb?")
    assert "fits on “rtx 5060 ti” (16 GB)" in en.text, en.text
    assert "Its speed and price are unknown to me" in en.text
