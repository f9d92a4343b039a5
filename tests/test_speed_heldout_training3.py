"""Training speed against a third held-out set (data/measured/speed_heldout_training3.csv, sources in
speed_heldout_training3_sources.toml): 20 training figures from three sources in none of data/measured's other
tables (MosaicML's llm-foundry MPT throughput tables on H100 and A100; torchtitan's async-TP benchmark on 64 and
256 H100; Trainy's torchtitan run on 32 and 64 H200), recorded before gpufit's predictions for them were looked at.
"""

from __future__ import annotations

from core.speed.published import (
    TABLES,
    TRAINING_HELD_OUT_3_TABLE,
    load_published,
    load_sources,
)

TABLE = TRAINING_HELD_OUT_3_TABLE


def test_the_third_training_held_out_table_is_sourced_new_and_never_fitted() -> None:
    figures = load_published(TABLE)
    sources = load_sources(TABLE)
    assert len(figures) >= 15
    for figure in figures:
        assert figure.is_training, figure.id
        assert figure.status == "held_out", figure.id
        assert figure.source in sources, figure.id
        assert figure.published > 0
    for source in sources.values():
        assert source.url.startswith("http") and source.date and source.setup and source.framework
    for other in TABLES:
        if other == TABLE:
            continue
        assert not set(load_sources(other)) & set(sources), f"a source of {TABLE} is also in {other}"
        assert not {f.id for f in load_published(other)} & {f.id for f in figures}
