"""Dated GPU-hour prices (data/prices.toml, or an operator's file the outer layer names) and what a job costs.

A price answer always names whose list it came from, the provider and the date: public prices go stale in
weeks. For one card the typical price is the median on-demand row (the lower middle one, so a real provider
stands behind it); someone answered in CNY is most likely renting in China, so CNY prices come from Chinese
providers where the list has any, USD prices from the others.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from core.paths import PRICES_PATH
from core.platforms import Platform
from core.query import Currency

Billing = Literal["on-demand", "daily", "weekly", "monthly", "spot", "reserved", "serverless"]
Market = Literal["cn", "global"]

# Billing kinds in the order a typical price falls back through when a card has no on-demand row.
_BILLING_PREFERENCE: tuple[Billing, ...] = ("on-demand", "reserved", "serverless", "spot")
# Kinds sold by the term (包天 / 包周 / 包月): the term bills whether the instance runs or not, so its
# per-hour figure is a floor at full use and never a card's typical hourly price.
TERM_HOURS: dict[str, int] = {"daily": 24, "weekly": 168, "monthly": 720}
DAYS_PER_MONTH = 30
_CHINA_REGION = re.compile(r"^(china|cn-)|[\u4e00-\u9fff]", re.IGNORECASE)


class PriceBookError(ValueError):
    """The price file is missing or does not follow the schema; the message says which and where."""


class PriceMeta(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    date: dt.date
    usd_to_cny: float
    usd_to_cny_source: str = ""


class PriceRow(BaseModel):
    """One published price point. A row may give one currency; the other is converted at meta.usd_to_cny."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    card: str
    provider: str
    region: str = ""
    usd_per_hour: float | None = None
    cny_per_hour: float | None = None
    usd_per_hour_max: float | None = None
    cny_per_hour_max: float | None = None
    usd_per_term: float | None = None  # daily / weekly / monthly rows: one term's price for one card
    cny_per_term: float | None = None
    billing: Billing = "on-demand"
    platform_only: bool = False  # a doubtful quote: used only when its platform is named
    instance: str = ""
    date: dt.date
    date_precision: str = "day"
    date_text: str = ""
    source: str = ""
    confidence: str = ""
    notes: str = ""

    @model_validator(mode="before")
    @classmethod
    def _term_per_hour(cls, data: object) -> object:
        """A term row's per-hour figures at full use (term price ÷ its hours), so it ranks with the others."""
        if not isinstance(data, dict) or data.get("billing") not in TERM_HOURS:
            return data
        hours = TERM_HOURS[data["billing"]]
        filled = dict(data)
        for currency in ("usd", "cny"):
            term = data.get(f"{currency}_per_term")
            if term is not None and data.get(f"{currency}_per_hour") is None:
                filled[f"{currency}_per_hour"] = round(float(term) / hours, 4)
        return filled

    @model_validator(mode="after")
    def _one_currency(self) -> PriceRow:
        term = self.billing in TERM_HOURS
        if term and self.usd_per_term is None and self.cny_per_term is None:
            raise ValueError(
                f"{self.billing} price row for {self.card!r} ({self.provider}) "
                "has neither usd_per_term nor cny_per_term"
            )
        if not term and (self.usd_per_term is not None or self.cny_per_term is not None):
            raise ValueError(f"{self.billing} price row for {self.card!r} ({self.provider}) has a term price")
        if self.usd_per_hour is None and self.cny_per_hour is None:
            raise ValueError(
                f"price row for {self.card!r} ({self.provider}) has neither usd_per_hour nor cny_per_hour"
            )
        return self

    @property
    def market(self) -> Market:
        return "cn" if _CHINA_REGION.search(self.region) else "global"

    def per_hour(self, currency: Currency, usd_to_cny: float) -> float:
        if currency is Currency.CNY:
            return (
                self.cny_per_hour
                if self.cny_per_hour is not None
                else (self.usd_per_hour or 0.0) * usd_to_cny
            )
        return self.usd_per_hour if self.usd_per_hour is not None else (self.cny_per_hour or 0.0) / usd_to_cny

    @property
    def term_hours(self) -> int | None:
        return TERM_HOURS.get(self.billing)

    def per_term(self, currency: Currency, usd_to_cny: float) -> float | None:
        """The price of one term (day / week / month) in `currency`; None for hourly kinds."""
        if self.billing not in TERM_HOURS:
            return None
        if currency is Currency.CNY:
            if self.cny_per_term is not None:
                return self.cny_per_term
            return (self.usd_per_term or 0.0) * usd_to_cny
        if self.usd_per_term is not None:
            return self.usd_per_term
        return (self.cny_per_term or 0.0) / usd_to_cny


