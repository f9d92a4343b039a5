"""The suite never touches the user's home (issue 20): huggingface_hub's cache, gpufit's Hub cache, its
database and HOME itself all point into the suite's temporary sandbox, set before huggingface_hub was
imported (tests/conftest.py); the session ends by checking that nothing was written into HOME."""

from __future__ import annotations

import os
from pathlib import Path

import conftest
from huggingface_hub import constants

from bot.hub.settings import default_cache_dir
from bot.settings import default_db_path


def _inside_sandbox(path: str | Path) -> bool:
    return Path(path).resolve().is_relative_to(conftest.SANDBOX.resolve())


def test_every_per_user_place_is_in_the_sandbox() -> None:
    assert Path.home() == conftest.FAKE_HOME
    assert _inside_sandbox(constants.HF_HUB_CACHE), constants.HF_HUB_CACHE  # read at import: set before it
    assert _inside_sandbox(constants.HF_HOME)
    assert _inside_sandbox(default_cache_dir(os.environ))
    assert _inside_sandbox(default_db_path())
