"""Settings of Hub lookups, read from the environment by the bot and the command line (never by core)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_ENDPOINT = "https://huggingface.co"
MODELSCOPE_ENDPOINT = "https://modelscope.cn"


def default_cache_dir(env: Mapping[str, str]) -> Path:
    """The user's cache directory (XDG_CACHE_HOME, else ~/.cache) / gpufit / hub."""
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpufit" / "hub"


@dataclass(frozen=True)
class HubSettings:
    """HF_ENDPOINT (a mirror: https://hf-mirror.com), HF_TOKEN (gated repos), HF_HUB_OFFLINE, timeouts."""

    endpoint: str = DEFAULT_ENDPOINT
    token: str | None = field(default=None, repr=False)
    offline: bool = False
    timeout_s: float = 4.0
    modelscope_endpoint: str = MODELSCOPE_ENDPOINT
    hf_cache_dir: Path | None = None  # None: huggingface_hub's own (HF_HOME)
    stale_after_days: int = 7

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> HubSettings:
        env = os.environ if env is None else env
        offline = env.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
        timeout = env.get("GPUFIT_HUB_TIMEOUT", "")
        return cls(
            endpoint=(env.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"),
            token=env.get("HF_TOKEN") or env.get("HUGGING_FACE_HUB_TOKEN") or None,
            offline=offline,
            timeout_s=float(timeout) if timeout.replace(".", "", 1).isdigit() else 4.0,
            modelscope_endpoint=(env.get("MODELSCOPE_ENDPOINT") or MODELSCOPE_ENDPOINT).rstrip("/"),
        )
