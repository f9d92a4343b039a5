"""ModelScope (modelscope.cn) through its own file API: the `modelscope` client is heavy, one GET suffices.

`GET {endpoint}/api/v1/models/{owner}/{name}/repo?Revision=master&FilePath=config.json` returns the file's
bytes (what modelscope's snapshot_download requests). ModelScope has no parameter counts by dtype.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


class ModelScopeError(RuntimeError):
    """ModelScope did not answer with the file (down, unreachable from here, or no such model)."""


class ModelScopeNotFound(ModelScopeError):  # noqa: N818 (a kind of ModelScopeError, named for the answer)
    """ModelScope answered: no such model or file."""


def fetch_config(endpoint: str, repo_id: str, timeout_s: float) -> dict[str, Any]:
    query = urllib.parse.urlencode({"Revision": "master", "FilePath": "config.json"})
    url = f"{endpoint.rstrip('/')}/api/v1/models/{urllib.parse.quote(repo_id)}/repo?{query}"
    request = urllib.request.Request(url, headers={"User-Agent": "gpufit"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read(2_000_000)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise ModelScopeNotFound(repo_id) from exc
        raise ModelScopeError(f"HTTP {exc.code}") from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise ModelScopeError(str(exc)) from exc
    try:
        config = json.loads(body)
    except ValueError as exc:
        raise ModelScopeError("not JSON") from exc
    if not isinstance(config, dict) or ("Code" in config and "model_type" not in config):
        raise ModelScopeNotFound(repo_id)  # the API's JSON error envelope
    return config
