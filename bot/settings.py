"""Every setting of gpufit, read in one place (pydantic-settings): the environment, then `.env`, then
defaults. A real environment variable wins over the same name in `.env`; an empty one counts as unset.

- TELEGRAM_BOT_TOKEN (required for the bot, not for the console); TELEGRAM_API_URL (a self-hosted Bot API
  server; default the official one)
- GPUFIT_DB: the SQLite file, by default under the user's data directory (the bot and the console share it)
- GPUFIT_PRICES: an operator's own price file, same schema as data/prices.toml
- GPUFIT_RETENTION_DAYS: how long sessions and checklists are kept (default 30)
- GPUFIT_THROTTLE_BURST / GPUFIT_THROTTLE_RATE: per-user flood limit, messages at once then per second (8, 1)
- GPUFIT_WEBHOOK_URL / GPUFIT_WEBHOOK_SECRET / GPUFIT_WEBHOOK_LISTEN / GPUFIT_WEBHOOK_PORT: webhook mode
- GPUFIT_LOG_LEVEL

core/ never reads any of this: the outer layer hands core what it needs (`apply_to_core`).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from core.cost import price_book_problem, use_price_file

OFFICIAL_API_URL = "https://api.telegram.org"
_TOKEN = re.compile(r"^\d{3,}:[A-Za-z0-9_-]{20,}$")
# telegram.constants.WebhookLimit.MAX_SECRET_TOKEN_LENGTH (tests/test_render.py holds them equal), written out
# so that every `gpufit` command does not import python-telegram-bot to read its settings.
_MAX_SECRET = 256
_SECRET = re.compile(rf"^[A-Za-z0-9_-]{{1,{_MAX_SECRET}}}$")
_VARIABLE_PREFIXES = ("gpufit_", "telegram_")


class SettingsError(ValueError):
    """Settings that cannot start the bot; `str()` is one line for the user."""


def default_db_path() -> Path:
    """The per-user data directory the platform expects (XDG on Linux)."""
    if sys.platform == "win32":
        root = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        root = Path.home() / "Library" / "Application Support"
    else:
        root = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return root / "gpufit" / "gpufit.sqlite3"


class Settings(BaseSettings):
    """Everything the bot and the console need to start; the token never appears in `repr()` or logs.

    Fields are named for the code; `validation_alias` is the variable people set. Built directly (tests, the
    console's stand-in) it takes the keyword arguments; `load_settings` adds the environment and `.env`.
    """

    model_config = SettingsConfigDict(
        frozen=True,
        extra="ignore",
        populate_by_name=True,
        env_ignore_empty=True,
        env_file=None,
        env_file_encoding="utf-8",
    )

    token: SecretStr | None = Field(default=None, validation_alias="TELEGRAM_BOT_TOKEN")
    api_url: str = Field(default=OFFICIAL_API_URL, validation_alias="TELEGRAM_API_URL")
    db_path: Path = Field(default_factory=default_db_path, validation_alias="GPUFIT_DB")
    prices_path: Path | None = Field(default=None, validation_alias="GPUFIT_PRICES")
    webhook_url: str | None = Field(default=None, validation_alias="GPUFIT_WEBHOOK_URL")
    webhook_secret: SecretStr | None = Field(default=None, validation_alias="GPUFIT_WEBHOOK_SECRET")
    webhook_listen: str = Field(default="0.0.0.0", validation_alias="GPUFIT_WEBHOOK_LISTEN")
    webhook_port: int = Field(default=8443, ge=1, le=65535, validation_alias="GPUFIT_WEBHOOK_PORT")
    log_level: str = Field(default="INFO", validation_alias="GPUFIT_LOG_LEVEL")
    retention_days: int = Field(default=30, ge=1, le=3650, validation_alias="GPUFIT_RETENTION_DAYS")
    throttle_burst: int = Field(default=8, ge=1, le=1_000_000, validation_alias="GPUFIT_THROTTLE_BURST")
    throttle_rate: float = Field(default=1.0, gt=0, le=1_000_000, validation_alias="GPUFIT_THROTTLE_RATE")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Command-line flags (passed as keywords) win, then the environment, then `.env`; of those two only
        GPUFIT_* and TELEGRAM_* names count (a field's own name, `token` or `db_path`, is no setting)."""
        for source in (env_settings, dotenv_settings):
            if isinstance(source, EnvSettingsSource):
                source.env_vars = {
                    name: value
                    for name, value in source.env_vars.items()
                    if name.lower().startswith(_VARIABLE_PREFIXES)
                }
        return (init_settings, env_settings, dotenv_settings)

    @field_validator("token")
    @classmethod
    def _token_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
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
    def token_value(self) -> str:
        """The token for PTB; raises SettingsError when none is configured (the console needs none)."""
        if self.token is None:
            raise SettingsError(
                "TELEGRAM_BOT_TOKEN is not set: get a token from @BotFather and put it in the environment or "
                "in .env (or run `gpufit chat` to try the bot offline)."
            )
        return self.token.get_secret_value()

    @property
    def base_url(self) -> str:
        """PTB's base_url: `<api>/bot` (PTB appends the token)."""
        return self.api_url if self.api_url.endswith("/bot") else f"{self.api_url}/bot"

    @property
    def base_file_url(self) -> str:
        root = self.api_url.removesuffix("/bot")
        return f"{root}/file/bot"


# For error messages: the field a validation error names, as the user set it.
_FLAG_NAMES = {"webhook_url": "--webhook-url", "webhook_secret": "--webhook-secret"}


def load_settings(
    *,
    dotenv: Path | None = None,
    require_token: bool = True,
    webhook_url: str | None = None,
    webhook_secret: str | None = None,
) -> Settings:
    """Settings from the environment and `.env` (default: the one in the working directory); command-line
    webhook flags win. Raises SettingsError with one line naming the variable."""
    flags: dict[str, Any] = {}
    if webhook_url:
        flags["webhook_url"] = webhook_url
    if webhook_secret:
        flags["webhook_secret"] = webhook_secret
    env_file = dotenv if dotenv is not None else Path.cwd() / ".env"
    try:
        settings = Settings(_env_file=env_file, **flags)
    except ValidationError as err:
        first = err.errors()[0]
        where = str(first["loc"][0]) if first["loc"] else "settings"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise SettingsError(f"{_FLAG_NAMES.get(where, where)} {message}") from None
    if require_token:
        settings.token_value  # noqa: B018 (raises SettingsError when missing)
    return settings


def apply_to_core(settings: Settings) -> str | None:
    """Hand core the settings it uses (it reads no environment): the price file in force. Returns one line
    saying why the price file cannot be used (answers then carry no prices and say so), or None."""
    use_price_file(settings.prices_path)
    problem = price_book_problem()
    if problem is None:
        return None
    where = f"GPUFIT_PRICES={settings.prices_path}" if settings.prices_path else "data/prices.toml"
    return f"{where}: {problem}; answering without prices"


def ensure_db_path(settings: Settings) -> None:
    """The SQLite file's folder exists (made if need be) and the file can be opened for writing; else one
    line naming GPUFIT_DB (raised as SettingsError before the bot or the console starts)."""
    path = settings.db_path
    try:
        if path.is_dir():
            raise SettingsError(
                f"GPUFIT_DB={path} is a folder; give a file path, e.g. {path / 'gpufit.sqlite3'}"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab"):
            pass
    except OSError as error:
        reason = error.strerror or str(error)
        raise SettingsError(
            f"GPUFIT_DB={path} cannot be written ({reason}); set it to a writable file"
        ) from None
