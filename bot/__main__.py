"""`python -m bot` / `gpufit bot`: run the Telegram bot, polling by default, webhook with --webhook-url."""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit

from telegram import Update
from telegram.error import InvalidToken, NetworkError

from bot.app import build_application
from bot.logging_setup import configure_logging, redact
from bot.settings import SettingsError, load_settings


def run_bot(webhook_url: str | None = None, webhook_secret: str | None = None) -> int:
    """Start the bot until interrupted; bad settings or a rejected token give one line, not a traceback."""
    try:
        settings = load_settings(webhook_url=webhook_url, webhook_secret=webhook_secret)
    except SettingsError as error:
        print(f"gpufit bot: {error}", file=sys.stderr)
        return 2
    token = settings.token_value
    secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else None
    if settings.webhook_url and secret is None:
        secret = secrets.token_urlsafe(32)  # set on every start, so Telegram and we always agree
    configure_logging(settings.log_level, secrets=[token, secret or ""])
    app = build_application(settings)
    try:
        if settings.webhook_url:
            app.run_webhook(
                listen=settings.webhook_listen,
                port=settings.webhook_port,
                url_path=urlsplit(settings.webhook_url).path.lstrip("/"),
                webhook_url=settings.webhook_url,
                secret_token=secret,
                allowed_updates=Update.ALL_TYPES,
            )
        else:
            app.run_polling(allowed_updates=Update.ALL_TYPES)
    except InvalidToken:
        print(
            "gpufit bot: Telegram rejected TELEGRAM_BOT_TOKEN (revoked or mistyped? check @BotFather)",
            file=sys.stderr,
        )
        return 2
    except NetworkError as error:
        print(
            f"gpufit bot: cannot reach the Bot API at {settings.api_url}: {redact(str(error), [token])}",
            file=sys.stderr,
        )
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    parser.add_argument("--webhook-url", help="public https URL Telegram posts updates to")
    parser.add_argument("--webhook-secret", help="secret token Telegram sends with each update")
    args = parser.parse_args(argv)
    return run_bot(webhook_url=args.webhook_url, webhook_secret=args.webhook_secret)


if __name__ == "__main__":
    sys.exit(main())