class CardPrice(BaseModel):
    """The typical price of one card-hour, and where it came from (say all of it next to the number)."""

    model_config = ConfigDict(frozen=True)

    card: str
    per_hour: float
    currency: Currency
    provider: str
    region: str
    billing: Billing
    date: dt.date
    date_precision: str
    source: str
    owner: str
    book_date: dt.date
    market: Market
    samples: int
    low: float
    high: float
    converted: bool
    stale: bool = False  # older than a year before the price book: shown with a warning
    stated: bool = False  # the question's own hourly price ('$2.49/h on-demand'), not the price list's


STALE_AFTER_DAYS = 365


class PriceBook:
    """All price rows by card; built once per price file."""

    def __init__(self, meta: PriceMeta, rows: list[PriceRow], path: Path) -> None:
        self.meta = meta
        self.rows = rows
        self.path = path
        self.by_card: dict[str, list[PriceRow]] = {}
        self._prices: dict[tuple[str, Currency, str | None], CardPrice | None] = {}
        for row in rows:
            self.by_card.setdefault(row.card, []).append(row)

    @property
    def owner(self) -> str:
        return self.meta.name

    def price_for(
        self, card_id: str, currency: Currency | str, platform: Platform | None = None
    ) -> CardPrice | None:
        """Median hourly price of the card's rows in the currency's market (falling back to every market),
        on-demand first; only `platform`'s rows when one is named; None when the list has no such row.
        Remembered: plans ask for every card."""
        key = (card_id, Currency(currency), platform.id if platform is not None else None)
        if key not in self._prices:
            self._prices[key] = self._price_for(card_id, Currency(currency), platform)
        return self._prices[key]

    def hourly_rows(self, card_id: str, platform: Platform | None = None) -> list[PriceRow]:
        """The card's rows billed by the hour (not by the term), only `platform`'s when one is named."""
        rows = [r for r in self.by_card.get(card_id, []) if r.billing not in TERM_HOURS]
        if platform is None:
            return [r for r in rows if not r.platform_only]
        return [r for r in rows if platform.sells(r.provider)]

    def rows_for(self, card_id: str, platform: Platform | None = None) -> list[PriceRow]:
        """Every row of the card, only `platform`'s when one is named."""
        rows = self.by_card.get(card_id, [])
        return [r for r in rows if platform.sells(r.provider)] if platform is not None else list(rows)

    def sells(self, platform: Platform, card_id: str) -> bool:
        """The price book has a row of `platform` for the card."""
        return bool(self.rows_for(card_id, platform))

    def _price_for(self, card_id: str, currency: Currency, platform: Platform | None) -> CardPrice | None:
        rows = self.hourly_rows(card_id, platform)
        if not rows:
            return None
        preferred: Market = "cn" if currency is Currency.CNY else "global"
        # a price more than a year older than the book is history, not a quote: used only when nothing newer
        fresh = [r for r in rows if not self.is_stale(r.date)] or rows
        in_market = [r for r in fresh if r.market == preferred] or fresh
        for billing in _BILLING_PREFERENCE:
            chosen = [r for r in in_market if r.billing == billing]
            if chosen:
                break
        else:  # pragma: no cover - every row has one of the billing kinds
            chosen = in_market
        rate = self.meta.usd_to_cny
        # equal prices: the newest quote stands for them
        ranked = sorted(chosen, key=lambda r: (r.per_hour(currency, rate), -r.date.toordinal()))
        median = ranked[(len(ranked) - 1) // 2]
        return self._card_price(median, currency, ranked)

    def is_stale(self, date: dt.date) -> bool:
        """More than a year older than the price book itself (rental prices move within months)."""
        return (self.meta.date - date).days > STALE_AFTER_DAYS

    def card_price(self, row: PriceRow, currency: Currency, ranked: list[PriceRow]) -> CardPrice:
        """One row as a CardPrice (its per-hour figure; `ranked` gives the range and the sample count)."""
        return self._card_price(row, currency, ranked)

    def _card_price(self, row: PriceRow, currency: Currency, ranked: list[PriceRow]) -> CardPrice:
        rate = self.meta.usd_to_cny
        native = row.cny_per_hour if currency is Currency.CNY else row.usd_per_hour
        return CardPrice(
            card=row.card,
            per_hour=round(row.per_hour(currency, rate), 4),
            currency=currency,
            provider=row.provider,
            region=row.region,
            billing=row.billing,
            date=row.date,
            date_precision=row.date_precision,
            source=row.source,
            owner=self.meta.name,
            book_date=self.meta.date,
            market=row.market,
            samples=len(ranked),
            low=round(ranked[0].per_hour(currency, rate), 4),
            high=round(ranked[-1].per_hour(currency, rate), 4),
            converted=native is None,
            stale=self.is_stale(row.date),
        )

    def stated_price(self, card_id: str, per_hour: float, currency: Currency) -> CardPrice:
        """The hourly price a question states for its card, in the shape of a listed one: a user who says
        what they pay is answered at that price, not at the list's median."""
        return CardPrice(
            card=card_id,
            per_hour=round(per_hour, 4),
            currency=currency,
            provider="",
            region="",
            billing="on-demand",
            date=self.meta.date,
            date_precision="day",
            source="stated in the question",
            owner=self.meta.name,
            book_date=self.meta.date,
            market="cn" if currency is Currency.CNY else "global",
            samples=1,
            low=round(per_hour, 4),
            high=round(per_hour, 4),
            converted=False,
            stated=True,
        )

    def same_source_prices(self, card_ids: list[str], currency: Currency) -> dict[str, CardPrice] | None:
        """Prices of several cards from one provider, billing kind and date, so that comparing them compares
        the cards and not two providers (the newest such set, in the currency's market first); None when no
        provider lists them all together."""
        preferred: Market = "cn" if currency is Currency.CNY else "global"
        groups: dict[tuple[str, str, dt.date], dict[str, PriceRow]] = {}
        for card_id in card_ids:
            for row in self.hourly_rows(card_id):
                groups.setdefault((row.provider, row.billing, row.date), {})[card_id] = row
        complete = [(key, rows) for key, rows in groups.items() if len(rows) == len(card_ids)]
        if not complete:
            return None
        _, rows = max(
            complete,
            key=lambda item: (
                all(r.market == preferred for r in item[1].values()),
                item[0][1] == "on-demand",
                item[0][2],
            ),
        )
        return {card_id: self._card_price(row, currency, [row]) for card_id, row in rows.items()}


def currency_for(currency: Currency | None, lang: str | None) -> Currency:
    """The user's own choice, else their language's: Chinese → CNY, anything else → USD."""
    if currency is not None:
        return currency
    return Currency.CNY if (lang or "").lower().startswith("zh") else Currency.USD


def _read(path: Path) -> PriceBook:
    try:
        with open(path, "rb") as handle:
            raw = tomllib.load(handle)
    except FileNotFoundError as err:
        raise PriceBookError(f"price file not found: {path}") from err
    except tomllib.TOMLDecodeError as err:
        raise PriceBookError(f"price file {path} is not valid TOML: {err}") from err
    try:
        meta = PriceMeta.model_validate(raw.get("meta", {}))
        rows = [PriceRow.model_validate(entry) for entry in raw.get("price", [])]
    except ValidationError as err:
        raise PriceBookError(f"price file {path} does not follow the schema: {err}") from err
    return PriceBook(meta, rows, path)


@cache
def _load(path: Path, mtime_ns: int) -> PriceBook:
    return _read(path)


_price_file: list[Path] = [PRICES_PATH]


def use_price_file(path: Path | None) -> None:
    """Make `path` the price list in force (None: data/prices.toml). The outer layer calls this at start with
    its setting (GPUFIT_PRICES): core reads no environment."""
    _price_file[0] = path if path is not None else PRICES_PATH


def price_file() -> Path:
    """The price file in force."""
    return _price_file[0]


def load_price_book() -> PriceBook:
    """The price list in force (`use_price_file`, else data/prices.toml), re-read when the file changes."""
    path = _price_file[0]
    try:
        mtime = path.stat().st_mtime_ns
    except OSError as err:
        raise PriceBookError(f"price file not found: {path}") from err
    return _load(path, mtime)


def price_book_problem() -> str | None:
    """Why the price file in force cannot be used (one line), or None when it can."""
    try:
        load_price_book()
    except PriceBookError as err:
        return str(err).splitlines()[0].rstrip(":")
    return None


# The book one answer started with (`answer_pricing`), held for the rest of it: a 1-tuple, empty when none.
_ANSWER_BOOK: ContextVar[tuple[PriceBook | None, ...]] = ContextVar("answer_book", default=())


def price_book_in_force() -> PriceBook | None:
    """The price book now in force, or None when the price file is unusable (answers then show no prices
    rather than fail). A new object whenever the file changes, so it is part of the cache keys of the pure
    functions that show prices. Inside `answer_pricing`, the book the answer started with."""
    pinned = _ANSWER_BOOK.get()
    if pinned:
        return pinned[0]
    try:
        return load_price_book()
    except PriceBookError:
        return None


@contextmanager
def answer_pricing(book: PriceBook | None) -> Iterator[None]:
    """One answer priced from one book: `price_book_in_force` returns `book` until the block ends (in this
    thread or task), instead of checking the price file again at each of the answer's searches (a `stat`
    each, ~5 per answer), and an answer never mixes the prices of two files when the file changes while
    it is being worked out."""
    token = _ANSWER_BOOK.set((book,))
    try:
        yield
    finally:
        _ANSWER_BOOK.reset(token)


class JobCost(BaseModel):
    """What one job costs, language or vision: per hour for all its cards, per million generated tokens (a
    language model) or per 1,000 items (images, videos, training steps, texts, 30 s audio chunks), and for a
    run."""

    model_config = ConfigDict(frozen=True)

    per_hour: float
    per_million_tokens: float | None
    per_thousand_items: float | None = None
    total: float | None
    hours: float | None
    currency: Currency
    price: CardPrice


def job_cost(
    price: CardPrice,
    gpus: int,
    *,
    tokens_per_s: float | None = None,
    items_per_hour: float | None = None,
    hours: float | None = None,
) -> JobCost:
    """Cost per hour of `gpus` cards; per million tokens at `tokens_per_s`, per 1,000 items at
    `items_per_hour`; the total for `hours`."""
    per_hour = price.per_hour * gpus
    per_million = per_hour / (tokens_per_s * 3600) * 1e6 if tokens_per_s else None
    per_thousand = per_hour / items_per_hour * 1000 if items_per_hour else None
    return JobCost(
        per_hour=round(per_hour, 4),
        per_million_tokens=round(per_million, 4) if per_million is not None else None,
        per_thousand_items=round(per_thousand, 4) if per_thousand is not None else None,
        total=round(per_hour * hours, 2) if hours is not None else None,
        hours=hours,
        currency=price.currency,
        price=price,
    )
