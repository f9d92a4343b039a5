"""Looked-up models kept with their source and date: the bot's in its SQLite file, the CLI's in a directory.

A model asked about once stays known when the Hub is unreachable; entries older than the settings' limit are
answered from and refreshed in the background (lookup.py).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import Protocol

from core.registry import ModelArch


@dataclass(frozen=True)
class CachedModel:
    key: str  # 'hf:Qwen/Qwen3-8B'
    model: ModelArch
    source: str  # the endpoint the figures came from
    fetched_at: datetime

    def age_days(self, now: datetime) -> float:
        return (now - self.fetched_at).total_seconds() / 86400


class ModelCache(Protocol):
    def get(self, key: str) -> CachedModel | None: ...

    def put(self, entry: CachedModel) -> None: ...


def _encode(entry: CachedModel) -> str:
    return json.dumps(
        {
            "key": entry.key,
            "model": entry.model.model_dump(mode="json"),
            "source": entry.source,
            "fetched_at": entry.fetched_at.isoformat(),
        },
        ensure_ascii=False,
    )


def _decode(text: str) -> CachedModel | None:
    try:
        raw = json.loads(text)
        return CachedModel(
            key=raw["key"],
            model=ModelArch.model_validate(raw["model"]),
            source=raw["source"],
            fetched_at=datetime.fromisoformat(raw["fetched_at"]).astimezone(UTC),
        )
    except (ValueError, KeyError, TypeError):
        return None  # an entry an older gpufit wrote, or a damaged file: looked up again


class DirectoryCache:
    """One JSON file per model under the user's cache directory (the command line's cache)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / f"{sha256(key.encode()).hexdigest()[:32]}.json"

    def get(self, key: str) -> CachedModel | None:
        try:
            text = self._path(key).read_text(encoding="utf-8")
        except OSError:
            return None
        entry = _decode(text)
        return entry if entry and entry.key == key else None

    def put(self, entry: CachedModel) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp = self._path(entry.key).with_suffix(".tmp")
            tmp.write_text(_encode(entry), encoding="utf-8")
            tmp.replace(self._path(entry.key))
        except OSError:
            pass  # a read-only home: the lookup still answers, it is only not remembered


class SqliteModelCache:
    """A `hub_models` table in the bot's SQLite file (its own connection per call; the store runs WAL)."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=5, isolation_level=None)
        db.execute(
            "CREATE TABLE IF NOT EXISTS hub_models "
            "(key TEXT PRIMARY KEY, entry TEXT NOT NULL, source TEXT NOT NULL, fetched_at TEXT NOT NULL)"
        )
        return db

    def get(self, key: str) -> CachedModel | None:
        try:
            with closing(self._connect()) as db:
                row = db.execute("SELECT entry FROM hub_models WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        return _decode(row[0]) if row else None

    def entries(self) -> list[CachedModel]:
        """Every model looked up before (the bot teaches them to the registry when it starts, so a stored
        query or a button naming one still answers after a restart)."""
        try:
            with closing(self._connect()) as db:
                rows = db.execute("SELECT entry FROM hub_models ORDER BY key").fetchall()
        except sqlite3.Error:
            return []
        return [entry for (text,) in rows if (entry := _decode(text)) is not None]

    def put(self, entry: CachedModel) -> None:
        try:
            with closing(self._connect()) as db:
                db.execute(
                    "INSERT INTO hub_models (key, entry, source, fetched_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET entry = excluded.entry, source = excluded.source, "
                    "fetched_at = excluded.fetched_at",
                    (entry.key, _encode(entry), entry.source, entry.fetched_at.isoformat()),
                )
        except sqlite3.Error:
            pass  # the answer does not depend on remembering it
