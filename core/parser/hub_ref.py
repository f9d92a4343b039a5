"""A model reference as users paste it: `org/name`, a huggingface.co / hf-mirror.com or modelscope.cn URL."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from core.regex_screen import gated

Site = Literal["hf", "modelscope"]

# Repo ids as the Hub allows them: letters, digits, '-', '_', '.', one '/' between owner and name.
_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}"
_REPO = rf"(?P<repo>{_NAME}/{_NAME})"
_HF_URL = gated(
    rf"https?://(?P<host>(?:www\.)?(?:huggingface\.co|hf\.co|hf-mirror\.com))/(?:models/)?{_REPO}(?:[/?#]\S*)?",
    re.IGNORECASE,
)
_MS_URL = gated(rf"https?://(?:www\.)?modelscope\.cn/models/{_REPO}(?:[/?#]\S*)?", re.IGNORECASE)
_BARE = gated(rf"(?<![\w./:-]){_REPO}(?![\w/-])")
_FILE = re.compile(
    r"\.(?:jsonl?|txt|csv|tsv|parquet|py|ipynb|ya?ml|md|sh|bin|pt|pth|safetensors|gguf|zip|tar|gz)$", re.I
)
_FAMILY_VERSION = re.compile(r"^[A-Za-z]+-?\d+(?:\.\d+)?$")
# Not model ids even though they look like owner/name.
_NOT_REPOS = re.compile(r"^(?:\d+/\d+|[a-z]+/(?:s|h|sec|hour|day|month|月|天|小时))$", re.IGNORECASE)


@dataclass(frozen=True)
class HubRef:
    """Where a model lives: the site, its repo id, and the endpoint a URL named (a mirror), if any."""

    site: Site
    repo_id: str
    endpoint: str | None = None

    @property
    def key(self) -> str:
        return f"{self.site}:{self.repo_id}"


def find_reference(text: str) -> HubRef | None:
    """The first Hub id or model URL in `text` (None when there is none)."""
    url = _HF_URL.search(text)
    if url:
        host = url.group("host").lower().removeprefix("www.")
        endpoint = "https://hf-mirror.com" if host == "hf-mirror.com" else None
        return HubRef("hf", _clean(url.group("repo")), endpoint)
    scope = _MS_URL.search(text)
    if scope:
        return HubRef("modelscope", _clean(scope.group("repo")))
    for bare in _BARE.finditer(text):
        repo = _clean(bare.group("repo"))
        if _looks_like_repo(repo):
            return HubRef("hf", repo)
    return None


def _looks_like_repo(repo: str) -> bool:
    """'Qwen/Qwen3-8B' yes; 'a100/h100', 'fp16/bf16', 'lora/qlora', '2/4' no (cards, formats, words)."""
    from core.catalog import load_catalog
    from core.query import Precision

    owner, name = repo.split("/", 1)
    if _NOT_REPOS.match(repo) or not re.search(r"[A-Za-z]", owner):
        return False
    if not re.search(r"\d|-|\.", name) or not re.search(r"[A-Za-z]", name):
        return False  # model repo names carry a size, a version or a dash
    if _FILE.search(name):
        return False  # 'data/train.jsonl': a path, not a repo
    if _FAMILY_VERSION.match(owner) and _FAMILY_VERSION.match(name):
        return False  # 'llama3/qwen2.5': two models side by side
    formats = {p.value for p in Precision}
    if owner.lower() in formats or name.lower() in formats:
        return False
    catalog = load_catalog()
    return catalog.resolve(owner) is None and catalog.resolve(name) is None


def _clean(repo: str) -> str:
    return repo.rstrip(".").removesuffix(".git")
