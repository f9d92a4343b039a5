"""Logging for the bot, with the bot token redacted everywhere it could leak.

The token is part of every Bot API URL (`/bot<token>/sendMessage`), so httpx's request log, PTB's debug output
and exception texts (httpx errors quote the URL) would all print it. A filter on every root handler rewrites
the record's message, arguments and exception text; anything shaped like a token is masked too, not only ours.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

_TOKEN_SHAPE = re.compile(r"\d{3,}:[A-Za-z0-9_-]{20,}")
REDACTED = "<redacted>"


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return _TOKEN_SHAPE.sub(REDACTED, text)


def _network_errors_in_one_line(record: logging.LogRecord) -> None:
    """A Bot API that cannot be reached is one line per retry, not a 100-line traceback: a network error
    (PTB's NetworkError, TimedOut) loses its traceback and keeps its message. Other errors keep theirs."""
    from telegram.error import NetworkError

    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, NetworkError):
        try:
            message = record.getMessage()
        except Exception:
            return
        record.msg = f"{message} ({type(error).__name__}: {error})"
        record.args = None
        record.exc_info = None
        record.exc_text = None


class RedactingFilter(logging.Filter):
    """Masks secrets in a record before any handler formats it."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        _network_errors_in_one_line(record)
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: leave it to the handler's own error path
            return True
        record.msg = redact(message, self.secrets)
        record.args = None
        if record.exc_info and record.exc_info[1] is not None:
            formatted = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redact(formatted, self.secrets)
            record.exc_info = None
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
        return True


def configure_logging(level: str = "INFO", *, secrets: Iterable[str] = ()) -> RedactingFilter:
    """Root logging for `gpufit bot`: one line per record, tokens masked, httpx's per-request lines off."""
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=level)
    redacting = install_redaction(secrets)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    return redacting


def install_redaction(secrets: Iterable[str] = ()) -> RedactingFilter:
    """Add the filter to every root handler (and to the loggers that name URLs, for handlers added later)."""
    redacting = RedactingFilter(secrets)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(redacting)
    for name in ("httpx", "httpcore", "telegram", "telegram.ext", "bot"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(redacting)
    return redacting
