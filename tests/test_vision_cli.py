"""`gpufit vision`: the vision estimate from flags, as text or JSON with the fit answer's keys."""

from __future__ import annotations

import json

import pytest

from bot.cli import main


def test_vision_json_has_the_fit_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vision", "sdxl", "--card", "4090", "--batch", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("kind", "verdict", "breakdown", "total_bytes", "speed", "cards_needed"):
        assert key in data
    assert data["job"]["batch"] == 4 and data["job"]["card"] == "rtx-4090"
    assert data["verdict"] in ("fits", "tight", "no")


def test_vision_text_starts_with_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vision", "flux.1-dev", "--card", "4090", "--precision", "fp8"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "FLUX.1 [dev]" in first and "4090" in first


def test_unknown_vision_model_names_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vision", "fluxx"]) == 2
    assert "flux.1-dev" in capsys.readouterr().err
