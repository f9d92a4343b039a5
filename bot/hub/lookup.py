"""Look a model up: config.json for the architecture, the safetensors summary for exact parameter counts.

Uses `huggingface_hub` (HfApi.model_info, hf_hub_download) against the configured endpoint (the Hub or a
mirror), the token for gated repos, a timeout of a few seconds. Never runs code from a repo: config.json is
data. The result carries a core model description plus where and when its figures came from; failures are
statuses the answer words (gated, not found, timeout, offline), falling back to the cache when it has the
model.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import cache
from typing import Any, TypeVar, cast

from bot.hub.cache import CachedModel, ModelCache
from bot.hub.modelscope import ModelScopeError, ModelScopeNotFound, fetch_config
from bot.hub.reference import HubRef
from bot.hub.settings import HubSettings
from core.model_config import UnreadableConfigError, model_from_config
from core.registry import ModelArch

# huggingface_hub warns on each retry ("Retrying in 1s [Retry 1/5]") on its own stderr handler; a failed
# lookup is worded once, in the answer (templates/*/hub_lookup.j2), so only its errors are let through.
logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


# huggingface_hub builds its User-Agent with telemetry unless told not to: on the first request of a process
# it fetches a list of "AI agent harnesses" from {HF_ENDPOINT as of its import}/api/agent-harnesses (up to
# 3 s; huggingface.co even when the lookup goes to a mirror or a stand-in). That request is no lookup: it
# goes where the README's privacy section does not say, and it ran inside the lookup's deadline, so a slow
# resolver turned the first lookup of a process into a timeout. Off, as HF_HUB_DISABLE_TELEMETRY=1 sets it
# (the library reads the constant on each request).
@cache
def import_hub_client() -> None:
    """huggingface_hub (and its HTTP client) imported on the first lookup that asks the Hub, not when this
    module is: a `gpufit ask` about a model of the registry never needs them, and importing them cost about
    a quarter of its start. A long-running process imports them at its start instead (bot/warm.py), so that
    no user's answer pays for it. Telemetry off before any request (above), and the library's shared HTTP
    client replaced by one that sends each lookup's requests over the lookup's own (bot/hub/client.py)."""
    import httpx2  # noqa: F401
    import huggingface_hub.errors  # noqa: F401
    from huggingface_hub import HfApi, constants, hf_hub_download  # noqa: F401

    from bot.hub import client

    constants.HF_HUB_DISABLE_TELEMETRY = True
    client.install()  # each lookup over its own HTTP client (bot/hub/client.py)


HUB_LOOKUP_KEY = "hub_lookup"  # where the bot keeps its HubLookup in Application.bot_data


class LookupStatus(StrEnum):
    FOUND = "found"  # fetched now
    CACHED = "cached"  # from the cache (fresh, stale, or because the Hub did not answer)
    NOT_FOUND = "not_found"
    GATED = "gated"  # access refused: set HF_TOKEN (with access granted on the model page)
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"
    OFFLINE = "offline"  # HF_HUB_OFFLINE and not in the cache
    UNREADABLE = "unreadable"  # no config.json shape and no parameter count
    MODELSCOPE_UNAVAILABLE = "modelscope_unavailable"


@dataclass(frozen=True)
class LookupResult:
    status: LookupStatus
    ref: HubRef
    model: ModelArch | None = None
    source: str = ""  # the endpoint the figures came from
    fetched_at: datetime | None = None
    fallback: bool = False  # answered from the cache because the Hub did not answer


class _LookupFailedError(Exception):
    def __init__(self, status: LookupStatus) -> None:
        super().__init__(status.value)
        self.status = status


def _now() -> datetime:
    return datetime.now(UTC)


# Hub calls run here so a slow server never holds an answer longer than the deadline (the call itself is
# abandoned, not killed: its HTTP client is closed, so its next request fails at once and its thread ends).
_T = TypeVar("_T")


def _within(deadline_s: float, request_timeout_s: float, call: Callable[[], _T]) -> _T:
    """`call()` in a daemon thread, waited for at most `deadline_s` (FutureTimeout past it; its own error
    when it fails), its requests over an HTTP client of its own with `request_timeout_s` where the library
    gives none (bot/hub/client.py). Without a network huggingface_hub keeps retrying with backoff for half
    a minute: the answer does not wait for that, and neither does a one-shot `gpufit` process at exit; the
    abandoned call's client is closed, so it stops at its next try rather than retrying on (it closed the
    client every other lookup shared each time it failed to connect)."""
    from bot.hub.client import LookupCall

    outcome: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
    http = LookupCall(request_timeout_s)

    def run() -> None:
        try:
            with http:
                outcome.put((True, call()))
        except BaseException as exc:  # handed to the waiting caller
            outcome.put((False, exc))

    threading.Thread(target=run, name="hub", daemon=True).start()
    try:
        ok, value = outcome.get(timeout=deadline_s)
    except queue.Empty as exc:
        http.close()
        raise FutureTimeout from exc
    if not ok:
        raise value
    return cast(_T, value)


_DEADLINE_FACTOR = 2.5  # model_info + config.json HEAD + GET, each bounded by timeout_s


class HubLookup:
    """Models by Hub id or URL, with a cache in front; safe to call from worker threads."""

    def __init__(
        self,
        settings: HubSettings,
        cache: ModelCache | None = None,
        *,
        clock: Callable[[], datetime] = _now,
        background: bool = True,
    ) -> None:
        self.settings = settings
        self.cache = cache
        self.clock = clock
        self.background = background
        self._refreshing: set[str] = set()
        self._lock = threading.Lock()

    # -- the one public entry ----------------------------------------------------------------------------
    def lookup(self, ref: HubRef) -> LookupResult:
        cached = self.cache.get(ref.key) if self.cache else None
        if self.settings.offline:
            return self._from_cache(ref, cached) or LookupResult(LookupStatus.OFFLINE, ref)
        if cached is not None:
            if cached.age_days(self.clock()) > self.settings.stale_after_days:
                self._refresh_later(ref)
            return self._from_cache(ref, cached) or LookupResult(LookupStatus.CACHED, ref)
        return self.fetch(ref)

    def search(self, name: str) -> HubRef | None:
        """The most downloaded Hub repo whose id contains the typed name ('vicuna 13b' -> 'vicuna-13b')."""
        found = self.search_or_failure(name)
        return found if isinstance(found, HubRef) else None

    def search_or_failure(self, name: str) -> HubRef | LookupResult | None:
        """`search`, but a Hub that could not be asked says so (a LookupResult under the typed name): the
        answer then says it could not look the name up, rather than that the name is unknown."""
        if self.settings.offline:
            return None
        term = re.sub(r"\s+", "-", name.strip())
        endpoint = self.settings.endpoint
        token: str | bool = self.settings.token or False

        import_hub_client()
        import httpx2
        from huggingface_hub import HfApi
        from huggingface_hub.errors import HfHubHTTPError

        def run() -> list[str]:
            found = HfApi(endpoint=endpoint, token=token).list_models(search=term, sort="downloads", limit=1)
            return [m.id for m in found]

        try:
            ids = _within(self.settings.timeout_s, self.settings.timeout_s, run)
        except FutureTimeout:
            return LookupResult(LookupStatus.TIMEOUT, HubRef("hf", name.strip()))
        except (HfHubHTTPError, ValueError):
            return None  # the Hub answered, with an error: nothing found under that name
        except (httpx2.HTTPError, OSError):
            return LookupResult(LookupStatus.UNREACHABLE, HubRef("hf", name.strip()))
        return HubRef("hf", ids[0]) if ids else None

    def fetch(self, ref: HubRef) -> LookupResult:
        """Fetch now (no cache read); store what was found; fall back to the cache when the Hub fails."""
        try:
            try:
                timeout = self.settings.timeout_s
                model, source = _within(timeout * _DEADLINE_FACTOR, timeout, lambda: self._fetch(ref))
            except FutureTimeout as exc:
                raise _LookupFailedError(LookupStatus.TIMEOUT) from exc
        except _LookupFailedError as failure:
            cached = self.cache.get(ref.key) if self.cache else None
            if failure.status in (LookupStatus.TIMEOUT, LookupStatus.UNREACHABLE) and cached:
                hit = self._from_cache(ref, cached)
                if hit:
                    return LookupResult(
                        LookupStatus.CACHED, ref, hit.model, hit.source, hit.fetched_at, fallback=True
                    )
            return LookupResult(failure.status, ref)
        fetched_at = self.clock()
        if self.cache:
            self.cache.put(CachedModel(ref.key, model, source, fetched_at))
        return LookupResult(LookupStatus.FOUND, ref, model, source, fetched_at)

    # -- internals -------------------------------------------------------------------------------------------
    def _from_cache(self, ref: HubRef, cached: CachedModel | None) -> LookupResult | None:
        if cached is None:
            return None
        model = cached.model.model_copy(update={"origin": "cache"})
        return LookupResult(LookupStatus.CACHED, ref, model, cached.source, cached.fetched_at)

    def _refresh_later(self, ref: HubRef) -> None:
        with self._lock:
            if ref.key in self._refreshing:
                return
            self._refreshing.add(ref.key)

        def run() -> None:
            try:
                self.fetch(ref)
            finally:
                with self._lock:
                    self._refreshing.discard(ref.key)

        if self.background:
            threading.Thread(target=run, name=f"hub-refresh {ref.repo_id}", daemon=True).start()
        else:
            run()

    def _fetch(self, ref: HubRef) -> tuple[ModelArch, str]:
        if ref.site == "modelscope":
            return self._fetch_modelscope(ref)
        import_hub_client()
        import httpx2
        from huggingface_hub import HfApi, hf_hub_download
        from huggingface_hub.errors import (
            EntryNotFoundError,
            GatedRepoError,
            HfHubHTTPError,
            LocalEntryNotFoundError,
            RepositoryNotFoundError,
        )

        endpoint = (ref.endpoint or self.settings.endpoint).rstrip("/")
        token: str | bool = self.settings.token or False
        timeout = self.settings.timeout_s
        try:
            info = HfApi(endpoint=endpoint, token=token).model_info(
                ref.repo_id, timeout=timeout, expand=["safetensors", "gated", "sha"]
            )
            path = hf_hub_download(
                ref.repo_id,
                "config.json",
                endpoint=endpoint,
                token=token,
                etag_timeout=timeout,
                cache_dir=self.settings.hf_cache_dir,
            )
            with open(path, encoding="utf-8") as handle:
                config: Any = json.load(handle)
        except GatedRepoError as exc:
            raise _LookupFailedError(LookupStatus.GATED) from exc
        except RepositoryNotFoundError as exc:
            raise _LookupFailedError(LookupStatus.NOT_FOUND) from exc
        except EntryNotFoundError as exc:  # no config.json (a GGUF-only or diffusers repo)
            raise _LookupFailedError(LookupStatus.UNREADABLE) from exc
        except (httpx2.TimeoutException, TimeoutError) as exc:
            raise _LookupFailedError(LookupStatus.TIMEOUT) from exc
        except (httpx2.HTTPError, HfHubHTTPError, LocalEntryNotFoundError, OSError, ValueError) as exc:
            if _caused_by_timeout(exc):
                raise _LookupFailedError(LookupStatus.TIMEOUT) from exc
            raise _LookupFailedError(LookupStatus.UNREACHABLE) from exc
        counts = dict(info.safetensors.parameters) if info.safetensors else None
        return self._describe(ref, config, counts, endpoint)

    def _fetch_modelscope(self, ref: HubRef) -> tuple[ModelArch, str]:
        endpoint = self.settings.modelscope_endpoint
        try:
            config = fetch_config(endpoint, ref.repo_id, self.settings.timeout_s)
        except ModelScopeNotFound as exc:
            raise _LookupFailedError(LookupStatus.NOT_FOUND) from exc
        except ModelScopeError as exc:
            raise _LookupFailedError(LookupStatus.MODELSCOPE_UNAVAILABLE) from exc
        return self._describe(ref, config, None, endpoint)

    def _describe(
        self, ref: HubRef, config: Any, counts: dict[str, int] | None, endpoint: str
    ) -> tuple[ModelArch, str]:
        if not isinstance(config, dict):
            raise _LookupFailedError(LookupStatus.UNREADABLE)
        source = f"{endpoint}/{ref.repo_id}"
        try:
            model = model_from_config(
                config, repo_id=ref.repo_id, parameters_by_dtype=counts, source=source, origin="hub"
            )
        except UnreadableConfigError as exc:
            raise _LookupFailedError(LookupStatus.UNREADABLE) from exc
        return model, endpoint


def _caused_by_timeout(exc: BaseException) -> bool:
    import httpx2

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, httpx2.TimeoutException | TimeoutError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
