"""A loopback stand-in for the Hugging Face Hub's HTTP API (and ModelScope's file API), for lookup tests.

Serves what `huggingface_hub` asks for, from the recorded files under tests/fixtures/hub/<org>/<name>/:
`GET /api/models/{repo}` (model_info: id, sha, gated, the safetensors parameter summary from
model_info.json when recorded), `HEAD/GET /{repo}/resolve/{revision}/config.json` (with the X-Repo-Commit and
ETag headers the client requires), `GET /api/models?search=` (list_models), and ModelScope's
`GET /api/v1/models/{repo}/repo?FilePath=config.json`. Errors are the Hub's: 404 + `X-Error-Code:
RepoNotFound`, 403 + `X-Error-Code: GatedRepo` for gated repos without the right token. Repos listed in
`slow` answer after `delay_s` (timeouts); repos listed in `held` set `arrived` and answer only once `release`
is set (a request the test knows is in flight); `down` answers every search with 503 (which the client
retries). Every request is recorded (path, headers) for assertions.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

FIXTURES = Path(__file__).parent / "fixtures" / "hub"

# The deadline tests give a lookup they expect to succeed. A lookup's timeout is wall-clock (bot/hub/lookup.py
# per call, and 2.5x that for the whole fetch), and on a machine busy with other work a loopback answer can
# take seconds: with the bot's few-second deadline such a test measured the machine's load, not the code
# (tests/test_answer_service.py::test_a_hub_question_is_parsed_once got a "timeout" answer under load). A
# lookup that answers returns at once whatever the deadline; the timeout tests set their own (slow repos).
ANSWERING_TIMEOUT_S = 30.0


@dataclass
class HubState:
    gated: dict[str, str] = field(default_factory=dict)  # repo -> token that has access
    slow: set[str] = field(default_factory=set)
    delay_s: float = 3.0
    modelscope_down: bool = False
    held: set[str] = field(default_factory=set)
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    down: bool = False
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)

    def repos(self) -> list[str]:
        return sorted(
            "/".join(p.parent.relative_to(FIXTURES).parts) for p in FIXTURES.glob("*/*/config.json")
        )


def _commit(repo: str) -> str:
    return hashlib.sha1(repo.encode()).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    # -- plumbing ----------------------------------------------------------------------------------------
    def _send(
        self, status: int, body: bytes, headers: dict[str, str] | None = None, head: bool = False
    ) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _error(self, status: int, code: str, message: str, head: bool = False) -> None:
        body = json.dumps({"error": message}).encode()
        self._send(status, body, {"X-Error-Code": code, "X-Error-Message": message}, head)

    def _route(self, head: bool) -> None:
        state = self.server.state
        url = urlparse(self.path)
        state.requests.append((self.command, self.path, dict(self.headers.items())))
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        if parts[:3] == ["api", "v1", "models"] and len(parts) >= 6:
            self._modelscope("/".join(parts[3:5]), parse_qs(url.query))
            return
        if parts[:2] == ["api", "models"] and len(parts) == 2:
            self._search(parse_qs(url.query).get("search", [""])[0])
            return
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            repo = "/".join(parts[2:4])
            self._model_info(repo)
            return
        if len(parts) >= 5 and parts[2] == "resolve":
            repo = "/".join(parts[:2])
            self._resolve(repo, "/".join(parts[4:]), head)
            return
        self._error(404, "EntryNotFound", "no such route", head)

    def _slow(self, repo: str) -> None:
        state = self.server.state
        if repo in state.slow:
            time.sleep(state.delay_s)
        if repo in state.held:
            state.arrived.set()
            state.release.wait(30)

    # -- endpoints -----------------------------------------------------------------------------------------
    def _model_info(self, repo: str) -> None:
        self._slow(repo)
        folder = FIXTURES / repo
        if not (folder / "config.json").exists():
            self._error(404, "RepoNotFound", "Repository not found")
            return
        info: dict[str, Any] = {"id": repo, "modelId": repo, "sha": _commit(repo), "private": False}
        info["gated"] = "manual" if repo in self.server.state.gated else False
        recorded = folder / "model_info.json"
        if recorded.exists():
            info |= json.loads(recorded.read_text())
        self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"})

    def _resolve(self, repo: str, filename: str, head: bool) -> None:
        self._slow(repo)
        state = self.server.state
        path = FIXTURES / repo / filename
        if not (FIXTURES / repo / "config.json").exists():
            self._error(404, "RepoNotFound", "Repository not found", head)
            return
        if repo in state.gated:
            auth = self.headers.get("Authorization", "")
            if auth != f"Bearer {state.gated[repo]}":
                self._error(
                    403, "GatedRepo", "Access to model is restricted. You must have access to it.", head
                )
                return
        if not path.exists() or filename == "model_info.json":
            self._error(404, "EntryNotFound", "Entry not found", head)
            return
        body = path.read_bytes()
        etag = '"' + hashlib.sha1(body).hexdigest() + '"'
        headers = {"ETag": etag, "X-Repo-Commit": _commit(repo), "Content-Type": "application/json"}
        self._send(200, body, headers, head)

    def _search(self, text: str) -> None:
        if self.server.state.down:
            self._error(503, "ServiceUnavailable", "down for maintenance")
            return
        hits = [{"id": r, "modelId": r} for r in self.server.state.repos() if text.lower() in r.lower()]
        self._send(200, json.dumps(hits).encode(), {"Content-Type": "application/json"})

    def _modelscope(self, repo: str, query: dict[str, list[str]]) -> None:
        if self.server.state.modelscope_down:
            self._send(502, b"Bad Gateway")
            return
        path = FIXTURES / repo / query.get("FilePath", ["config.json"])[0]
        if not path.exists():
            body = json.dumps({"Code": 10010205001, "Message": "model not found", "Success": False})
            self._send(404, body.encode(), {"Content-Type": "application/json"})
            return
        self._send(200, path.read_bytes(), {"Content-Type": "application/json"})

    def do_GET(self) -> None:
        self._route(head=False)

    def do_HEAD(self) -> None:
        self._route(head=True)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: HubState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class HubServer:
    """Start with `with HubServer() as hub:`; `hub.url` is the endpoint, `hub.state` the knobs and the log."""

    def __init__(self, state: HubState | None = None) -> None:
        self.state = state or HubState()
        self._server = _Server(self.state)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> HubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
