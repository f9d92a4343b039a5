"""Card catalog and model registry: coverage, names as people type them, parameter counts."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from core.catalog import load_catalog
from core.registry import load_registry
from core.units import GIB

CATALOG = load_catalog()
REGISTRY = load_registry()
REFERENCE = Path(__file__).resolve().parent / "fixtures" / "reference_cards.csv"  # where from: its header


def _reference_rows() -> list[dict[str, str]]:
    with open(REFERENCE, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


def test_catalog_has_every_reference_variant_with_its_memory_and_bandwidth() -> None:
    rows = _reference_rows()
    assert len(rows) == 53
    ids = {row["id"] for row in rows}
    assert ids <= set(CATALOG.by_id), ids - set(CATALOG.by_id)
    assert "rtx-4060-ti-16gb" in CATALOG.by_id
    differ = [
        (row["id"], CATALOG.by_id[row["id"]].memory_gib, row["memory_gb"], row["bandwidth_gbps"])
        for row in rows
        if CATALOG.by_id[row["id"]].memory_gib != float(row["memory_gb"])
        or CATALOG.by_id[row["id"]].bandwidth_gb_s != float(row["bandwidth_gbps"])
    ]
    assert not differ, differ


def test_every_card_has_source_capacity_and_bandwidth() -> None:
    for card in CATALOG.cards:
        assert card.source and card.memory_bytes > 0 and card.bandwidth_gb_s > 0, card.id


@pytest.mark.parametrize(
    ("typed", "card_id"),
    [
        ("4090", "rtx-4090"),
        ("RTX4090", "rtx-4090"),
        ("4090D", "rtx-4090d"),
        ("4090 24G", "rtx-4090"),
        ("a100 80g", "a100-80gb-sxm"),
        ("A100-80GB", "a100-80gb-sxm"),
        ("H800", "h800-sxm"),
        ("910B", "ascend-910b3"),
        ("昇腾910B", "ascend-910b3"),
        ("英伟达A100", "a100-80gb-sxm"),
        ("h20", "h20"),
    ],
)
def test_card_aliases(typed: str, card_id: str) -> None:
    match = CATALOG.resolve(typed)
    assert match is not None and match.card.id == card_id


def test_ambiguous_name_says_which_variants_it_could_mean() -> None:
    match = CATALOG.resolve("A100")
    assert match is not None
    assert match.card.id == "a100-80gb-sxm"
    assert "a100-40gb-sxm" in match.ambiguous


def test_capacity_is_gib() -> None:
    assert CATALOG.get("rtx-4090").memory_bytes == 24564 * 1024**2
    assert CATALOG.with_memory(24 * GIB)[0].memory_gib == 24


def test_registry_has_sixty_models_with_every_family() -> None:
    assert len(REGISTRY.models) >= 60
    families = {m.family for m in REGISTRY.models}
    for family in (
        "llama",
        "qwen",
        "mistral",
        "gemma",
        "phi",
        "yi",
        "baichuan",
        "glm",
        "internlm",
        "deepseek",
    ):
        assert family in families, family
    for family in ("gpt-oss", "falcon", "bloom", "opt", "bert", "t5"):
        assert family in families, family


@pytest.mark.parametrize("model", REGISTRY.models, ids=[m.id for m in REGISTRY.models])
def test_parameter_count_from_architecture_matches_published(model) -> None:  # type: ignore[no-untyped-def]
    assert abs(model.total_params / 1e9 / model.params_b - 1) < 0.035, (model.total_params, model.params_b)


@pytest.mark.parametrize(
    ("typed", "model_id"),
    [
        ("llama2 13b", "llama-2-13b"),
        ("Llama-3-70B-Instruct", "llama-3-70b"),
        ("qwen2.5 72b", "qwen2.5-72b"),
        ("mixtral 8x7b", "mixtral-8x7b"),
    ],
)
def test_model_names_as_people_write_them(typed: str, model_id: str) -> None:
    match = REGISTRY.resolve(typed)
    assert match is not None and match.model.id == model_id


def test_moe_counts_every_expert_for_memory_and_active_ones_for_compute() -> None:
    mixtral = REGISTRY.get("mixtral-8x7b")
    assert 46e9 < mixtral.total_params < 47.5e9
    assert 12.5e9 < mixtral.active_params < 13.2e9


def test_mla_parameter_count_deepseek_v3() -> None:
    v3 = REGISTRY.get("deepseek-v3")
    assert 660e9 < v3.total_params < 690e9
    assert 36e9 < v3.active_params < 39e9


@pytest.mark.parametrize("size", [0.5, 1.0, 7.0, 13.0, 34.0, 65.0, 100.0, 405.0])
def test_bare_size_gets_a_representative_dense_shape(size: float) -> None:
    shape = REGISTRY.representative(size)
    assert shape.representative and not shape.is_moe
    assert abs(shape.total_params / 1e9 / size - 1) < 0.15
