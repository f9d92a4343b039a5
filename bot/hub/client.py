"""Each Hub lookup sends its requests over an HTTP client of its own, closed when the lookup ends or is
abandoned.

huggingface_hub sends every request of a process through one shared `httpx2.Client` (`get_session`) and
closes that client whenever a request fails to connect (its retry loop, `http_backoff`: "in case of SSLError
it's best to close the shared client"). Closing it tears down the connections of every other thread's
request in flight: a lookup of a dead mirror, or a timed-out lookup still retrying in the thread the answer
abandoned (bot/hub/lookup.py `_within`; a search of an unreachable Hub retries for 23 s), made another
user's healthy lookup fail as "unreachable". (It showed as tests/test_answer_service.py::
test_a_hub_question_is_parsed_once answering "which model?" after test_answer_as_asked's search of a dead
endpoint, abandoned at its 2 s deadline, went on closing the shared client.)

`install` gives huggingface_hub (through `set_client_factory`, its hook for this) a shared client that
builds requests as its default one does, then sends each over the client of the lookup running in the
calling thread (`LookupCall`): a failure anywhere closes at most the shared client, never another lookup's
connections; a lookup past its deadline has its client closed, so its next try fails at once instead of
retrying against the dead endpoint; and a request the library sends without a timeout (`list_models` takes
none) gets the lookup's, instead of waiting on a host that drops packets for as long as the OS lets it.
Requests outside a lookup go over the shared client as before.
"""

from __future__ import annotations

import contextvars
from types import TracebackType

import httpx2
from httpx2._client import UseClientDefault
from httpx2._types import AuthTypes
from huggingface_hub import set_client_factory
from huggingface_hub.utils._http import hf_request_event_hook

_CURRENT: contextvars.ContextVar[httpx2.Client | None] = contextvars.ContextVar(
    "gpufit_hub_lookup_client", default=None
)


class _PerLookupClient(httpx2.Client):
    """The client huggingface_hub shares: each request goes over the current lookup's client."""

    def send(
        self,
        request: httpx2.Request,
        *,
        stream: bool = False,
        auth: AuthTypes | UseClientDefault | None = httpx2.USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = httpx2.USE_CLIENT_DEFAULT,
    ) -> httpx2.Response:
        own = _CURRENT.get()
        if own is None:
            return super().send(request, stream=stream, auth=auth, follow_redirects=follow_redirects)
        if all(value is None for value in request.extensions.get("timeout", {}).values()):
            request.extensions = {k: v for k, v in request.extensions.items() if k != "timeout"}
        return own.send(request, stream=stream, auth=auth, follow_redirects=follow_redirects)


def _client(kind: type[httpx2.Client], timeout: float | None) -> httpx2.Client:
    """As huggingface_hub's `default_client_factory` builds its client (offline switch, request ids, the
    download counter: `hf_request_event_hook`), with a default timeout."""
    return kind(event_hooks={"request": [hf_request_event_hook]}, follow_redirects=True, timeout=timeout)


def install() -> None:
    """Make huggingface_hub's shared client the per-lookup one (once per process, before any request)."""
    set_client_factory(lambda: _client(_PerLookupClient, None))


class LookupCall:
    """The HTTP client of one lookup call: `with call:` in the thread that runs it; `close()` from the
    thread that gave up waiting (a closed client refuses the call's next request at once)."""

    def __init__(self, timeout_s: float) -> None:
        self.client = _client(httpx2.Client, timeout_s)
        self._token: contextvars.Token[httpx2.Client | None] | None = None

    def __enter__(self) -> LookupCall:
        self._token = _CURRENT.set(self.client)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
        self.close()

    def close(self) -> None:
        self.client.close()
