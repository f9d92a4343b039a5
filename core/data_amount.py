"""Training tokens from the amount of data a user gives: tokens, samples × tokens each, or a text size.

People rarely say "300M tokens"; they say "1万条数据", "50k rows of about 800 tokens, 3 epochs" or "20 GB
of Chinese text". Time and cost need tokens, so this turns each form into tokens and keeps what it
assumed (tokens per sample, epochs, bytes per token) for the answer to state.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.query import Query, Task
from core.speed import load_speed_constants

Basis = Literal["tokens", "samples", "text"]


class DataTokens(BaseModel):
    """Tokens one run processes (all epochs; for inference, the tokens generated or read), and how they were
    counted."""

    model_config = ConfigDict(frozen=True)

    tokens: float
    basis: Basis
    epochs: float
    epochs_assumed: bool
    samples: int | None = None
    sample_tokens: int | None = None
    sample_tokens_assumed: bool = False
    sample_chars: int | None = None  # the sample length as given, in Chinese characters
    text_bytes: int | None = None
    text_lang: Literal["en", "zh"] | None = None
    bytes_per_token: float | None = None


def data_tokens(query: Query) -> DataTokens | None:
    """The run's tokens, or None when the question gave no amount of data."""
    constants = load_speed_constants().data
    epochs_said = query.epochs is not None
    if query.tokens is not None:
        epochs = query.epochs or 1.0
        return DataTokens(
            tokens=query.tokens * epochs, basis="tokens", epochs=epochs, epochs_assumed=not epochs_said
        )
    if query.samples is not None:
        # A sample's length is the sequence length the user gave, else its length in Chinese characters turned
        # into tokens, else a typical instruction pair.
        said_seq = query.seq is not None and "seq" not in query.defaulted
        lengths = (query.prompt_tokens or 0) + (query.response_tokens or 0)
        if query.task is Task.INFERENCE and lengths:
            per_sample = lengths  # a batch of requests: each one's prompt and reply as the question says
            said_seq = True
        elif said_seq and query.seq:
            per_sample = query.seq
        elif query.sample_chars is not None:
            per_sample = round(
                query.sample_chars * constants.bytes_per_zh_character / constants.bytes_per_token_zh
            )
        else:
            per_sample = constants.sample_tokens
        # Training datasets are usually run for several epochs; a batch of inference requests once.
        default_epochs = constants.sample_epochs if query.task is not Task.INFERENCE else 1.0
        epochs = query.epochs or default_epochs
        return DataTokens(
            tokens=float(query.samples * per_sample * epochs),
            basis="samples",
            epochs=epochs,
            epochs_assumed=not epochs_said,
            samples=query.samples,
            sample_tokens=per_sample,
            sample_tokens_assumed=not said_seq,
            sample_chars=None if said_seq else query.sample_chars,
        )
    if query.text_bytes is not None:
        lang = query.text_lang or "en"
        per_token = constants.bytes_per_token_zh if lang == "zh" else constants.bytes_per_token_en
        epochs = query.epochs or 1.0
        return DataTokens(
            tokens=query.text_bytes / per_token * epochs,
            basis="text",
            epochs=epochs,
            epochs_assumed=not epochs_said,
            text_bytes=query.text_bytes,
            text_lang=lang,
            bytes_per_token=per_token,
        )
    return None
