"""The bot's settings, from the environment or a `.env` file, validated once at start.

Environment variables: TELEGRAM_BOT_TOKEN (required for the bot), TELEGRAM_API_URL (a self-hosted Bot API
server; default the official one), GPUFIT_DB (SQLite path; default under the user's data directory),
GPUFIT_WEBHOOK_URL / GPUFIT_WEBHOOK_SECRET / GPUFIT_WEBHOOK_LISTEN / GPUFIT_WEBHOOK_PORT (webhook mode),
GPUFIT_LOG_LEVEL, GPUFIT_RETENTION_DAYS (how long sessions and checklists are kept; default 30),
GPUFIT_THROTTLE_BURST / GPUFIT_THROTTLE_RATE (per-user flood limit: messages at once, then per second;
default 8 and 1). A real environment variable wins over the same name in `.env`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from telegram.constants import WebhookLimit

OFFICIAL_API_URL = "https://api.telegram.org"
_TOKEN = re.compile(r"^\d{3,}:[A-Za-z0-9_-]{20,}$")
_MAX_SECRET = int(WebhookLimit.MAX_SECRET_TOKEN_LENGTH)
_SECRET = re.compile(rf"^[A-Za-z0-9_-]{{1,{_MAX_SECRET}}}$")


class SettingsError(ValueError):
    """Settings that cannot start the bot; `str()` is one line for the user."""


class Settings(BaseModel):
    """Everything the bot needs to start; the token never appears in `repr()` or logs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    token: SecretStr
    api_url: str = OFFICIAL_API_URL
    db_path: Path = Field(default_factory=lambda: default_db_path())  # noqa: PLW0108 (defined below)
    webhook_url: str | None = None
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "0.0.0.0"
    webhook_port: int = Field(default=8443, ge=1, le=65535)
    log_level: str = "INFO"
    retention_days: int = Field(default=30, ge=1, le=3650)
    throttle_burst: int = Field(default=8, ge=1, le=1_000_000)
    throttle_rate: float = Field(default=1.0, gt=0, le=1_000_000)

    @field_validator("token")
    @classmethod
    def _token_shape(cls, value: SecretStr) -> SecretStr:
        if not _TOKEN.match(value.get_secret_value().strip()):
            raise ValueError(
                "does not look like a bot token (expected <digits>:<35 letters>, from @BotFather)"
            )
        return SecretStr(value.get_secret_value().strip())

    @field_validator("api_url")
    @classmethod
    def _api_url_shape(cls, value: str) -> str:
        if not re.match(r"^https?://[^\s/]+", value.strip()):
            raise ValueError("must be an http(s) URL, e.g. http://localhost:8081")
        return value.strip().rstrip("/")

    @field_validator("webhook_url")
    @classmethod
    def _webhook_https(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("https://"):
            raise ValueError("Telegram only calls https:// webhook URLs")
        return value

    @field_validator("webhook_secret")
    @classmethod
    def _secret_chars(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _SECRET.match(value.get_secret_value()):
            raise ValueError(f"must be 1-{_MAX_SECRET} characters of A-Z, a-z, 0-9, _ and -")
        return value

    @field_validator("log_level")
    @classmethod
    def _level_name(cls, value: str) -> str:
        level = value.strip().upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError("must be DEBUG, INFO, WARNING, ERROR or CRITICAL")
        return level

    @property
    def base_url(self) -> str:
        """PTB's base_url: `<api>/bot` (PTB appends the token)."""
        return self.api_url if self.api_url.endswith("/bot") else f"{self.api_url}/bot"

    @property
    def base_file_url(self) -> str:
        root = self.api_url.removesuffix("/bot")
        return f"{root}/file/bot"


def default_db_path() -> Path:
    """The per-user data directory the platform expects (XDG on Linux)."""
    if sys.platform == "win32":
        root = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        root = Path.home() / "Library" / "Application Support"
    else:
        root = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return root / "gpufit" / "gpufit.sqlite3"


def read_dotenv(path: Path) -> dict[str, str]:
    """KEY=VALUE lines (optional `export`, quotes, comments); a missing file is empty."""
    values: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, IsADirectoryError, PermissionError, UnicodeDecodeError):
        return values
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].strip()
        values[key.strip()] = value
    return values


def _environment(env: Mapping[str, str] | None, dotenv: Path | None) -> dict[str, str]:
    merged = read_dotenv(dotenv if dotenv is not None else Path.cwd() / ".env")
    merged.update(os.environ if env is None else env)
    return {k: v for k, v in merged.items() if v != ""}


def load_settings(
    env: Mapping[str, str] | None = None,
    *,
    dotenv: Path | None = None,
    webhook_url: str | None = None,
    webhook_secret: str | None = None,
) -> Settings:
    """Settings from the environment and `.env`; command-line webhook flags win. Raises SettingsError."""
    values = _environment(env, dotenv)
    token = values.get("TELEGRAM_BOT_TOKEN")
    if not token:
        raise SettingsError(
            "TELEGRAM_BOT_TOKEN is not set: get a token from @BotFather and put it in the environment or in "
            ".env (or run `gpufit chat` to try the bot offline)."
        )
    fields: dict[str, object] = {"token": token}
    for name, key in (
        ("api_url", "TELEGRAM_API_URL"),
        ("db_path", "GPUFIT_DB"),
        ("webhook_url", "GPUFIT_WEBHOOK_URL"),
        ("webhook_secret", "GPUFIT_WEBHOOK_SECRET"),
        ("webhook_listen", "GPUFIT_WEBHOOK_LISTEN"),
        ("webhook_port", "GPUFIT_WEBHOOK_PORT"),
        ("log_level", "GPUFIT_LOG_LEVEL"),
        ("retention_days", "GPUFIT_RETENTION_DAYS"),
        ("throttle_burst", "GPUFIT_THROTTLE_BURST"),
        ("throttle_rate", "GPUFIT_THROTTLE_RATE"),
    ):
        if key in values:
            fields[name] = values[key]
    if webhook_url:
        fields["webhook_url"] = webhook_url
    if webhook_secret:
        fields["webhook_secret"] = webhook_secret
    try:
        return Settings.model_validate(fields)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "settings"
        names = {
            "token": "TELEGRAM_BOT_TOKEN",
            "api_url": "TELEGRAM_API_URL",
            "db_path": "GPUFIT_DB",
            "webhook_url": "--webhook-url",
            "webhook_secret": "--webhook-secret",
            "webhook_port": "GPUFIT_WEBHOOK_PORT",
            "log_level": "GPUFIT_LOG_LEVEL",
            "retention_days": "GPUFIT_RETENTION_DAYS",
            "throttle_burst": "GPUFIT_THROTTLE_BURST",
            "throttle_rate": "GPUFIT_THROTTLE_RATE",
        }
        message = str(first["msg"]).removeprefix("Value error, ")
        raise SettingsError(f"{names.get(where, where)} {message}") from None


def token_configured(env: Mapping[str, str] | None = None, *, dotenv: Path | None = None) -> bool:
    """Whether a bot token is set (environment or .env): `gpufit start` runs the bot, else the console."""
    return bool(_environment(env, dotenv).get("TELEGRAM_BOT_TOKEN", "").strip())
