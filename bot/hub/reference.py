"""A model reference as users paste it: `org/name`, a huggingface.co / hf-mirror.com or modelscope.cn URL."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Site = Literal["hf", "modelscope"]

# Repo ids as the Hub allows them: letters, digits, '-', '_', '.', one '/' between owner and name.
_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}"
_REPO = rf"(?P<repo>{_NAME}/{_NAME})"
_HF_URL = re.compile(
    rf"https?://(?P<host>(?:www\.)?(?:huggingface\.co|hf\.co|hf-mirror\.com))/(?:models/)?{_REPO}(?:[/?#]\S*)?",
    re.IGNORECASE,
)
_MS_URL = re.compile(rf"https?://(?:www\.)?modelscope\.cn/models/{_REPO}(?:[/?#]\S*)?", re.IGNORECASE)
_BARE = re.compile(rf"(?<![\w./:-]){_REPO}(?![\w/-])")
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
        if not _NOT_REPOS.match(repo) and re.search(r"[A-Za-z]", repo.split("/")[0]):
            return HubRef("hf", repo)
    return None


def _clean(repo: str) -> str:
    return repo.rstrip(".").removesuffix(".git")
